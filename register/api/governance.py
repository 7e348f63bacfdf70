"""The governance and intake operations: imports, the source register, the checklist as a CI gate, feedback and
the audit trail's verification. Each calls the register's service function the console calls."""

from __future__ import annotations

from typing import Any

from register.access.permissions import Permission, authorize
from register.api import models as m
from register.api.errors import ApiError
from register.api.framework import Api, Call
from register.api.paging import plain
from register.api.uploads import UploadReceiver
from register.db.audit import verify_chain
from register.errors import NotFound
from register.feedback.items import report_feedback
from register.governance.checklist import record_run
from register.governance.checks import run_checks
from register.governance.registers import RowChanges, save_sources, source_row
from register.ingest.importer import import_path


def add_operations(api: Api) -> None:
    """Declare this module's operations on ``api``."""

    @api.operation("POST", "/imports", summary="Import a JSON Lines, CSV or Parquet file", tag="intake",
                   query=m.ImportQuery, response=m.ImportReportOut, permission="import", upload=UploadReceiver())
    def post_import(call: Call) -> dict[str, Any]:
        """The file as the request body (its format from ``?format=``, ``?filename=`` or the Content-Type) or as
        a multipart field ``file``. Valid records are stored and scored; invalid ones are quarantined with
        their reasons and listed in the report (the same JSON as ``python -m register import --json``). A file
        refused whole (unreadable, wrong type) is a 422 and nothing of it is written; over ``HRI_IMPORT_MAX_MB``,
        a 413. The report comes once the records are stored and scored: the search index catches up in the
        console's background (``"search_index": "deferred"``; with ``HRI_SEARCH_INDEX_POLL_SECONDS=0``, before the
        report: ``"indexed"``); search finds the new answers either way."""
        # the console's background indexer takes the catch-up when it runs (register.readmodels.search_catchup)
        report = import_path(call.store, call.actor, call.upload.path, score=call.query.score, defer_index=None)
        return report.as_dict()

    @api.operation("GET", "/sources/{source_id}", summary="One source of the verification register",
                   tag="governance", response=m.SourceOut, permission="read")
    def get_source(call: Call) -> dict[str, Any]:
        """The source's row with its ``row_version`` (send it back to change the row)."""
        authorize(call.store, call.actor, Permission.READ, entity_type="source", entity_id=call.path["source_id"])
        row = source_row(call.store, call.path["source_id"], role=call.actor.role)
        if row is None:
            raise NotFound(f"source {call.path['source_id']!r} does not exist")
        return plain(row)

    @api.operation("PUT", "/sources/{source_id}", summary="Create or change a source", tag="governance",
                   body=m.SourceIn, response=m.SourceOut, permission="register.edit")
    def put_source(call: Call) -> dict[str, Any]:
        """Create the source (no ``row_version``) or change it (the ``row_version`` read: 409 when someone changed
        it since). Every field is validated as the register page validates it (422 naming the field); the change
        is audited under the token's account and re-decides the answers that cite the source."""
        source_id = call.path["source_id"]
        # the role first: someone who may not edit the register learns nothing of its rows' versions
        authorize(call.store, call.actor, Permission.REGISTER_EDIT, entity_type="source", entity_id=source_id)
        body: m.SourceIn = call.body
        values = {"source_id": source_id, **body.model_dump(exclude={"row_version"})}
        existing = source_row(call.store, source_id, role=None)
        if existing is not None and body.row_version is None:
            raise ApiError(409, "conflict", f"source {source_id!r} exists: send its row_version "
                                            f"({existing['row_version']}) to change it", "row_version")
        if existing is None:
            changes = RowChanges(inserts=[{"values": values, "row": 1}])
        else:
            changes = RowChanges(updates=[{"key": source_id, "row_version": body.row_version, "values": values,
                                           "row": 1}])
        save_sources(call.store, call.actor, changes)
        row = source_row(call.store, source_id, role=None)
        return plain(row)

    @api.operation("POST", "/checklist/runs", summary="Run the pre-submission checklist (a CI gate)",
                   tag="governance", body=m.ChecklistRunIn, response=m.ChecklistRunOut, status=201,
                   permission="checklist.run")
    def run_checklist(call: Call) -> dict[str, Any]:
        """The checklist's automated checks (paper Table IX) against the register now: ``passed`` is false when
        any check failed or could not be evaluated, with each check's offending rows. Recorded as a run to sign
        in the console unless ``record`` is false."""
        authorize(call.store, call.actor, Permission.CHECKLIST_RUN, entity_type="checklist")
        results = run_checks(call.store)
        run_id = record_run(call.store, call.actor, results=results) if call.body.record else None
        failed = list(results["summary"]["failed_checks"])
        return {**results, "run_id": run_id, "passed": not failed, "failed_checks": failed}

    @api.operation("POST", "/feedback", summary="Report a problem with an answer", tag="governance",
                   body=m.FeedbackIn, response=m.FeedbackOut, status=201, permission="feedback.submit")
    def post_feedback(call: Call) -> m.FeedbackOut:
        """A report on an answer (or one of its claims) with a proposed severity; it counts only once a reviewer
        validates it in the console."""
        body: m.FeedbackIn = call.body
        feedback_id = report_feedback(call.store, call.actor, body.response_id, body.text, body.severity,
                                      claim_id=body.claim_id)
        return m.FeedbackOut(feedback_id=feedback_id, response_id=body.response_id, state="reported")

    @api.operation("GET", "/audit/verify", summary="Verify the audit trail's hash chain", tag="governance",
                   response=m.AuditVerifyOut, permission="audit.read")
    def get_audit_verify(call: Call) -> dict[str, Any]:
        """Recompute the keyed hash chain and check the anchor folder, as ``python -m register audit verify``:
        ``ok`` false names the first broken event and why."""
        authorize(call.store, call.actor, Permission.AUDIT_READ, entity_type="audit")
        report = verify_chain(call.store)
        return plain({name: getattr(report, name) for name in report.__dataclass_fields__})

