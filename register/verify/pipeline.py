"""The verification pipeline: extract -> link -> infer, stored as proposals and as a new revision of each response.

    python -m register verify INPUT.jsonl [--profile F] [--link-threshold X]

Input: JSON Lines, one answer a line: ``question``, ``answer``, ``retrieved_context`` (a list of chunks: text,
or ``{"id", "text", "source_id"}``), optional ``gt_answer`` (the target), ``response_id`` (default: a hash of
question and answer), ``use_case``, ``model``, ``stakes``, and for all its claims ``category`` and
``criticality``. A bad line is reported naming its line and field, and skipped; the others are verified.

Steps for each answer:

1. **Extract**: the LLM judge splits the answer into atomic claims; the offline judges take its sentences
   (``split_sentences``; a sentence may hold several claims, said in each proposal's provenance).
2. **Link**: each claim's best span among the chunks, by claim-word recall (``link_score``); a claim with no
   span at ``link_threshold`` or above is **UNLINKED** (its own flag; an unlinked claim is never cleared).
3. **Infer**: the judge's verdict on each claim against the chunks (and, with a target, against the target,
   kept as ``target_label``); an offline judge never clears a claim of a critical category or high stakes.

Every verdict becomes a *proposal* in ``judge_proposals`` with its provenance (judge profile, backend,
confidence, reason, span, link score). A verdict the active judge policy allows is applied at once (status
``applied``); every other claim enters the register as UNSUPPORTED -- unverified counts as unsupported, the
fail-closed reading -- until a person confirms or corrects its proposal (``register.verify.proposals``).
The responses are stored through ``register.ingest.revise.revise_responses(origin="verification")``: a new
revision each, audited and scored. A linked claim carries its chunk's ``source_id`` (so Authority checks the
source it rests on); an UNLINKED claim carries no span, and its proposal says no evidence is linked.

A judge never overwrites a person: an answer that already has claims in the register is not re-extracted and
gets no new revision. Its stored claims are judged as they stand and every verdict on them -- even one the
policy would apply, and never an abstention -- waits beside the current labels as a proposal, which changes a
label only when a person confirms it. Starting such a run needs a reviewer (``Permission.REVIEW_DECIDE``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hri_core import Response
from hri_core.fingerprint import fingerprint
from hri_core.judge_policy import JudgePolicy, offline_may_clear
from hri_core.judging import Judge, Verdict, abstention
from hri_core.models import DEFAULT_LIMITS, parse_response
from hri_core.offline_judge import extract_features, split_sentences
from hri_core.readers import decode_object
from hri_core.vocabulary import CATEGORIES, STAKES, Label
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import RegisterError
from register.ingest.revise import revise_responses
from register.verify.policy import active_policy

__all__ = ["LINK_THRESHOLD", "UNVERIFIED_LABEL", "VerifyInput", "VerifyReport", "read_inputs", "verify"]

# Half of a claim's words in one span: below it the claim is UNLINKED (no span backs it).
LINK_THRESHOLD = 0.5
# The label a claim carries until a person (or the policy) sets one: unverified counts as unsupported.
UNVERIFIED_LABEL = Label.UNSUPPORTED
MAX_CRITICALITY = 5

Progress = Callable[[int, int | None, str], None]


@dataclass(frozen=True)
class VerifyInput:
    """One answer to verify (a valid input line)."""

    line: int
    response_id: str
    question: str | None
    answer: str
    chunks: tuple[dict[str, Any], ...]
    gt_answer: str | None
    use_case: str | None
    model: str | None
    stakes: str | None
    category: str | None
    criticality: int
    created_at: datetime | None = None  # a stored answer's time, kept in its verified revision


@dataclass
class VerifyReport:
    """What a run did: responses and claims, verdict counts by status and label, the batch and run ids."""

    run_id: int = 0
    batch_id: int | None = None
    score_run_id: int | None = None
    responses: int = 0
    claims: int = 0
    unlinked: int = 0
    applied: int = 0
    proposed: int = 0
    abstained: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    kept: int = 0  # answers that already had claims: their labels stay, the verdicts wait as proposals

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return dict(self.__dict__)


def _problem(where: str, name: str, message: str) -> str:
    return f"{where}: {name}: {message}" if name else f"{where}: {message}"


def parse_input(line: int, text: str, where: str | None = None) -> VerifyInput | list[str]:
    """One input line as a ``VerifyInput``, or its problems, each naming the field and ``where`` the input
    is (default ``line <line>``; a stored answer says ``response <id>``)."""
    where = where or f"line {line}"
    data, decoding = decode_object(text)  # strictly, as every import reads JSON (duplicate keys, NaN...)
    if data is None:
        return [_problem(where, p.loc, p.message) for p in decoding]
    problems: list[str] = []
    answer = data.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        problems.append(_problem(where, "answer", "required: a non-empty string"))
    chunks: list[dict[str, Any]] = []
    context = data.get("retrieved_context")
    if not isinstance(context, list):
        problems.append(_problem(where, "retrieved_context", "required: a list of chunks (text or {id, text})"))
    else:
        for i, chunk in enumerate(context):
            if isinstance(chunk, str):
                chunks.append({"id": f"chunk-{i + 1}", "text": chunk})
            elif isinstance(chunk, dict) and isinstance(chunk.get("text"), str):
                chunks.append({"id": str(chunk.get("id") or chunk.get("doc_id") or f"chunk-{i + 1}"),
                               "text": chunk["text"], **({"source_id": str(chunk["source_id"])}
                                                         if chunk.get("source_id") else {})})
            else:
                problems.append(_problem(where, f"retrieved_context[{i}]", "must be text or an object with text"))
    optional: dict[str, str | None] = {}
    for name in ("question", "gt_answer", "response_id", "use_case", "model", "stakes", "category"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            problems.append(_problem(where, name, "must be a string when given"))
            value = None
        optional[name] = value.strip() if isinstance(value, str) and value.strip() else None
    if optional["stakes"] is not None and optional["stakes"] not in STAKES:
        problems.append(_problem(where, "stakes", f"one of {', '.join(STAKES)}"))
    if optional["category"] is not None and optional["category"] not in CATEGORIES:
        problems.append(_problem(where, "category", f"one of {', '.join(CATEGORIES)}"))
    for name, limit in (("answer", DEFAULT_LIMITS.answer), ("question", DEFAULT_LIMITS.question),
                        ("gt_answer", DEFAULT_LIMITS.answer)):
        value = data.get(name)
        if isinstance(value, str) and len(value) > limit:
            problems.append(_problem(where, name, f"longer than {limit:,} characters"))
    criticality = data.get("criticality", 1)
    if isinstance(criticality, bool) or not isinstance(criticality, int) or not 1 <= criticality <= MAX_CRITICALITY:
        problems.append(_problem(where, "criticality", f"a whole number from 1 to {MAX_CRITICALITY}"))
    if problems:
        return problems
    assert isinstance(answer, str) and isinstance(criticality, int)
    # derived ids of answers verified before: text as UTF-8, json.dumps's spaced separators
    response_id = optional["response_id"] or "v-" + fingerprint([optional["question"], answer], ensure_ascii=False,
                                                                compact=False)[:16]
    return VerifyInput(line, response_id, optional["question"], answer, tuple(chunks), optional["gt_answer"],
                       optional["use_case"], optional["model"], optional["stakes"], optional["category"], criticality)


def read_inputs(lines: Iterable[str]) -> Iterator[VerifyInput | list[str]]:
    """Parsed inputs or the problems of each non-blank line; a repeated response_id is a problem."""
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        result = parse_input(number, text)
        if isinstance(result, VerifyInput):
            if result.response_id in seen:
                yield [_problem(f"line {number}", "response_id", f"duplicate of line {seen[result.response_id]}")]
                continue
            seen[result.response_id] = number
        yield result


@dataclass(frozen=True)
class _Claim:
    """One extracted claim with its link."""

    source: VerifyInput
    index: int
    text: str
    span: str | None
    evidence_index: int | None
    link_score: float
    extraction: str
    source_id: str | None = None  # the linked chunk's source (None when unlinked or the chunk names none)
    stored: dict[str, Any] | None = None  # the claim as the register holds it (a person's labels): never replaced


def _extract(judge: Judge, item: VerifyInput) -> tuple[list[str], str]:
    """The claims of an answer and how they were extracted."""
    extract = getattr(judge, "extract_claims", None)
    if callable(extract):
        claims = extract(item.question, item.answer)
        if claims:
            return list(claims), f"{judge.profile.key} extract"
        return split_sentences(item.answer), "sentences (the LLM extraction failed)"
    return split_sentences(item.answer), "sentences"


def _link(item: VerifyInput, texts: Sequence[str], extraction: str,
          stored: Sequence[dict[str, Any]] | None = None) -> list[_Claim]:
    """Each claim's best span among the chunks, and the source of the chunk it comes from. ``stored``: the
    register's claims the texts are (their index is the stored claim's position)."""
    chunks = [c["text"] for c in item.chunks]
    out = []
    for i, text in enumerate(texts):
        features = extract_features(text, chunks)
        span = features.span
        chunk = item.chunks[span.item] if span is not None and span.item is not None \
            and 0 <= span.item < len(item.chunks) else None
        held = stored[i] if stored is not None else None
        out.append(_Claim(item, held["claim_idx"] if held else i, text, span.text if span else None,
                          span.item if span else None, round(features.content_recall, 4) if span else 0.0,
                          extraction, chunk.get("source_id") if chunk else None, held))
    return out


def _answers_as_stored(store: Store, inputs: Sequence[VerifyInput], existing: dict[str, list[dict[str, Any]]]
                       ) -> tuple[list[VerifyInput], list[str]]:
    """The inputs to verify, and the problems of those left out: an input whose response has claims in the
    register under another answer text would replace people's claims with a judge's; it is named (import the
    new answer first, then verify it) and ``existing`` forgets it."""
    if not existing:
        return list(inputs), []
    stored = dict(store.query("SELECT response_id, answer FROM responses WHERE is_current "
                              "AND list_contains(?, response_id)", [sorted(existing)]))
    kept, problems = [], []
    for item in inputs:
        if item.response_id in existing and stored.get(item.response_id) != item.answer:
            problems.append(_problem(f"line {item.line}", "answer", f"response {item.response_id} has claims in the "
                                     "register under another answer text: import the new answer first, then "
                                     "verify it"))
            del existing[item.response_id]
        else:
            kept.append(item)
    if not kept:
        raise RegisterError("nothing to verify: " + "; ".join(problems))
    return kept, problems


def _stored_claims(store: Store, inputs: Sequence[VerifyInput]) -> dict[str, list[dict[str, Any]]]:
    """The current claims (with text) of the inputs already in the register with claims, by response id."""
    rows = store.dicts("SELECT response_id, claim_idx, claim_id, text, criticality, category FROM claims "
                       "WHERE is_current AND list_contains(?, response_id) ORDER BY response_id, claim_idx",
                       [sorted({item.response_id for item in inputs})])
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["response_id"], []).append(row)
    return out


def _guarded(judge: Judge, claim: _Claim, verdict: Verdict, link_threshold: float) -> Verdict:
    """The verdict after the pipeline's own guards: unlinked and (offline) critical claims are never cleared."""
    if verdict.label is not Label.SUPPORTED:
        return verdict
    if claim.link_score < link_threshold:
        return abstention(judge.profile, f"needs review: UNLINKED, no evidence is linked (claim-word recall "
                                         f"{claim.link_score:.2f} of the best span, below {link_threshold:.2f})",
                          verdict.confidence)
    item = claim.source
    if judge.profile.backend.startswith("offline-") and not offline_may_clear(item.category, item.stakes):
        what = f"a {item.category} claim" if item.category else f"a {item.stakes}-stakes answer"
        return abstention(judge.profile, f"needs review: an offline judge never clears {what}", verdict.confidence,
                          span=verdict.span, evidence_index=verdict.evidence_index, cited=verdict.cited,
                          cited_sentences=verdict.cited_sentences)
    return verdict


