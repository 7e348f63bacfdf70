"""The checks of the pre-submission claim-verification checklist, one place each: the seven of paper Table IX
an eighth, CLAIM's Authority step on the scored answers (seed 004), and a ninth, the paper's Scope check (Fig. 1):
every answer's use case approved in the approved-use-case register and within its review date.

``CHECKS`` is the registry: each ``Check`` has its number, its title (the paper's wording), its scope
(what it looks at, shown with its result) and the function that finds the offending rows.
``run_checks`` runs them in order against the register; nothing is written. Called by the
checklist's runs (``register.governance.checklist``), its page and the CI gate. DOMAIN.md section 7
says how each check is automated.

Vocabulary values reach SQL as bound parameters taken from ``register.governance.vocabulary``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

import pandas as pd

from hri_core import Label
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.governance.evidence import current_rule_version, evaluate_rules
from register.governance.feedback_labels import OUTSIDE_REGISTER, validated_outside_register
from register.governance.vocabulary import (
    ACCEPTABLE_SECONDARY,
    AUTHOR_INTERPRETATION,
    BENCHMARK_NUMBER,
    DESIGN_CHOICE,
    HYPOTHESIS,
    MUTABLE_SOURCE_TYPES,
    ORIGINAL_PROPOSAL,
    PRIMARY,
    PROVISIONAL,
    SETTLED_STATUSES,
    UNSETTLED_STATUSES,
    VENDOR_CAPABILITY,
    VENDOR_DOCUMENTATION,
    WITHDRAWN_STATUSES,
)
from register.labels.agreement import annotation_ratings, criticality_alpha, labels_alpha, severity_order
from register.labels.rubrics import current_rubric
from register.scoring.authority import FORBIDDEN, INSUFFICIENT, STALE
from register.scoring.authority import findings as authority_findings
from register.scoring.profiles import get_profile
from register.scoring.reproduce import TOLERANCE, reproduce
from register.scoring.scope import CHECK as SCOPE_CHECK
from register.scoring.scope import NO_REGISTER, answer_scope_select
from register.scoring.scorer import score_select

__all__ = ["CHECKS", "NOT_EVALUABLE", "REPRODUCE_SAMPLE", "Check", "Context", "Finding", "Found", "run_checks"]

# A check's status when it found nothing wrong but had nothing to judge: it fails unless a reviewer waives it
NOT_EVALUABLE = "not evaluable"

REPRODUCE_SAMPLE = 20  # responses recomputed by the Python reference scorer on top of the full SQL recomputation
_EVIDENCE_SCOPE = "claims checked against the minimum evidence rules in force"
_AUTHORITY_FAILED = (FORBIDDEN, STALE, INSUFFICIENT)  # the failures that send an answer to review
_AUTHORITY_SCOPE = ("current answers' SUPPORTED claims with a source_id, against the current source register and "
                    "the authority rules in force")
# statuses that say a number is not asserted as a sourced fact
_MARKED_PROVISIONAL = (PROVISIONAL, *WITHDRAWN_STATUSES)
# statuses that present an original element as a proposal rather than an established result
_MARKED_AS_PROPOSAL = (PROVISIONAL, HYPOTHESIS, *WITHDRAWN_STATUSES)


@dataclass(frozen=True)
class Finding:
    """One offending row of a check."""

    entity_type: str   # register_claim | source | response
    entity_id: str
    label: str
    reason: str

    def as_dict(self) -> dict:
        return {"entity_type": self.entity_type, "entity_id": self.entity_id, "label": self.label,
                "reason": self.reason}


@dataclass(frozen=True)
class Context:
    """What the checks read: the store, every claim evaluated against the rules in force, the sample size, the day
    the checks judge dates by."""

    store: Store
    evaluation: pd.DataFrame
    sample: int
    today: date


class Found(NamedTuple):
    """A check's offending rows (``Finding.as_dict()``), when it says more than its scope a note, and when
    it could not judge what it is for, why (its status is then ``NOT_EVALUABLE`` unless a row offends)."""

    offending: list[dict]
    note: str | None = None
    not_evaluable: str | None = None


@dataclass(frozen=True)
class Check:
    """One item of Table IX: its number, its title, what it looks at, and how it finds offending rows."""

    no: int
    title: str
    scope: str
    find: Callable[[Context], Found]


def _claim(row, reason: str) -> dict:
    return Finding("register_claim", row["claim_key"], str(row["statement"])[:120], reason).as_dict()


# --- the checks ------------------------------------------------------------------------------------------


def _unsourced_claims(ctx: Context) -> Found:
    """Item 1: every factual claim linked to a primary or acceptable secondary source. An original design choice
    (item 4's) and an author's interpretation (not a factual claim: it says it is the author's reading) are not
    judged here. The note counts the sourced claims by what their sources are to them (``source_basis``: primary,
    acceptable secondary, or not recorded) and those whose links name no locator (page, section or quote)."""
    ev = ctx.evaluation
    bad = ev[(ev["outcome"] == "violation") & ~ev["claim_type"].isin((DESIGN_CHOICE, AUTHOR_INTERPRETATION))]
    p = Params()
    basis = ctx.store.row(f"""SELECT count(*) FILTER (WHERE source_basis = {p(PRIMARY)}) AS primary_,
               count(*) FILTER (WHERE source_basis = {p(ACCEPTABLE_SECONDARY)}) AS secondary,
               count(*) FILTER (WHERE source_basis IS NULL) AS unrecorded,
               count(*) FILTER (WHERE len(list_filter(coalesce(source_locators, []), lambda x: x <> ''))
                                      < len(source_ids)) AS unlocated,
               count(*) FILTER (WHERE len(list_filter(coalesce(source_locators, []), lambda x: x <> '')) > 0) AS located
        FROM register_claims WHERE NOT deleted AND len(coalesce(source_ids, [])) > 0
          AND claim_type <> {p(AUTHOR_INTERPRETATION)}""", p.values, what="the claims' source bases")
    note = None
    if basis["primary_"] or basis["secondary"] or basis["located"]:  # said once the register records them
        note = (f"{_EVIDENCE_SCOPE}; sourced claims: {basis['primary_']:,} on a primary source, "
                f"{basis['secondary']:,} on an acceptable secondary one, {basis['unrecorded']:,} not recorded; "
                f"{basis['unlocated']:,} with a link that names no page, section or quote")
    return Found([_claim(r, f"{r['reason']} (required handling: {r['required_handling']})") for _, r in bad.iterrows()],
                 note)


def _unsourced_numbers(ctx: Context) -> Found:
    ev = ctx.evaluation
    numeric = (ev["claim_type"] == BENCHMARK_NUMBER) | ev["statement"].str.contains(r"(?<![A-Za-z_])\d", regex=True)
    sourced = ev["reason"].str.startswith("acceptable source")
    bad = ev[numeric & ~sourced & ~ev["verification_status"].isin(_MARKED_PROVISIONAL)]
    return Found([_claim(r, f"a number or threshold without an acceptable source, marked {r['verification_status']!r} "
                            "(source it or mark it provisional)") for _, r in bad.iterrows()])


def _vendor_claims(ctx: Context) -> Found:
    p = Params()
    rows = ctx.store.frame(f"""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM register_claims WHERE NOT deleted)
        SELECT c.claim_key, c.statement, c.claim_type,
               string_agg(s.source_id, ', ' ORDER BY s.source_id) AS vendor_sources
        FROM register_claims c JOIN links l ON l.claim_key = c.claim_key
        JOIN sources s ON s.source_id = l.source_id AND NOT s.deleted AND s.source_type = {p(VENDOR_DOCUMENTATION)}
        WHERE NOT c.deleted AND c.claim_type <> {p(VENDOR_CAPABILITY)}
        GROUP BY c.claim_key, c.statement, c.claim_type, c.created_at ORDER BY c.created_at, c.claim_key""", p.values)
    return Found([_claim(r, f"rests on vendor documentation ({r['vendor_sources']}) but is typed {r['claim_type']!r}, "
                            f"not {VENDOR_CAPABILITY!r}") for _, r in rows.iterrows()])


def _original_elements(ctx: Context) -> Found:
    p = Params()
    design, marked = p(DESIGN_CHOICE), p.in_list(_MARKED_AS_PROPOSAL)
    rows = ctx.store.frame(f"""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM register_claims WHERE NOT deleted),
        prop AS (SELECT DISTINCT l.claim_key FROM links l JOIN sources s ON s.source_id = l.source_id
                 AND NOT s.deleted AND s.source_type = {p(ORIGINAL_PROPOSAL)})
        SELECT c.claim_key, c.statement, c.claim_type, c.verification_status, prop.claim_key IS NOT NULL AS proposal
        FROM register_claims c LEFT JOIN prop ON prop.claim_key = c.claim_key
        WHERE NOT c.deleted AND c.verification_status NOT IN {marked} AND (
            (c.claim_type = {design} AND prop.claim_key IS NULL)
         OR (c.claim_type <> {design} AND prop.claim_key IS NOT NULL))
        ORDER BY c.created_at, c.claim_key""", p.values)
    out = []
    for _, r in rows.iterrows():
        if r["claim_type"] == DESIGN_CHOICE:
            out.append(_claim(r, f"original element marked {r['verification_status']!r} without an "
                                 f"{ORIGINAL_PROPOSAL!r} source: link the proposal or mark it provisional / "
                                 "hypothesis"))
        else:
            out.append(_claim(r, f"rests on an original proposal but is typed {r['claim_type']!r} and marked "
                                 f"{r['verification_status']!r}: present it as a design choice or hypothesis"))
    return Found(out)


def _unsettled_claims(ctx: Context) -> Found:
    p = Params()
    rows = ctx.store.frame(f"SELECT claim_key, statement, verification_status FROM register_claims WHERE NOT deleted "
                           f"AND verification_status IN {p.in_list(UNSETTLED_STATUSES)} ORDER BY created_at, claim_key",
                           p.values)
    q = Params()
    settled = dict(ctx.store.query(f"SELECT verification_status, count(*) FROM register_claims WHERE NOT deleted "
                                   f"AND verification_status IN {q.in_list(SETTLED_STATUSES)} GROUP BY ALL", q.values))
    note = None
    if settled:  # item 5's own words: removed, softened, or moved to future work
        note = "settled: " + ", ".join(f"{settled.get(s, 0):,} {s}" for s in SETTLED_STATUSES)
    return Found([_claim(r, f"marked {r['verification_status']!r}: remove, soften (and re-verify) or move to "
                            "future work") for _, r in rows.iterrows()], note)


def _undated_mutable_sources(ctx: Context) -> Found:
    rows = ctx.store.frame("SELECT source_id, title, source_type FROM sources WHERE NOT deleted "
                           "AND access_date IS NULL AND list_contains(?, source_type) ORDER BY source_id",
                           [list(MUTABLE_SOURCE_TYPES)])
    return Found([Finding("source", r["source_id"], str(r["title"] or "")[:120],
                          f"{r['source_type']} without an access date").as_dict() for _, r in rows.iterrows()])


def _unreproducible_scores(ctx: Context) -> Found:
    """Every current score recomputed in SQL from its labels under its recorded profile version and
    as-of time, plus a sample recomputed by the Python reference scorer (``register.scoring.reproduce``)."""
    store = ctx.store
    total = store.scalar("SELECT count(*) FROM scores WHERE is_current")
    if not total:
        return Found([], "no stored scores to reproduce")
    out: dict[str, dict] = {}
    missing = store.query("SELECT DISTINCT s.profile_version FROM scores s LEFT JOIN scoring_profiles p "
                          "ON p.profile_version = s.profile_version WHERE s.is_current AND p.profile_version IS NULL") \
        if _has_table(store, "scoring_profiles") else []
    for (version,) in missing:
        out[f"profile-{version}"] = Finding("response", f"profile {version}", "",
                                            "scores recorded a profile version that is not stored").as_dict()
    # a score that failed closed reproduces nothing: it is a finding of its own, with its reason
    for rid, why in store.query("SELECT response_id, scoring_failure FROM scores WHERE is_current "
                                "AND scoring_failure IS NOT NULL ORDER BY response_id"):
        out[rid] = Finding("response", rid, "", f"could not be scored (sent to review): {why}").as_dict()
    groups = store.query("SELECT DISTINCT profile_version, as_of FROM scores WHERE is_current ORDER BY 1, 2")
    for version, as_of in groups:
        if f"profile-{version}" in out:
            continue
        p = Params()
        recomputed = score_select(get_profile(store, version), as_of, p)
        rows = store.query(f"""
            WITH rec AS ({recomputed})
            SELECT s.response_id, s.score, rec.score, s.band, rec.band, s.action, rec.action
            FROM scores s JOIN rec ON rec.response_id = s.response_id AND rec.revision = s.revision
            WHERE s.is_current AND s.profile_version = {p(version)} AND s.as_of = {p(as_of)}
              AND (abs(s.hri - rec.hri) > {p(TOLERANCE)} OR abs(s.hri_add - rec.hri_add) > {p(TOLERANCE)}
                   OR s.band <> rec.band
                   OR s.action <> rec.action OR s.no_claims <> rec.no_claims)
            ORDER BY s.response_id""", p.values)
        for rid, s_score, r_score, s_band, r_band, s_action, r_action in rows:
            out[rid] = Finding("response", rid, "", f"stored {s_score:.4f} {s_band}/{s_action}, recomputed "
                                                    f"{r_score:.4f} {r_band}/{r_action}").as_dict()
    picked = store.query("SELECT response_id FROM scores WHERE is_current ORDER BY md5(response_id) LIMIT ?",
                         [ctx.sample])
    for (rid,) in picked:
        if rid in out:
            continue
        rep = reproduce(store, rid)
        if not rep.matches:
            out[rid] = Finding("response", rid, "", "reference scorer: " + "; ".join(rep.differences)).as_dict()
    note = (f"{total:,} current scores recomputed in SQL from labels under their recorded profile versions; "
            f"{len(picked)} of them also by the Python reference scorer")
    labels_found, labels_note, not_evaluable = _labels_from_the_rubric(store)
    found = sorted(out.values(), key=lambda f: f["entity_id"]) + labels_found
    return Found(found, f"{note}; {labels_note}", not_evaluable)


LABEL_FINDINGS_SHOWN = 100  # responses named one by one; the note gives the total


def _labels_from_the_rubric(store: Store) -> tuple[list[dict], str, str | None]:
    """Checklist item 7's labelling half (``register.labels``). In scope: the current scored responses drawn into a
    labelling batch. Each of their claims must carry labels annotated (two or more annotators who agreed) or
    adjudicated under the rubric in force, and the annotators' agreement under that rubric (Krippendorff's alpha on
    the worst label, nominal, and on criticality, ordinal) must be at least the rubric's ``min_agreement_alpha``.
    Responses never drawn are counted in the note: their labels are imported, taken on trust.

    Returns (findings, note, why not evaluable). When there are scored answers but not one claim of them has labels
    annotated or adjudicated under the rubric in force (or no rubric is published), nothing shows the labels follow
    the rubric: the item is not evaluable, never a pass."""
    scope = """
        WITH scored AS (SELECT c.response_id, c.revision, c.claim_id,
                               EXISTS (SELECT 1 FROM label_batch_items i WHERE i.response_id = c.response_id) AS drawn
                        FROM claims c JOIN scores s ON s.response_id = c.response_id AND s.revision = c.revision
                             AND s.is_current WHERE c.is_current),
        resolved AS (SELECT DISTINCT response_id, revision, claim_id FROM label_provenance
                     WHERE rubric_version = $v AND provenance IN ('annotated', 'adjudicated'))"""
    rubric = current_rubric(store)
    version = rubric.version if rubric is not None else -1
    counts = store.row(scope + """
        SELECT count(*) FILTER (WHERE drawn) AS claims, count(r.claim_id) FILTER (WHERE drawn) AS resolved,
               count(DISTINCT sc.response_id) FILTER (WHERE drawn AND r.claim_id IS NULL) AS responses_open,
               count(DISTINCT sc.response_id) FILTER (WHERE NOT drawn) AS not_drawn,
               count(DISTINCT sc.response_id) AS scored, count(r.claim_id) AS resolved_any
        FROM scored sc LEFT JOIN resolved r USING (response_id, revision, claim_id)""", {"v": version},
        what="the count of labelled claims")
    trust = f"{counts['not_drawn']:,} scored response(s) never drawn into a labelling batch (imported labels)"
    not_evaluable = None
    if counts["scored"] and rubric is None:
        not_evaluable = ("no labelling rubric is published: whether the labels follow one cannot be evaluated "
                         "(publish the rubric and label a sample in a labelling batch)")
    elif counts["scored"] and not counts["resolved_any"]:
        not_evaluable = (f"no scored answer has labels annotated or adjudicated under rubric v{version}: whether the "
                         "labels follow the rubric cannot be evaluated (label a sample in a labelling batch)")
    if not counts["claims"]:
        return [], f"no scored response drawn into a labelling batch; {trust}", not_evaluable
    if rubric is None:
        return ([Finding("rubric", "rubric", "", "no labelling rubric is published: labels cannot be checked "
                                                 "against one").as_dict()], f"no labelling rubric published; {trust}",
                not_evaluable)
    found = [Finding("response", rid, "", f"{n} of its scored claims have no labels annotated or adjudicated under "
                                          f"rubric v{version}").as_dict()
             for rid, n in store.query(scope + """
        SELECT sc.response_id, count(*) FROM scored sc LEFT JOIN resolved r USING (response_id, revision, claim_id)
        WHERE sc.drawn AND r.claim_id IS NULL
        GROUP BY sc.response_id ORDER BY sc.response_id LIMIT $limit""", {"v": version, "limit": LABEL_FINDINGS_SHOWN})]
    note = (f"{counts['resolved']:,} of {counts['claims']:,} scored claims drawn for labelling have labels annotated "
            f"or adjudicated under rubric v{version} ({rubric.name}); {counts['responses_open']:,} response(s) have "
            f"claims without")
    if counts["responses_open"] > LABEL_FINDINGS_SHOWN:
        note += f" (the first {LABEL_FINDINGS_SHOWN} are named)"
    note += f"; {trust}"
    threshold = rubric.min_agreement_alpha
    ratings = annotation_ratings(store, rubric_version=version)
    if ratings.empty:
        return found, note + f"; no annotations under rubric v{version}: agreement not measured", not_evaluable
    severity = severity_order(store)
    measured = []
    for what, result in (("labels (worst label, nominal)", labels_alpha(ratings, severity)),
                         ("criticality (ordinal)", criticality_alpha(ratings))):
        if result.alpha is None and result.pairable == 0:
            found.append(Finding("rubric", f"rubric v{version}", what, "no claim was labelled by two annotators: "
                                                                       "agreement cannot be measured").as_dict())
            measured.append(f"{what}: not measurable")
        elif result.alpha is None:
            measured.append(f"{what}: every pairable value is the same (no disagreement)")
        else:
            measured.append(f"{what} alpha {result.alpha:.3f}")
            if threshold is not None and result.alpha < threshold:
                found.append(Finding("rubric", f"rubric v{version}", what,
                                     f"agreement alpha {result.alpha:.3f} is below the rubric's threshold "
                                     f"{threshold:.3f} ({result.units} units, {result.raters} annotators)").as_dict())
    limit = "no agreement threshold set" if threshold is None else f"threshold {threshold:.3f}"
    return found, note + f"; agreement under rubric v{version} ({limit}): " + ", ".join(measured), not_evaluable


def _feedback_validated_outside(ctx: Context) -> Found:
    """VALIDATED_NEGATIVE_FEEDBACK labels with no validation record in the register: the paper counts only
    feedback "confirmed by a reviewer, source check, or adjudication process" (V.A), and for these nobody
    here can say who confirmed it, how or when (``register.governance.feedback_labels``)."""
    rows = validated_outside_register(ctx.store)
    labelled = ctx.store.scalar("SELECT count(*) FROM claims WHERE is_current AND list_contains(labels, ?)",
                                [Label.VALIDATED_NEGATIVE_FEEDBACK.value])
    found = [Finding("response", r["response_id"], f"claim {r['claim_id']}",
                     f"{Label.VALIDATED_NEGATIVE_FEEDBACK.value} {OUTSIDE_REGISTER}: no record of who validated "
                     "it, how or when (validate the problem on the Feedback page, or remove the label)").as_dict()
             for _, r in rows.iterrows()]
    note = (f"{labelled:,} current {Label.VALIDATED_NEGATIVE_FEEDBACK.value} label(s) checked for a validation "
            f"record: {len(found):,} {OUTSIDE_REGISTER}") if labelled else None
    return Found(found, note)


def _labels_and_scores(ctx: Context) -> Found:
    """Item 7: the stored scores reproduce from their labels, and every feedback label was validated here."""
    scores, feedback = _unreproducible_scores(ctx), _feedback_validated_outside(ctx)
    note = "; ".join(n for n in (scores.note, feedback.note) if n) or None
    return Found(scores.offending + feedback.offending, note, scores.not_evaluable)


def _unauthoritative_answer_sources(ctx: Context) -> Found:
    """CLAIM's Authority step on the current answers (``register.scoring.authority``): a SUPPORTED claim whose
    source is forbidden to the use case's requesters, stale, or of insufficient authority for its category.
    Unknown sources and undecided checks are counted in the note (they queue nothing)."""
    found = authority_findings(ctx.store)
    found = found[found["check"] != SCOPE_CHECK]  # the Scope check's are item 9's
    failed = found[found["proposed_label"].notna() & found["problem"].isin(_AUTHORITY_FAILED)]
    out = [Finding("response", r["response_id"], f"claim {r['claim_id']}: {str(r['claim'] or '')[:100]}",
                   f"{r['problem']} {r['source_id']} ({r['reason']}), proposed {r['proposed_label']}").as_dict()
           for _, r in failed.iterrows()]
    rest = found[~found.index.isin(failed.index)]
    note = None
    if not rest.empty:
        note = (f"{_AUTHORITY_SCOPE}; besides, {len(rest):,} check(s) unknown or undecided or on claims not SUPPORTED "
                "(python -m register authority check lists them)")
    return Found(out, note)


def _answers_out_of_scope(ctx: Context) -> Found:
    """Not an item of Table IX: the Scope check (paper Fig. 1) on the current answers, one finding per use case
    whose answers are out of scope (unknown to the register, not approved, suspended, retired or past its review
    date), with how many answers. Passes with a note while the register lists no use case (nothing is kept to check
    against: a team that keeps none sees no failure)."""
    p = Params()
    answers = "(SELECT response_key, use_case FROM responses WHERE is_current)"
    rows = ctx.store.frame(f"""SELECT use_case, any_value(scope_status) AS scope_status, any_value(reason) AS reason,
                                      count(*) AS answers
        FROM ({answer_scope_select(p, ctx.today, answers)}) WHERE problem IS NOT NULL OR scope_status = {p(NO_REGISTER)}
        GROUP BY use_case ORDER BY use_case NULLS FIRST""", p.values)
    if not rows.empty and (rows["scope_status"] == NO_REGISTER).all():
        return Found([], "no use case is registered (Use cases page): nothing to check the answers' use cases against")
    return Found([Finding("use_case", str(r["use_case"]) if isinstance(r["use_case"], str) else "(none)",
                          f"{int(r['answers']):,} current answer(s)", str(r["reason"])).as_dict()
                  for _, r in rows.iterrows()])


def _has_table(store: Store, name: str) -> bool:
    return bool(store.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]))


CHECKS: tuple[Check, ...] = (
    Check(1, "Every factual claim is linked to a primary or acceptable secondary source.",
          _EVIDENCE_SCOPE, _unsourced_claims),
    Check(2, "Every numerical value, benchmark property, and threshold is either sourced or explicitly marked as "
             "provisional.",
          "claims typed as numbers or containing digits", _unsourced_numbers),
    Check(3, "Vendor claims are labeled as vendor claims and are not presented as independent validation.",
          "claims resting on vendor documentation", _vendor_claims),
    Check(4, "Original elements of the HRI are described as proposals, design choices, or hypotheses, not as "
             "established standards.",
          "original design choices and claims resting on the paper's own proposals", _original_elements),
    Check(5, "Ambiguous or unverifiable claims are removed, softened, or moved to future work.",
          "claims still unverified or partially verified", _unsettled_claims),
    Check(6, "Mutable web sources include access dates in the reference list or verification register.",
          "web pages, vendor pages and repository documentation", _undated_mutable_sources),
    Check(7, "Claim labels, criticality weights, and safety floors are reproducible from the documented rubric.",
          "current scores recomputed from their labels under their recorded profile versions; their claims' labels "
          "annotated or adjudicated under the rubric in force, with agreement at or above its threshold; feedback "
          "labels checked for a validation record", _labels_and_scores),
    # not an item of Table IX: CLAIM's Authority step (seed 004) on the scored answers
    Check(8, "Supported answer claims rest on sources that are allowed, current and authoritative.",
          _AUTHORITY_SCOPE, _unauthoritative_answer_sources),
    # not an item of Table IX: the paper's Scope check (Fig. 1) against the approved-use-case register
    Check(9, "Every answer's use case is approved and within its review date.",
          "current answers' use cases against the approved-use-case register", _answers_out_of_scope),
)


def run_checks(store: Store, *, today: date | None = None, sample: int = REPRODUCE_SAMPLE) -> dict:
    """The checks against the register now: ``{"rule_version", "checks": [{no, title, status, automated,
    offending: [...], note, not_evaluable}], "summary": {...}}``. Nothing is written.

    A check's status is ``fail`` when it found offending rows, else ``NOT_EVALUABLE`` when it had nothing to judge
    (``not_evaluable`` says why), else ``pass``. A check not evaluable fails
    unless a reviewer waives it: ``summary["failed_checks"]`` lists it (the run's outcome and the CI gate fail), and
    ``summary["not_evaluable_checks"]`` names it apart."""
    version = current_rule_version(store)
    ev = evaluate_rules(store, version, today=today)
    ctx = Context(store, ev, sample, today or utc_now().date())
    checks = []
    for check in CHECKS:
        offending, note, not_evaluable = check.find(ctx)
        status = "fail" if offending else NOT_EVALUABLE if not_evaluable else "pass"
        checks.append({"no": check.no, "title": check.title, "automated": True, "status": status,
                       "offending": offending, "not_evaluable": not_evaluable, "note": note or check.scope})
    counts = store.row("SELECT count(*) FILTER (WHERE NOT deleted) AS claims, count(*) FILTER (WHERE deleted) AS "
                       "claims_deleted FROM register_claims", what="the count of register claims")
    summary = {"claims": counts["claims"], "claims_deleted": counts["claims_deleted"],
               "sources": store.scalar("SELECT count(*) FROM sources WHERE NOT deleted"),
               "violations": int((ev["outcome"] == "violation").sum()),
               "by_status": {k: int(v) for k, v in ev["verification_status"].value_counts().sort_index().items()},
               "failed_checks": [c["no"] for c in checks if c["status"] != "pass"],
               "not_evaluable_checks": [c["no"] for c in checks if c["status"] == NOT_EVALUABLE]}
    return json.loads(json.dumps({"rule_version": version, "checks": checks, "summary": summary}, default=str))
