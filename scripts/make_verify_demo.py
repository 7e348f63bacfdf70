"""Write ``data/verify/factcheck_questions.jsonl``: the demo's Factcheck-GPT answers as input of
``python -m register verify`` (question, answer, retrieved_context).

The retrieved context of each answer is the evidence excerpts its annotators attached to its claims (the
``span`` of each claim in ``data/demo/factcheck_gpt.jsonl``, distinct, in claim order): real evidence for
real answers, though chosen by people rather than a retriever, so linking is easier than in production.
Response ids get the prefix ``verify-`` so verifying them never revises the demo's own labelled responses.

    .venv/bin/python scripts/make_verify_demo.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "data" / "demo" / "factcheck_gpt.jsonl"
TARGET = ROOT / "data" / "verify" / "factcheck_questions.jsonl"


def build() -> str:
    """The JSON Lines text of the verification input."""
    lines = []
    for text in SOURCE.read_text(encoding="utf-8").splitlines():
        record = json.loads(text)
        spans = list(dict.fromkeys(c["span"] for c in record["claims"] if c.get("span")))
        if not spans:
            continue
        lines.append(json.dumps({"response_id": f"verify-{record['response_id']}", "use_case": record["use_case"],
                                 "model": record["model"], "question": record["question"], "answer": record["answer"],
                                 "retrieved_context": spans}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is stale")
    args = parser.parse_args()
    text = build()
    if args.check:
        stale = not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text
        print(f"{TARGET.relative_to(ROOT)} is {'stale' if stale else 'up to date'}")
        return 1 if stale else 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines())} answers to {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
