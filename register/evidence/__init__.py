"""The Evidence page's figures: what the register's data says about the questions the HRI paper leaves open.

One module per panel, each a function of a ``Store`` (and the console's ``Filters``) returning a dataclass of
DataFrames, computed set-based in DuckDB; nothing here writes:

* ``correlation``: the seven dimension scores' correlation matrix over the current answers, and the pairs that
  move together (section VI: the additive score "may also hide correlations among dimensions");
* ``criticality``: the current answers rescored as the impact preview rescores them, with criticality flattened
  to 1 or shifted per claim category, and the band and action transitions (section XVI: "test the role of
  criticality weights");
* ``feedback_loops``: per scope (use case, model), the hallucination share and s_H week by week, with the
  resolutions of validated feedback marked, before and after the first one (section XVI);
* ``rag_agreement``: Spearman rank correlation of the HRI with RAGChecker's hallucination, faithfulness and claim
  recall, with seeded bootstrap intervals, and the answers where the two disagree most (section XVI).

``ranks`` holds the SQL both rank correlations are built from. Read by ``ui.features.evidence`` (the Evidence
page) and ``python -m register evidence`` (``register.cli.evidence``), which print the same figures.
"""
