"""What an import did: per file (``BatchReport``), in all (``ImportReport``), and what went to quarantine.

Built by the batch writer (``register.ingest.batches``) and returned by ``register.ingest.importer``;
printed by the CLI, shown by the pages, and checked against the counts stored with each batch
(``accepted + quarantined == records`` for every batch).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Records per import transaction (``import --chunk-size``). Each chunk pays a fixed cost (its transaction, audit
# event and the compiled check's Arrow tables): small chunks pay it often, large ones hold more in memory; this size
# balances the two (benchmarks/bench_import.py; the figures: docs/performance.md, "Figures behind the code").
DEFAULT_CHUNK = 20_000

__all__ = ["COUNTS", "DEFERRED", "INDEXED", "REPORT_LIMIT", "BatchReport", "ImportReport", "QuarantinedRecord"]

REPORT_LIMIT = 100  # quarantined records listed in a report (all of them are in the table)
# ``ImportReport.search_index``: the new revisions indexed before the report, or left to a later catch-up
INDEXED, DEFERRED = "indexed", "deferred"


@dataclass(frozen=True)
class QuarantinedRecord:
    """One record that went to quarantine: where it was, its response id if known, and why."""

    source_name: str
    location: str
    response_id: str | None
    problems: list[dict]  # [{"field": ..., "message": ...}], as stored in quarantine.reasons


@dataclass
class BatchReport:
    """What one file (one import batch) did."""

    batch_id: int
    source_name: str
    format: str
    records: int = 0
    accepted: int = 0  # new_responses + new_revisions + unchanged
    new_responses: int = 0
    new_revisions: int = 0
    unchanged: int = 0
    quarantined: int = 0
    resolved: int = 0  # open quarantine rows that this batch's valid records resolved
    notes: list[str] = field(default_factory=list)
    score_run_id: int | None = None
    scored: int = 0
    scoring_failures: int = 0  # responses that failed closed (worst case, action review); named in notes
    held: list[int] = field(default_factory=list)  # pending label changes a revision made in the register waits as

    @property
    def balanced(self) -> bool:
        return self.accepted + self.quarantined == self.records


COUNTS = ("records", "accepted", "new_responses", "new_revisions", "unchanged", "quarantined", "resolved")


@dataclass
class ImportReport:
    """The result of ``import_path``: one ``BatchReport`` per file, totals, the first quarantined records."""

    batches: list[BatchReport] = field(default_factory=list)
    quarantined_records: list[QuarantinedRecord] = field(default_factory=list)  # the first REPORT_LIMIT
    notes: list[str] = field(default_factory=list)  # about the import as a whole (skipped files)
    # how the import left the search index: INDEXED (caught up before the report) or DEFERRED (left to the
    # console's background catch-up or to `python -m register search-index`; search finds the new answers anyway)
    search_index: str = INDEXED

    def _total(self, name: str) -> int:
        return sum(getattr(b, name) for b in self.batches)

    @property
    def batch_ids(self) -> list[int]:
        return [b.batch_id for b in self.batches]

    @property
    def records(self) -> int:
        return self._total("records")

    @property
    def accepted(self) -> int:
        return self._total("accepted")

    @property
    def new_responses(self) -> int:
        return self._total("new_responses")

    @property
    def new_revisions(self) -> int:
        return self._total("new_revisions")

    @property
    def unchanged(self) -> int:
        return self._total("unchanged")

    @property
    def quarantined(self) -> int:
        return self._total("quarantined")

    @property
    def resolved(self) -> int:
        return self._total("resolved")

    @property
    def balanced(self) -> bool:
        """The invariant every import keeps: accepted + quarantined == records in the input."""
        return all(b.balanced for b in self.batches)

    def extend(self, other: ImportReport) -> None:
        """Fold another report in (the CLI imports several paths into one report)."""
        self.batches.extend(other.batches)
        self.notes.extend(other.notes)
        self.search_index = other.search_index  # the later import's catch-up covers the earlier ones
        room = REPORT_LIMIT - len(self.quarantined_records)
        self.quarantined_records.extend(other.quarantined_records[:max(0, room)])

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"batch_ids": self.batch_ids}
        out.update({name: self._total(name) for name in COUNTS})
        out["balanced"] = self.balanced
        out["batches"] = [asdict(b) for b in self.batches]
        out["quarantined_records"] = [asdict(q) for q in self.quarantined_records]
        out["notes"] = list(self.notes)
        out["search_index"] = self.search_index
        return out

    @classmethod
    def from_dict(cls, data: dict) -> ImportReport:
        """The report ``as_dict`` wrote (the inbox's JSON report read back by ``import --via-inbox``)."""
        fields = set(BatchReport.__dataclass_fields__)
        return cls(batches=[BatchReport(**{k: v for k, v in b.items() if k in fields}) for b in data["batches"]],
                   quarantined_records=[QuarantinedRecord(**q) for q in data.get("quarantined_records", [])],
                   notes=list(data.get("notes", [])), search_index=str(data.get("search_index", INDEXED)))
