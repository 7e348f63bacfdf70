"""Hypothesis strategies shared by the test suite: random responses and random scoring profiles.

``responses()`` draws batches of response records in the interchange format (plain dicts, exactly
what a user's JSON Lines file holds), ``profiles()`` draws valid ``ScoringProfile`` objects. The core
property tests use them, and so does the property test that holds the register's SQL scorer to
``hri_core.score_response``. Feedback times are drawn around the fixed ``AS_OF`` so that a score is
reproducible: pass ``AS_OF`` as the scoring time.

Imported as ``hs`` everywhere (``st`` means Streamlit in this project).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as hs

from hri_core import DIMENSIONS, LABELS, Band, FloorRule, ScoringProfile
from hri_core.vocabulary import cautious_label_set

AS_OF = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
FEEDBACK_WINDOW = timedelta(days=120)
ACTIONS = ("release", "caution", "review", "block")

LABEL_VALUES = tuple(label.value for label in LABELS)
DIMENSION_VALUES = tuple(dim.value for dim in DIMENSIONS)

_unit = hs.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def iso(moment: datetime) -> str:
    """ISO 8601 with a ``Z`` suffix, as users write it."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@hs.composite
def feedback_times(draw) -> str:
    """A validation time within +-120 days of ``AS_OF`` (after it too: such feedback counts 0)."""
    seconds = int(FEEDBACK_WINDOW.total_seconds())
    return iso(AS_OF + timedelta(seconds=draw(hs.integers(-seconds, seconds))))


def allowed_label_lists():
    """1-3 distinct labels that one claim may carry together (``hri_core.vocabulary.LABEL_CONFLICTS``): drawn
    freely, then the label a conflict yields is dropped (SUPPORTED beside another label, PARTIAL beside
    UNSUPPORTED)."""
    return hs.lists(hs.sampled_from(LABEL_VALUES), min_size=1, max_size=3, unique=True).map(
        lambda labels: [label.value for label in cautious_label_set(labels)])


@hs.composite
def claim_bodies(draw, labels=None) -> dict:
    """One claim without its id: 1-3 distinct labels allowed together, optional dimensions, criticality 1-5,
    optional feedback."""
    claim: dict = {
        "labels": list(draw(labels if labels is not None else allowed_label_lists())),
        "criticality": draw(hs.integers(1, 5)),
    }
    if draw(hs.booleans()):
        claim["dimensions"] = draw(hs.lists(hs.sampled_from(DIMENSION_VALUES), min_size=1, max_size=3, unique=True))
    if draw(hs.booleans()):
        claim["feedback_at"] = draw(feedback_times())
    if draw(hs.booleans()):
        claim["feedback_count"] = draw(hs.integers(0, 5))
    if draw(hs.booleans()):
        claim["feedback_resolved"] = draw(hs.booleans())
    # the richer-answer extensions (issue 12): the scorer reads contradicted_by, mitigation reads is_core
    if "CONTRADICTED" in claim["labels"] and draw(hs.booleans()):
        claim["contradicted_by"] = draw(hs.sampled_from(["context", "world"]))
    if draw(hs.booleans()):
        claim["is_core"] = draw(hs.booleans())
    if draw(hs.booleans()):
        claim["category"] = draw(hs.sampled_from(["legal", "health", "general"]))
    if draw(hs.booleans()):
        claim["span"] = draw(hs.sampled_from(["a span", " "]))
    if draw(hs.booleans()):
        claim["source_id"] = draw(hs.sampled_from(["doc-1", "src-a", "elsewhere"]))
    return claim


@hs.composite
def response_dicts(draw, response_id: str | None = None, min_claims: int = 0, max_claims: int = 8) -> dict:
    """One response record; claim ids are ``<response_id>-c<n>``, unique within (and across) responses."""
    rid = response_id if response_id is not None else f"r-{draw(hs.integers(0, 10**6))}"
    bodies = draw(hs.lists(claim_bodies(), min_size=min_claims, max_size=max_claims))
    record = {"response_id": rid, "use_case": draw(hs.sampled_from(["supplier-contracts", "hr-policy", "it-support"])),
              "model": draw(hs.sampled_from(["rag-v3", "rag-v4"])), "claims": []}
    if draw(hs.booleans()):
        record["stakes"] = draw(hs.sampled_from(["low", "medium", "high", "critical"]))
    if draw(hs.booleans()):
        record["query_ambiguous"] = draw(hs.booleans())
    if draw(hs.booleans()):  # chunk doc-1 carries source src-a: either id links a claim to the context
        record["retrieved_context"] = [{"id": "doc-1", "text": "retrieved text", "source_id": "src-a"}]
    for n, body in enumerate(bodies, start=1):
        record["claims"].append({"claim_id": f"{rid}-c{n}", **body})
    return record


def responses(min_size: int = 1, max_size: int = 6, min_claims: int = 0, max_claims: int = 8):
    """A batch of response records with distinct response ids (``r-0``, ``r-1``, ...)."""
    return hs.integers(min_size, max_size).flatmap(
        lambda n: hs.tuples(*(response_dicts(f"r-{i}", min_claims, max_claims) for i in range(n))).map(list)
    )


