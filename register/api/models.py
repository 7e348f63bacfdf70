"""The API's request and response models (pydantic): what each operation accepts and answers, and the schemas
of the OpenAPI document. Request models forbid unknown fields (a misspelt field is a 422, never ignored)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from register.console.queries.explorer import AUTHORITY_FILTERS, SORT_COLUMNS
from register.console.review import DECISIONS

MAX_PAGE = 500


class Strict(BaseModel):
    """A request model: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """A response model that may carry more fields than it names (new ones are added, never removed)."""

    model_config = ConfigDict(extra="allow")


class ErrorDetail(BaseModel):
    code: str = Field(description="unauthenticated, forbidden, not_found, conflict, invalid, too_large, "
                                  "too_many_attempts, unavailable, internal")
    message: str
    field: str | None = Field(None, description="the request field to fix, when one is to blame")


class ErrorBody(BaseModel):
    """Every error answer."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    api_version: str


# --- filters, paging -----------------------------------------------------------------------------------


class FilterQuery(Strict):
    """The console's filter bar: repeat a list parameter for several values (``?band=High&band=Critical``)."""

    date_from: date | None = Field(None, description="answers created on or after this UTC date")
    date_to: date | None = Field(None, description="answers created on or before this UTC date")
    use_case: list[str] = Field(default_factory=list, description="answers of these use cases (repeat for several)")
    model: list[str] = Field(default_factory=list, description="answers of these models (repeat for several)")
    band: list[str] = Field(default_factory=list, description="a band of the profile, or 'No claims'")
    decision: list[Literal["release", "caution", "review", "block"]] = Field(
        default_factory=list, description="answers whose decision is one of these: release, caution, review, block")
    profile_version: int | None = Field(None, ge=1, description="scores under this profile version (default: "
                                                                "the current scores)")


class Paging(Strict):
    limit: int = Field(50, ge=1, le=MAX_PAGE, description=f"rows per page, 1 to {MAX_PAGE}")
    cursor: str | None = Field(None, max_length=200, description="next_cursor of the previous page")


class ResponsesQuery(FilterQuery, Paging):
    search: str | None = Field(None, max_length=200, description="a literal, case-insensitive substring of the "
                                                                 "question, the answer or a claim")
    sort: Literal[tuple(SORT_COLUMNS)] = Field("score", description="the column to sort by")  # type: ignore[valid-type]
    descending: bool = Field(True, description="highest first")
    authority: Literal[tuple(AUTHORITY_FILTERS)] | None = Field(  # type: ignore[valid-type]
        None, description="answers with an Authority finding: any, a proposed label, or one problem")


class QueueQuery(FilterQuery, Paging):
    pass


class ResponseRow(Open):
    response_id: str
    revision: int
    use_case: str | None = None
    model: str | None = None
    created_at: datetime | None = None
    score: float | None = None
    band: str | None = None
    decision: str | None = None
    action: str | None = None


class ResponsesPage(BaseModel):
    items: list[ResponseRow]
    total: int = Field(description="answers matching the filters (all pages)")
    next_cursor: str | None = Field(None, description="pass as ?cursor= for the next page; null on the last")


class QueueItem(Open):
    response_id: str
    revision: int
    use_case: str | None = None
    decision: str | None = None
    decision_reasons: list[str] = Field(default_factory=list)
    score: float | None = None
    band: str | None = None
    action: str | None = None
    age_days: float | None = None


class QueuePage(BaseModel):
    items: list[QueueItem]
    total: int
    next_cursor: str | None = None


# --- one response ---------------------------------------------------------------------------------------


class DetailQuery(Strict):
    revision: int | None = Field(None, ge=1, description="an older revision (default: the current one)")


class ScoreOut(Open):
    run_id: int
    profile_version: int
    as_of: datetime | None = None
    score: float | None = None
    hri: float | None = None
    band: str | None = None
    action: str | None = None
    decision: str | None = Field(None, description="the one decision a person acts on: release, caution, review, "
                                                   "block")
    decision_reasons: list[str] = Field(default_factory=list)
    mitigation_action: str | None = None
    mitigation_reason: str | None = None


