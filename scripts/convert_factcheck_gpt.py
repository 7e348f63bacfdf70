"""Convert the Factcheck-GPT benchmark into the console's interchange JSON Lines (a real-data demo set).

Source: ``../shared/peer-data/factcheck-gpt/factcheck-GPT-benchmark.jsonl`` — 94 real ChatGPT answers
decomposed by people into sentences and claims, with claim factuality labels, evidence and stances
(Wang et al., "Factcheck-Bench", Findings of EMNLP 2024; https://github.com/yuxiaw/Factcheck-GPT;
Apache-2.0). Output: ``data/demo/factcheck_gpt.jsonl`` plus a copy of the data set's licence at
``data/demo/LICENSE.factcheck-gpt``. Run from the repository root:

    .venv/bin/python scripts/convert_factcheck_gpt.py            # write the files, print a report
    .venv/bin/python scripts/convert_factcheck_gpt.py --check    # exit 1 if the committed files differ

Mapping (also in data/README.md; the functions below are imported by tests/scripts):

* claim checkworthiness "opinion" / "not_a_claim" / "other" -> the claim is skipped (it is not a
  checkable statement) and counted in the report; missing checkworthiness -> kept, mapped by factuality
* factuality True -> SUPPORTED
* factuality False -> CONTRADICTED, dimensions ["F"] (wrong w.r.t. world knowledge; the answers had no
  retrieved context, so there is no context deviation C)
* factuality unknown / not_enough_evidence / missing -> UNSUPPORTED (default dimension U): fails
  closed, an unverified statement is never SUPPORTED
* criticality 2 for the most important claim ("yes") of a most important sentence ("yes"), else 1
* evidence: the human evidence (its first URL -> source_id, its text -> span, ~300 chars) when it
  says anything; else the first automatically retrieved passage whose human stance label agrees
  with the verdict (completely-/partially-support for SUPPORTED, refute for CONTRADICTED)
* created_at is synthetic: the 94 answers are spread evenly over the months of 2026 so that the
  dashboards have a time axis (the data set has no timestamps)

Everything except ``main`` is a pure function of its arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Any, NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO_ROOT.parent / "shared" / "peer-data" / "factcheck-gpt" / "factcheck-GPT-benchmark.jsonl"
DEFAULT_OUTPUT = REPO_ROOT / "data" / "demo" / "factcheck_gpt.jsonl"
LICENSE_NAME = "LICENSE.factcheck-gpt"

USE_CASE = "open-domain-qa"
MODEL = "chatgpt (factcheck-gpt)"
ID_PREFIX = "fcgpt"
YEAR = 2026
SPAN_MAX_CHARS = 300

FACTUAL = "factual"
NON_FACTUAL_CHECKWORTHINESS = frozenset({"opinion", "not_a_claim", "other"})
_UNKNOWN_FACTUALITY = frozenset({"", "unknown", "not_enough_evidence", "na", "n/a", "none"})
# What annotators wrote when they found no evidence: not a span.
_EVIDENCE_PLACEHOLDERS = frozenset({"", "na", "n/a", "none", "not enough evidence", "no relevant evidence",
                                    "no evidence", "not sure"})
# Automatic-evidence stances (human labelled) that may back each verdict, in order of preference.
_STANCES_FOR_LABEL = {
    "SUPPORTED": ("completely-support", "partially-support"),
    "CONTRADICTED": ("refute",),
    "UNSUPPORTED": (),
}
_URL = re.compile(r"https?://\S+")


class Verdict(NamedTuple):
    """Labels and explicit dimensions of one converted claim (dimensions None: profile defaults)."""

    labels: tuple[str, ...]
    dimensions: tuple[str, ...] | None


def _factuality(value: Any) -> bool | None:
    """True / False / None (unknown) from a bool or the strings the benchmark files use."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        token = value.strip().lower()
        if token == "true":
            return True
        if token == "false":
            return False
        if token in _UNKNOWN_FACTUALITY:
            return None
    raise ValueError(f"unknown claim factuality {value!r}")


def map_claim_label(factuality: Any, checkworthiness: str | None) -> Verdict | None:
    """Verdict of one Factcheck-GPT claim, or None when the claim is not a factual statement (skip it).

    ``factuality`` is the claim's ``claims_factuality_label`` (True, False, "unknown", ...);
    ``checkworthiness`` its ``claim_checkworthiness`` ("factual", "opinion", "not_a_claim", "other"
    or None when missing). Unknown values raise ValueError rather than being guessed.
    """
    if checkworthiness is not None:
        token = checkworthiness.strip().lower()
        if token in NON_FACTUAL_CHECKWORTHINESS:
            return None
        if token != FACTUAL:
            raise ValueError(f"unknown claim checkworthiness {checkworthiness!r}")
    verdict = _factuality(factuality)
    if verdict is True:
        return Verdict(("SUPPORTED",), None)
    if verdict is False:
        return Verdict(("CONTRADICTED",), ("F",))
    return Verdict(("UNSUPPORTED",), None)