@hs.composite
def weight_maps(draw) -> dict[str, float]:
    """Random non-negative weights normalised to sum 1 (at least one positive)."""
    raw = draw(hs.lists(_unit, min_size=len(DIMENSIONS), max_size=len(DIMENSIONS)))
    if sum(raw) == 0.0:
        raw[draw(hs.integers(0, len(raw) - 1))] = 1.0
    total = sum(raw)
    return {dim: value / total for dim, value in zip(DIMENSION_VALUES, raw, strict=True)}


@hs.composite
def floor_rules(draw, rule_id: str) -> FloorRule:
    """A floor on a random label: a criticality range, or (sometimes) the repeated-or-unresolved condition."""
    low = draw(hs.integers(1, 5))
    high = draw(hs.none() | hs.integers(low, 6))
    return FloorRule(
        rule_id=rule_id,
        label=draw(hs.sampled_from(LABELS)),
        min_criticality=low,
        max_criticality=high,
        condition=draw(hs.sampled_from(["criticality", "repeated_or_unresolved"])),
        min_feedback_count=draw(hs.integers(1, 4)),
        value=draw(_unit),
        min_action=draw(hs.none() | hs.sampled_from(ACTIONS)),
    )


@hs.composite
def band_lists(draw) -> tuple[Band, ...]:
    """1-5 bands with strictly increasing uppers, the last one ending at 100."""
    inner = draw(hs.lists(hs.floats(min_value=0.0, max_value=99.99, allow_nan=False, allow_subnormal=False),
                          max_size=4, unique=True))
    uppers = sorted(inner) + [100.0]
    return tuple(Band(name=f"band-{i}", upper=upper, action=draw(hs.sampled_from(ACTIONS)))
                 for i, upper in enumerate(uppers))


@hs.composite
def profiles(draw) -> ScoringProfile:
    """A valid profile: random weights, contributions in [0, 1], default dimensions, floors, bands, decay."""
    n_floors = draw(hs.integers(0, 5))
    return ScoringProfile(
        name="random",
        version=draw(hs.integers(1, 50)),
        weights=draw(weight_maps()),
        contributions={label: draw(_unit) for label in LABEL_VALUES},
        default_dimensions={label: tuple(draw(hs.lists(hs.sampled_from(DIMENSION_VALUES), max_size=3, unique=True)))
                            for label in LABEL_VALUES},
        floors=tuple(draw(floor_rules(f"floor-{i}")) for i in range(n_floors)),
        bands=draw(band_lists()),
        feedback_half_life_days=draw(hs.floats(min_value=0.5, max_value=365.0, allow_nan=False)),
        # None: twice the half-life; else a window around the +-120 days of ``feedback_times``
        feedback_repeat_window_days=draw(hs.none() | hs.floats(min_value=0.5, max_value=240.0, allow_nan=False)),
        no_claims_action=draw(hs.sampled_from(ACTIONS)),
        context_contradiction_dimensions=tuple(draw(hs.lists(hs.sampled_from(DIMENSION_VALUES), min_size=1,
                                                             max_size=3, unique=True))),
    )


@hs.composite
def source_registers(draw) -> dict:
    """A source register for the ids ``claim_bodies`` cites (``doc-1``, ``src-a``; ``elsewhere`` is never
    registered: an unknown source), the requesters of its use cases and an approved-use-case register: {"sources":
    rows for ``add_row``, "use_cases": rows for ``save_use_cases``, "use_case_register": rows for ``add_row``}.
    Each source may be left out, superseded, dated (expired at ``AS_OF`` or not), restricted, of any tier or none,
    of any type; each registered use case in any status."""
    rows = []
    for source_id in ("doc-1", "src-a"):
        if not draw(hs.booleans()) and draw(hs.booleans()):
            continue  # not registered: unknown
        rows.append({"source_id": source_id, "title": f"Source {source_id}",
                     "source_type": draw(hs.sampled_from(["official framework", "web page", "preprint"])),
                     "authority_tier": draw(hs.sampled_from([None, 1, 2, 3, 4, 5])), "access_date": "2026-01-01",
                     "valid_until": draw(hs.sampled_from([None, "2026-06-30", "2027-06-30"])),
                     "superseded_by": draw(hs.sampled_from([None, None, "src-new"])),
                     "restricted_to": draw(hs.sampled_from(["", "", "reviewer", "admin; annotator"]))})
    use_cases = [{"use_case": "supplier-contracts", "requester_roles": draw(hs.sampled_from([[], ["reviewer"]]))}]
    if draw(hs.booleans()):
        use_cases.append({"use_case": "hr-policy", "requester_roles": ["viewer", "admin"]})
    # the approved-use-case register (the Scope check): each of two use cases left out or in any status; it-support
    # is never registered (unknown)
    register = []
    for use_case_id in ("supplier-contracts", "hr-policy"):
        status = draw(hs.sampled_from([None, "proposed", "approved", "suspended", "retired"]))
        if status is not None:
            register.append({"use_case_id": use_case_id, "owner": "Olga Owner", "purpose": "parity",
                             "status": status, "approved_by": "Abe Approver" if status == "approved" else None,
                             "review_by": "2027-06-30" if status == "approved" else None})
    return {"sources": rows, "use_cases": use_cases, "use_case_register": register}
