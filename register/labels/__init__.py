"""Labels people can trust (HRI paper section V): the versioned labelling rubric (``rubrics``), labelling
batches assigned to two or more annotators (``batches``), the blind annotator workbench (``workbench``),
each unit's readings (``units``), adjudication of disagreements into a new revision with the provenance of
every label (``adjudication``) and inter-annotator agreement (``agreement``).
"""