def verify(store: Store, actor: Actor, inputs: Sequence[VerifyInput], judge: Judge, *, source_name: str,
           link_threshold: float = LINK_THRESHOLD, progress: Progress | None = None) -> VerifyReport:
    """Verify ``inputs`` with ``judge``; store proposals and the new revisions; return the report."""
    authorize(store, actor, Permission.LABEL, entity_type="verification_run")
    if not inputs:
        raise RegisterError("nothing to verify: no valid input line")
    if not 0.0 < link_threshold <= 1.0:
        raise RegisterError(f"link threshold {link_threshold} must lie in (0, 1]")
    existing = _stored_claims(store, inputs)
    inputs, problems = _answers_as_stored(store, inputs, existing)
    if existing:  # a run over people's claims: only a reviewer starts it (its proposals may replace them)
        authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="verification_run",
                  entity_id=", ".join(sorted(existing)[:10]))
    policy = active_policy(store)
    run_id = _open_run(store, actor, source_name, judge, policy, link_threshold)
    ledger = getattr(judge, "ledger", None)
    if ledger is not None and hasattr(ledger, "run_id"):
        ledger.run_id = run_id  # the LLM judge's usage rows name this run
    claims: list[_Claim] = []
    for done, item in enumerate(inputs, start=1):
        held = [c for c in existing.get(item.response_id, []) if c["text"]]  # a claim without text has no verdict
        if item.response_id in existing:
            claims.extend(_link(item, [c["text"] for c in held], "stored claims", held))
        else:
            texts, how = _extract(judge, item)
            claims.extend(_link(item, texts, how))
        if progress:
            progress(done, len(inputs), "answers extracted and linked")
    verdicts: list[Verdict] = []
    targets: list[Label | None] = []
    step = 64
    for start in range(0, len(claims), step):
        part = claims[start:start + step]
        raw = judge.judge_batch([(c.text, [ch["text"] for ch in c.source.chunks]) for c in part])
        verdicts.extend(_guarded(judge, c, v, link_threshold) for c, v in zip(part, raw, strict=True))
        with_target = [c for c in part if c.source.gt_answer]
        judged = iter(judge.judge_batch([(c.text, [c.source.gt_answer or ""]) for c in with_target])
                      if with_target else [])
        targets.extend(next(judged).label if c.source.gt_answer else None for c in part)
        if progress:
            progress(min(start + step, len(claims)), len(claims), "claims judged")
    rows, responses, report = _decide([i for i in inputs if i.response_id not in existing], claims, verdicts,
                                      targets, judge, policy, link_threshold)
    report.responses, report.kept, report.problems = len(inputs), len(existing), problems
    report.run_id = run_id
    if responses:
        batch = revise_responses(store, actor, responses, origin="verification",
                                 subject=f"verification run {run_id}: {source_name}", permission=Permission.LABEL)
        report.batch_id, report.score_run_id = batch.batch_id or None, batch.score_run_id
    _store_proposals(store, actor, run_id, rows, report)
    return report


