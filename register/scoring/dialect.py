"""How the scorer's SQL is spelled per engine: DuckDB (the register's) and Spark SQL (``register.spark``).

Kept apart from ``register.scoring.scorer`` (which re-exports ``Dialect``, ``DUCKDB`` and ``SPARK``) so that the
scorer's module stays about scoring.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DUCKDB", "SPARK", "Dialect"]


@dataclass(frozen=True)
class Dialect:
    """The few constructs the scorer's SQL spells differently per engine; everything else is common SQL.

    ``DUCKDB`` is what the register runs (its text is the scorer's historical text, byte for byte);
    ``SPARK`` is Spark SQL (named ``:name`` parameter markers; the parity test runs Spark 4.0), used
    by ``register.spark.score_job`` on a cluster. A new construct in ``score_select`` that Spark spells
    differently goes through one of these methods (the Spark parity test fails otherwise).
    """

    name: str
    marker: str  # prefix of a named parameter (``Params(marker)``)
    types: dict[str, str] = field(default_factory=dict)  # DuckDB type name -> this engine's, when different

    def cast(self, expr: str, type_name: str) -> str:
        """``expr`` as ``type_name`` (a DuckDB type name): ``x::T`` in DuckDB, ``CAST(x AS T')`` in Spark."""
        if self.name == "duckdb":
            return f"{expr}::{type_name}"
        return f"CAST({expr} AS {self.types.get(type_name, type_name)})"

    def greatest(self, terms: list[str]) -> str:
        """The largest non-NULL of ``terms``: Spark's GREATEST needs two arguments or more."""
        if self.name == "duckdb" or len(terms) > 1:
            return f"greatest({', '.join(terms)})"
        return f"({terms[0]})"

    def epoch_us(self, expr: str) -> str:
        """Microseconds since the epoch of a timestamp."""
        return f"epoch_us({expr})" if self.name == "duckdb" else f"unix_micros({expr})"

    def item(self, array: str, position: str) -> str:
        """The element at 1-based ``position`` (DuckDB lists are 1-based; Spark's ``[]`` is 0-based and its
        ``element_at`` takes an INT position)."""
        return f"{array}[{position}]" if self.name == "duckdb" else f"element_at({array}, CAST({position} AS INT))"

    def int_div(self, left: str, right: str) -> str:
        """Integer division of two non-negative integers."""
        return f"{left} // {right}" if self.name == "duckdb" else f"{left} div {right}"

    def position0(self, array: str, value: str) -> str:
        """The 0-based position of ``value`` in ``array`` (-1 when absent): ``list_position`` in DuckDB,
        ``array_position`` (1-based, 0 when absent) in Spark."""
        if self.name == "duckdb":
            return f"list_position({array}, {value}) - 1"
        return f"array_position({array}, {value}) - 1"

    @property
    def arg_max(self) -> str:
        """The aggregate ``arg_max(value, key)``: the value of the row with the largest key."""
        return "arg_max" if self.name == "duckdb" else "max_by"


DUCKDB = Dialect("duckdb", "$")
SPARK = Dialect("spark", ":", {"TIMESTAMPTZ": "TIMESTAMP", "VARCHAR": "STRING", "DOUBLE[]": "ARRAY<DOUBLE>",
                               "VARCHAR[]": "ARRAY<STRING>"})
