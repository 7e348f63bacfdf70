"""The scorer on Spark: the same SQL statement, spelled in Spark SQL, over a Parquet export of the register."""