class ClaimOut(Open):
    claim_id: str
    text: str | None = None
    labels: list[str] | None = None
    criticality: float | None = None
    source_id: str | None = None
    authority: str | None = None


class ReviewDecisionOut(Open):
    decision_id: int
    revision: int
    decision: str
    reason: str
    decided_by: str
    decided_at: datetime


class ResponseDetail(Open):
    response_id: str
    revision: int
    is_current: bool
    revisions: list[int]
    question: str | None = None
    answer: str | None = None
    score: ScoreOut | None = None
    claims: list[ClaimOut]
    review_decisions: list[ReviewDecisionOut]


class DecisionIn(Strict):
    revision: int = Field(ge=1, description="the revision decided: the current one (409 when it is not)")
    decision: Literal[DECISIONS]  # type: ignore[valid-type]
    reason: str = Field(min_length=1, max_length=4000)


class DecisionOut(BaseModel):
    decision_id: int
    response_id: str
    revision: int
    decision: str


# --- governance -----------------------------------------------------------------------------------------


class SourceOut(Open):
    source_id: str
    title: str | None = None
    ref: str | None = None
    authority_tier: int | None = None
    row_version: int
    updated_at: datetime | None = None
    updated_by: str | None = None


class SourceIn(Strict):
    """A source row; every field but the id (the path's). ``row_version``: the version read, required to change
    an existing source (409 when someone changed it since); leave it out to create a new one."""

    title: str | None = None
    ref: str | None = None
    source_type: str | None = None
    authority_tier: int | None = None
    publisher: str | None = None
    access_date: date | None = None
    valid_until: date | None = None
    superseded_by: str | None = None
    archive_url: str | None = None
    content_hash: str | None = None
    restricted_to: list[str] | None = None
    notes: str | None = None
    row_version: int | None = Field(None, ge=1)


class ChecklistRunIn(Strict):
    record: bool = Field(True, description="store the run, to be signed in the console")


class ChecklistRunOut(Open):
    passed: bool = Field(description="false when any check failed or could not be evaluated (the CI gate)")
    failed_checks: list[int]
    run_id: int | None = None
    rule_version: int | None = None
    checks: list[dict[str, Any]]
    summary: dict[str, Any]


class FeedbackIn(Strict):
    response_id: str = Field(min_length=1, max_length=500)
    claim_id: str | None = Field(None, max_length=500, description="the claim at fault; null: the whole answer")
    text: str = Field(min_length=1, max_length=10_000)
    severity: float = Field(ge=0, le=1, description="the reporter's proposed severity q in [0, 1]")


class FeedbackOut(BaseModel):
    feedback_id: int
    response_id: str
    state: str


class AuditVerifyOut(Open):
    ok: bool
    events: int
    first_bad_seq: int | None = None
    reason: str | None = None


class OverviewOut(Open):
    responses: int
    claims: int
    band_counts: dict[str, int]
    median_score: float | None = None
    p95_score: float | None = None
    queue_size: int


class ImportQuery(Strict):
    format: Literal["jsonl", "json", "csv", "parquet"] | None = None
    filename: str | None = Field(None, max_length=200, description="the batch's source name (its extension may "
                                                                    "give the format)")
    score: bool = Field(True, description="score the new answers under the active profile")


class ImportReportOut(Open):
    """The same report as ``python -m register import --json``."""

    batch_ids: list[int]
    records: int
    accepted: int
    quarantined: int
    balanced: bool
    batches: list[dict[str, Any]]
    quarantined_records: list[dict[str, Any]]
    notes: list[str]
    search_index: Literal["indexed", "deferred"] = Field(
        "indexed", description="`indexed`: the search index holds the new answers; `deferred`: the console's "
                               "background catch-up indexes them (search finds them meanwhile, more slowly)")