def claim_criticality(sentence_importance: str | None, claim_importance: str | None) -> int:
    """2 for the most important claim of a most important sentence, else 1 (open-domain QA is low stakes)."""
    return 2 if (sentence_importance, claim_importance) == ("yes", "yes") else 1


def truncate(text: str, limit: int = SPAN_MAX_CHARS) -> str:
    """Whitespace collapsed; longer texts cut at a word boundary and marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _clean_url(url: str) -> str:
    url = url.rstrip(".,;")
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1]
    return url


def parse_human_evidence(evidence: str | None) -> tuple[str | None, str | None]:
    """(first URL, remaining text) of an annotator's evidence note; placeholders such as "NA" give None."""
    if not evidence:
        return None, None
    urls = [_clean_url(u) for u in _URL.findall(evidence)]
    # Drop each URL but keep the punctuation that followed it ("(see https://x)." -> "(see )."):
    text = _URL.sub(lambda m: " " + m.group(0)[len(_clean_url(m.group(0))):], evidence)
    text = " ".join(text.replace("URL:", " ").split())
    if text.lower().rstrip(".") in _EVIDENCE_PLACEHOLDERS:
        text = ""
    return (urls[0] if urls else None), (truncate(text) if text else None)


def select_evidence(label: str, human_evidence: str | None, stances: list[str] | None,
                    urls: list[str] | None, snippets: list[str] | None) -> tuple[str | None, str | None, str]:
    """(source_id, span, origin) for a claim; origin is "human", "auto" or "none".

    The annotator's own evidence wins when it says anything. Otherwise the first retrieved passage
    whose stance backs the verdict is used; an UNSUPPORTED claim has, by definition, no such passage.
    """
    url, text = parse_human_evidence(human_evidence)
    if url or text:
        return url, text, "human"
    stances, urls, snippets = stances or [], urls or [], snippets or []
    for wanted in _STANCES_FOR_LABEL.get(label, ()):
        for j, stance in enumerate(stances):
            if stance == wanted and j < len(urls):
                snippet = snippets[j] if j < len(snippets) and snippets[j] else None
                return _clean_url(urls[j]) or None, (truncate(snippet) if snippet else None), "auto"
    return None, None, "none"