def _open_run(store: Store, actor: Actor, source_name: str, judge: Judge, policy: JudgePolicy | None,
              link_threshold: float) -> int:
    def write(tx: Transaction) -> Change:
        run_id = int(tx.scalar("SELECT nextval('seq_verification_run')"))
        tx.execute("INSERT INTO verification_runs (run_id, started_at, actor_name, source_name, judge_profile, "
                   "backend, policy_version, link_threshold) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [run_id, utc_now(), actor.name, source_name[:500], judge.profile.key, judge.profile.backend,
                    policy.version if policy else None, link_threshold])
        return Change("verification_run", str(run_id), None,
                      {"source": source_name[:500], "judge_profile": judge.profile.key,
                       "policy_version": policy.version if policy else None}, result=run_id)

    return int(store.write(actor, "verify.start", write))


def _decide(inputs: Sequence[VerifyInput], claims: Sequence[_Claim], verdicts: Sequence[Verdict],
            targets: Sequence[Label | None], judge: Judge, policy: JudgePolicy | None,
            link_threshold: float) -> tuple[list[list[Any]], list[Response], VerifyReport]:
    """Proposal rows, the responses to store (``inputs``: those without claims in the register; applied labels
    or the unverified one) and the report. A stored claim's verdict is always a proposal."""
    report = VerifyReport(responses=len(inputs), claims=len(claims))
    by_input: dict[int, list[dict[str, Any]]] = {item.line: [] for item in inputs}
    rows: list[list[Any]] = []
    for claim, verdict, target in zip(claims, verdicts, targets, strict=True):
        item, held = claim.source, claim.stored
        category = held["category"] if held else item.category
        criticality = int(held["criticality"]) if held else item.criticality
        rule = policy.allows(profile=verdict.profile, backend=verdict.backend, label=verdict.label,
                             confidence=verdict.confidence, category=category, stakes=item.stakes,
                             criticality=criticality) if policy and held is None else None
        status = "applied" if rule is not None else "proposed"
        label = verdict.label if rule is not None and verdict.label is not None else UNVERIFIED_LABEL
        unlinked = claim.link_score < link_threshold
        report.unlinked += unlinked
        report.applied += status == "applied"
        report.proposed += status == "proposed"
        report.abstained += verdict.abstained
        key = verdict.label.value if verdict.label else "needs review"
        report.labels[key] = report.labels.get(key, 0) + 1
        # an UNLINKED claim rests on no evidence: it keeps no span and names no source
        span = None if unlinked or claim.span is None else _bounded(claim.span, DEFAULT_LIMITS.span)
        source_id = None if unlinked else claim.source_id
        if held is not None:
            claim_id, text = held["claim_id"], held["text"]  # as stored: a confirmation finds it unchanged
        else:
            claim_id = f"c{claim.index + 1}"
            text = _bounded(claim.text, DEFAULT_LIMITS.claim_text)  # the proposal names the claim as stored
            by_input[item.line].append({"claim_id": claim_id, "text": text,
                                        "labels": [label.value], "criticality": criticality, "span": span,
                                        **({"source_id": source_id} if source_id else {}),
                                        **({"category": category} if category else {})})
        reason = verdict.reason if claim.extraction == "sentences" else f"{verdict.reason} [{claim.extraction}]"
        if unlinked and "UNLINKED" not in reason:
            reason = f"{reason} [UNLINKED: no evidence is linked]"
        rows.append([item.response_id, claim.index, claim_id, text, category, item.stakes, criticality,
                     None if unlinked else verdict.span or claim.span,
                     verdict.evidence_index if verdict.evidence_index is not None else claim.evidence_index,
                     claim.link_score, unlinked, verdict.label.value if verdict.label else None, verdict.confidence,
                     verdict.abstained, reason[:500], target.value if target else None, verdict.backend,
                     verdict.profile, status, label.value if status == "applied" else None,
                     policy.version if status == "applied" and policy else None,
                     [_bounded(s, DEFAULT_LIMITS.span) for s in verdict.cited_sentences[:MAX_CITED]] or None])
    responses = []
    for item in inputs:
        record: dict[str, Any] = {"response_id": item.response_id, "question": item.question, "answer": item.answer,
                                  "claims": by_input[item.line], "retrieved_context": list(item.chunks)}
        for name in ("gt_answer", "use_case", "model", "stakes", "created_at"):
            if getattr(item, name) is not None:
                record[name] = getattr(item, name)
        responses.append(parse_response(record))
    return rows, responses, report


