"""The demo data set, loaded through the ordinary import path.

Called by ``python -m register demo`` and by the app's first start (``ui.framework.data.seed_if_empty``). Loads
``data/table_v_supplier_contract.jsonl`` (the paper's worked example), every ``data/demo/*.jsonl``
(real data converted by ``scripts/``, licences beside them) and, when asked, ``synthetic`` responses
from ``hri_core.synthetic.generate_responses`` (seeded, so the same number gives the same records),
written to a temporary JSON Lines file and imported like any user file.

Idempotent: a source whose SHA-256 matches a finished import batch is skipped, so running the demo
again adds no batch, no response and no audit event.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hri_core.synthetic import generate_responses
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.demo.feedback import record_feedback_history
from register.demo.lenses import seed_demo_lenses
from register.demo.outcomes import import_ragchecker_results, record_factcheck_reviews
from register.demo.sources import seed_demo_sources
from register.demo.use_cases import seed_demo_use_cases
from register.governance.seed import seed_paper_register
from register.ingest.importer import ProgressFn, import_path, scan_file
from register.ingest.replicate import COPY_FORMAT, replicate
from register.labels.rubrics import ensure_default_rubric
from register.scoring.profiles import ensure_default_profile, ensure_review_floors_profile

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
SYNTHETIC_SEED = 42

def demo_sources() -> list[Path]:
    """The shipped demo files, in load order."""
    files = [DATA_DIR / "table_v_supplier_contract.jsonl"]
    files += sorted((DATA_DIR / "demo").glob("*.jsonl"))
    return [f for f in files if f.is_file()]


BULK_TEMPLATES = 20_000  # synthetic responses imported in full when the rest are copies (``bulk``)


def _write_synthetic(n: int, folder: Path) -> Path:
    """``n`` seeded synthetic responses as a JSON Lines file in ``folder``."""
    path = folder / f"synthetic-{n}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for record in generate_responses(n, seed=SYNTHETIC_SEED):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def seed_demo(store: Store, actor: Actor, synthetic: int = 0, progress: ProgressFn | None = None, *,
              review_floors: bool = False, bulk: bool = False, bound_profiles: bool = True,
              feedback_history: bool = True) -> dict[str, Any]:
    """Load the demo set (and ``synthetic`` generated responses); return what was loaded and skipped.

    ``bulk`` (for benchmarks at millions): only the first ``BULK_TEMPLATES`` synthetic responses go through
    the importer; the rest are copies of them made in SQL (``register.ingest.replicate``), once.

    Needs every permission its parts need (checked before the first write, so nothing is half loaded).
    ``review_floors``: make sure Table IV's review floors (``hri_core.recommended_profile``) are a stored version
    (``python -m register demo`` asks): a new register's version 1 already is, so nothing is written; a register
    whose version 1 is the plain paper profile gets them as a draft, which the profiles page previews.
    ``bound_profiles``: bind the demo's two use-case profiles (``register.demo.lenses``, profile versions 2 and 3);
    off, the register's profile versions after 1 are free (the test templates of the profile pages count on it).
    ``feedback_history``: validated feedback on a few answers, resolved months ago (``register.demo.feedback``: the
    Evidence page's feedback loops get a before and an after); off, no feedback item is written.
    """
    for permission in (Permission.PROFILE_PUBLISH, Permission.RULES_EDIT, Permission.REGISTER_EDIT, Permission.IMPORT):
        authorize(store, actor, permission, entity_type="demo")
    ensure_default_profile(store, actor)
    if review_floors:
        ensure_review_floors_profile(store, actor)
    seed_paper_register(store, actor)  # the paper's Table VII and Table VIII as the example governance register
    ensure_default_rubric(store, actor)  # the shipped labelling rubric as version 1
    # the sources the answers cite and the use cases they serve, before the answers: scored with them at import
    seed_demo_sources(store, actor, DATA_DIR)
    seed_demo_use_cases(store, actor, DATA_DIR)
    if bound_profiles:  # two use cases scored by their own profiles
        seed_demo_lenses(store, actor)
    summary: dict[str, Any] = {"files_imported": 0, "files_already_loaded": 0, "records": 0, "new_responses": 0,
                               "new_revisions": 0, "quarantined": 0, "synthetic": 0, "notes": []}
    loaded = {row[0] for row in store.query(
        "SELECT source_sha256 FROM import_batches WHERE finished_at IS NOT NULL AND source_sha256 IS NOT NULL")}
    with tempfile.TemporaryDirectory(prefix="hri-demo-") as tmp:
        sources = demo_sources()
        copies = max(0, synthetic - BULK_TEMPLATES) if bulk else 0
        if synthetic > 0:
            sources.append(_write_synthetic(synthetic - copies, Path(tmp)))
        pending = []
        total = 0
        for source in sources:
            sha256, lines = scan_file(source, "jsonl")
            if sha256 in loaded:
                summary["files_already_loaded"] += 1
            else:
                pending.append(source)
                total += lines or 0
        offset = 0
        for source in pending:
            def forward(done: int, _total: int | None, message: str, _offset: int = offset) -> None:
                if progress:
                    progress(_offset + done, total, message)

            report = import_path(store, actor, source, progress=forward)
            offset += report.records
            summary["files_imported"] += 1
            for name in ("records", "new_responses", "new_revisions", "quarantined"):
                summary[name] += getattr(report, name)
            if source.parent == Path(tmp):
                summary["synthetic"] = report.accepted
        if copies:
            _bulk_copies(store, actor, synthetic - copies, copies, summary, progress)
        # for the Evidence page: answers checked by RAGChecker, and review decisions a weight fit reads
        summary["ragchecker"] = import_ragchecker_results(store, actor, Path(tmp))
    if feedback_history:  # before the review decisions: each revision it writes would leave a decision stale
        history = record_feedback_history(store, actor)
        summary["feedback_resolved"] = history["resolved"]
        if history["note"]:
            summary["notes"].append(history["note"])
    summary["review_decisions"] = record_factcheck_reviews(store, actor, DATA_DIR / "demo" / "factcheck_gpt.jsonl")
    return summary


def _bulk_copies(store: Store, actor: Actor, templates: int, copies: int, summary: dict[str, Any],
                 progress: ProgressFn | None) -> None:
    """Make ``copies`` copies of the ``templates`` synthetic responses imported last, unless copies exist."""
    made = store.scalar("SELECT coalesce(sum(accepted), 0) FROM import_batches WHERE format = ? "
                        "AND finished_at IS NOT NULL", [COPY_FORMAT])
    if made:
        summary["notes"].append(f"{made:,} synthetic copies were made before; none added")
        return
    batch = store.scalar("SELECT max(batch_id) FROM import_batches WHERE source_name = ? AND finished_at IS NOT NULL",
                         [f"synthetic-{templates}.jsonl"])
    report = replicate(store, actor, batch, copies, progress)
    summary["synthetic"] += report.responses
    summary["notes"].append(f"{report.responses:,} of the synthetic responses are SQL copies of the "
                            f"{report.templates:,} imported in batch {batch} (import batch {report.batch_id})")


def is_empty(store: Store) -> bool:
    """Whether the database holds no response at all (the console's first start loads the demo set then)."""
    return not store.scalar("SELECT EXISTS (SELECT 1 FROM responses)")
