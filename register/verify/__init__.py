"""register.verify: claim verification -- the judges' backends and their evaluation.

``embeddings`` loads the optional MiniLM sentence encoder (int8 ONNX, offline) that adds a semantic
similarity feature to the offline judge; ``judge_cli`` implements ``python -m register judge check``
and ``judge eval`` over PAIRS.jsonl files. The judge interface, the verdict, the judge profile, the
offline judge's decision and the metrics are pure and live in ``hri_core.judging`` and
``hri_core.offline_judge``; this package adds what needs files, models and a command line.
"""