# At most this many cited sentences are kept with a proposal (the offline judge cites at most six).
MAX_CITED = 8


def _bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (an unpunctuated answer is one long "sentence")."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _store_proposals(store: Store, actor: Actor, run_id: int, rows: list[list[Any]], report: VerifyReport) -> None:
    def write(tx: Transaction) -> Change:
        now = utc_now()
        ids = [int(i) for (i,) in tx.query("SELECT nextval('seq_judge_proposal') FROM range(?)", [len(rows)])]
        tx.executemany(
            "INSERT INTO judge_proposals (proposal_id, run_id, response_id, claim_idx, claim_id, claim_text, category, "
            "stakes, criticality, span, evidence_index, link_score, unlinked, label, confidence, abstained, reason, "
            "target_label, backend, judge_profile, status, final_label, policy_version, cited_sentences, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[pid, run_id, *row, now] for pid, row in zip(ids, rows, strict=True)])
        tx.execute("UPDATE verification_runs SET responses = ?, claims = ?, batch_id = ? WHERE run_id = ?",
                   [report.responses, report.claims, report.batch_id, run_id])
        summary = {k: v for k, v in report.as_dict().items() if k != "problems"}
        return Change("verification_run", str(run_id), None, summary)

    store.write(actor, "verify.proposals", write)