def synthetic_created_at(index: int, total: int, year: int = YEAR) -> str:
    """A made-up but deterministic creation time: answer ``index`` of ``total`` spread over the year."""
    days_in_year = (date(year + 1, 1, 1) - date(year, 1, 1)).days
    day = date(year, 1, 1) + timedelta(days=index * days_in_year // max(1, total))
    minutes = 9 * 60 + (index * 37) % (9 * 60)  # office hours, 09:00-17:59
    return f"{day.isoformat()}T{minutes // 60:02d}:{minutes % 60:02d}:00Z"


class ConversionReport(NamedTuple):
    responses: int
    source_claims: int
    claims: int
    skipped: Counter  # reason -> count
    labels: Counter
    criticality: Counter
    evidence: Counter  # human / auto / none
    no_claim_responses: int

    def lines(self) -> list[str]:
        """The report as printed by ``main``."""
        out = [
            f"responses: {self.responses}",
            f"claims in source: {self.source_claims}",
            f"claims converted: {self.claims}",
            f"claims skipped: {sum(self.skipped.values())}"
            + "".join(f"\n  {reason}: {n}" for reason, n in sorted(self.skipped.items())),
            "labels:" + "".join(f"\n  {label}: {n}" for label, n in sorted(self.labels.items())),
            "criticality:" + "".join(f"\n  {v}: {n}" for v, n in sorted(self.criticality.items())),
            "evidence:" + "".join(f"\n  {origin}: {n}" for origin, n in sorted(self.evidence.items())),
            f"responses with no claims after conversion: {self.no_claim_responses}",
        ]
        return out


def _sentences(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Sentences in their numeric order (sentence1, sentence2, ..., sentence10)."""
    items = record.get("sentences") or {}
    return [items[key] for key in sorted(items, key=lambda k: int(re.sub(r"\D", "", k) or 0))]


def _item(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def convert_record(index: int, total: int,
                   record: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
    """One source answer -> (interchange record, [(skip reason or "", evidence origin)] per source claim)."""
    rid = f"{ID_PREFIX}-{index + 1:03d}"
    claims = []
    outcomes: list[tuple[str, str | None]] = []
    k = 0
    for sentence in _sentences(record):
        for i, text in enumerate(sentence.get("claims") or []):
            k += 1  # numbered over all source claims, so ids stay traceable when some are skipped
            checkworthiness = _item(sentence.get("claim_checkworthiness"), i)
            verdict = map_claim_label(_item(sentence.get("claims_factuality_label"), i), checkworthiness)
            if verdict is None:
                outcomes.append((f"checkworthiness={checkworthiness}", None))
                continue
            source_id, span, origin = select_evidence(
                verdict.labels[0], _item(sentence.get("human_evidence"), i),
                _item(sentence.get("stance_claim_autoEvid"), i), _item(sentence.get("auto_evidence_url"), i),
                _item(sentence.get("auto_evidence"), i))
            claim: dict[str, Any] = {"claim_id": f"{rid}-{k}", "text": " ".join(str(text).split()),
                                     "labels": list(verdict.labels)}
            if verdict.dimensions is not None:
                claim["dimensions"] = list(verdict.dimensions)
            claim["criticality"] = claim_criticality(sentence.get("most_importance_sentence"),
                                                     _item(sentence.get("if_most_important_claim"), i))
            if source_id:
                claim["source_id"] = source_id
            if span:
                claim["span"] = span
            claims.append(claim)
            outcomes.append(("", origin))
    out = {
        "response_id": rid,
        "use_case": USE_CASE,
        "model": MODEL,
        "created_at": synthetic_created_at(index, total),
        "question": record.get("prompt"),
        "answer": record.get("response"),
        "claims": claims,
    }
    return out, outcomes


def convert(source_records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ConversionReport]:
    """All source answers -> interchange records and the conversion report."""
    records = []
    skipped: Counter = Counter()
    labels: Counter = Counter()
    criticality: Counter = Counter()
    evidence: Counter = Counter()
    source_claims = 0
    for index, source in enumerate(source_records):
        record, outcomes = convert_record(index, len(source_records), source)
        records.append(record)
        source_claims += len(outcomes)
        for reason, origin in outcomes:
            if reason:
                skipped[reason] += 1
            else:
                evidence[origin] += 1
        for claim in record["claims"]:
            labels.update(claim["labels"])
            criticality[claim["criticality"]] += 1
    report = ConversionReport(
        responses=len(records), source_claims=source_claims, claims=sum(len(r["claims"]) for r in records),
        skipped=skipped, labels=labels, criticality=criticality, evidence=evidence,
        no_claim_responses=sum(1 for r in records if not r["claims"]))
    return records, report


def read_source(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The benchmark's JSON Lines (blank lines ignored)."""
    return [json.loads(line) for line in lines if line.strip()]


def render_jsonl(records: Iterable[dict[str, Any]]) -> str:
    """The exact text written to the output file (UTF-8, one record a line, "\\n" line ends)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="factcheck-GPT-benchmark.jsonl")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="interchange JSONL to write")
    parser.add_argument("--check", action="store_true", help="compare with the existing files, write nothing")
    args = parser.parse_args(argv)

    if not args.source.is_file():
        print(f"source not found: {args.source}\n(the Factcheck-GPT benchmark is expected in "
              "../shared/peer-data/factcheck-gpt/ beside the repository)", file=sys.stderr)
        return 2
    with args.source.open(encoding="utf-8") as handle:
        records, report = convert(read_source(handle))

    if str(REPO_ROOT) not in sys.path:  # run as a script: make the repository's packages importable
        sys.path.insert(0, str(REPO_ROOT))
    from hri_core import parse_response  # every record must be valid before anything is written

    for record in records:
        parse_response(record)
    text = render_jsonl(records)
    license_source = args.source.parent / "LICENSE"
    license_target = args.output.parent / LICENSE_NAME

    if args.check:
        stale = [str(p) for p, ok in (
            (args.output, args.output.is_file() and args.output.read_text(encoding="utf-8") == text),
            (license_target, license_target.is_file()
             and license_target.read_bytes() == license_source.read_bytes()),
        ) if not ok]
        if stale:
            print("out of date: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("up to date")
        return 0

    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    shutil.copyfile(license_source, license_target)
    print(f"wrote {args.output} and {license_target}")
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
