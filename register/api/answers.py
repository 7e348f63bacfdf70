"""The answers' operations: the filtered list, one answer with its claims, the review queue, a person's decision
and the overview's headline figures. Each reads what the console's pages read (``register.console``)."""

from __future__ import annotations

from typing import Any

from register.access.permissions import Permission, authorize
from register.api import models as m
from register.api.framework import Api, Call
from register.api.paging import next_cursor, offset_of, plain, records
from register.console.queries.detail import response_detail
from register.console.queries.explorer import PAGE_COLUMNS, responses_page
from register.console.queries.filters import DIM_COLUMNS, Filters
from register.console.queries.overview import kpis
from register.console.review import record_decision, review_queue
from register.errors import NotFound

QUEUE_FIELDS = ("response_id", "revision", "use_case", "decision", "decision_reasons", "score", "band", "action",
                "age_days")  # `python -m register queue --json`'s fields, then the rest of the console's row
QUEUE_EXTRA = ("model", "created_at", "mitigation_action", "why")
CLAIM_FIELDS = ("claim_id", "text", "labels", "dimensions", "criticality", "source_id", "category", "is_core",
                "authority", "allowed", "allowed_reason", "current", "current_reason", "authoritative",
                "authoritative_reason", "proposals", "feedback_count")
SCORE_FIELDS = ("run_id", "profile_version", "as_of", "score", "hri", "hri_add", "band", "action", "no_claims",
                "decision", "decision_reasons", "mitigation_action", "mitigation_rule", "mitigation_reason",
                "mitigation_claim_id", "floors_fired", "decisive_claim_id", "decisive_rule_id", *DIM_COLUMNS)
RESPONSE_FIELDS = ("response_id", "revision", "is_current", "use_case", "model", "created_at", "imported_at",
                   "batch_id", "question", "answer", "stakes", "claim_count")


def filters_of(query: m.FilterQuery) -> Filters:
    """The console's ``Filters`` of a query's filter parameters."""
    return Filters(date_from=query.date_from, date_to=query.date_to, use_cases=tuple(query.use_case),
                   models=tuple(query.model), bands=tuple(query.band), profile_version=query.profile_version,
                   decisions=tuple(query.decision))


def _read(call: Call, entity: str, entity_id: str | None = None) -> None:
    authorize(call.store, call.actor, Permission.READ, entity_type=entity, entity_id=entity_id)


def add_operations(api: Api) -> None:
    """Declare this module's operations on ``api``."""

    @api.operation("GET", "/responses", summary="List answers under the console's filters", tag="answers",
                   query=m.ResponsesQuery, response=m.ResponsesPage, permission="read")
    def list_responses(call: Call) -> m.ResponsesPage:
        """The filtered answers, highest score first by default, a page at a time (``next_cursor``)."""
        _read(call, "response")
        q: m.ResponsesQuery = call.query
        offset = offset_of(q)
        frame, total = responses_page(call.store, filters_of(q), search=q.search, sort_by=q.sort,
                                      descending=q.descending, limit=q.limit, offset=offset, authority=q.authority)
        items = records(frame, PAGE_COLUMNS)
        return m.ResponsesPage(items=[m.ResponseRow.model_validate(i) for i in items], total=total,
                               next_cursor=next_cursor(q, offset, len(items), total))

    @api.operation("GET", "/responses/{response_id}", summary="One answer: score, band, decision, claims",
                   tag="answers", query=m.DetailQuery, response=m.ResponseDetail, permission="read")
    def get_response(call: Call) -> dict[str, Any]:
        """The answer's revision (the current one unless ``?revision=``), its score with the band, the HRI action,
        the decision and its reasons, each claim with its labels, source and Authority checks, and the review
        decisions recorded on it."""
        response_id = call.path["response_id"]
        _read(call, "response", response_id)
        detail = response_detail(call.store, response_id, call.query.revision)
        if detail is None:
            what = f"response {response_id!r}" + (f" revision {call.query.revision}" if call.query.revision else "")
            raise NotFound(f"{what} does not exist")
        out = {name: plain(detail["response"].get(name)) for name in RESPONSE_FIELDS}
        score = detail["score"]
        out["score"] = None if score is None else {name: plain(score.get(name)) for name in SCORE_FIELDS}
        out["revisions"] = [int(r) for r in detail["revisions"]]
        out["claims"] = records(detail["claims"], CLAIM_FIELDS)
        out["review_decisions"] = records(detail["decisions"])
        return out

    @api.operation("GET", "/queue", summary="The review queue, oldest first", tag="answers",
                   query=m.QueueQuery, response=m.QueuePage, permission="read")
    def get_queue(call: Call) -> m.QueuePage:
        """Current answers decided review or block that no reviewer decided, oldest first, with the decision's
        reasons (the fields of ``python -m register queue --json``, and the console's columns beside them)."""
        _read(call, "response")
        q: m.QueueQuery = call.query
        offset = offset_of(q)
        frame, total = review_queue(call.store, filters_of(q), limit=q.limit, offset=offset)
        items = records(frame, QUEUE_FIELDS + QUEUE_EXTRA)
        return m.QueuePage(items=[m.QueueItem.model_validate(i) for i in items], total=total,
                           next_cursor=next_cursor(q, offset, len(items), total))

    @api.operation("POST", "/responses/{response_id}/decisions", summary="Record a reviewer's decision",
                   tag="answers", body=m.DecisionIn, response=m.DecisionOut, status=201, permission="review.decide")
    def decide(call: Call) -> m.DecisionOut:
        """A reviewer's decision on the answer's current revision, with its reason (audited under the token's
        account). Refused: 403 below reviewer, 404 for an unknown answer, 409 when the revision is no longer
        current or already decided, 422 for a release of an answer decided block (that needs a risk acceptance
        by two reviewers, in the console)."""
        body: m.DecisionIn = call.body
        response_id = call.path["response_id"]
        decision_id = record_decision(call.store, call.actor, response_id, body.revision, body.decision, body.reason)
        return m.DecisionOut(decision_id=decision_id, response_id=response_id, revision=body.revision,
                             decision=body.decision)

    @api.operation("GET", "/overview", summary="The headline figures under the filters", tag="answers",
                   query=m.FilterQuery, response=m.OverviewOut, permission="read")
    def get_overview(call: Call) -> dict[str, Any]:
        """The Overview page's headline figures: answers, claims, the count in each band, median and 95th
        percentile score, floors fired, answers without claims, the review queue's size and oldest age."""
        _read(call, "overview")
        return plain(kpis(call.store, filters_of(call.query)))
