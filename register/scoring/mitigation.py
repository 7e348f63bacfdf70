"""CLAIM's Mitigation step in the register: versioned policies and the decision stored with every score.

The policy is ``hri_core.mitigation.MitigationPolicy`` stored as versioned data next to the scoring profiles
(table ``mitigation_policies``, migration 009; version 1 is seed 004's decision table): a draft is created
from a partial mapping, published under four eyes with a reason, and the previous active version is archived.
A published version is never edited.

``decided`` runs inside a score run's transaction (``register.scoring.scorer``), before its rows are written,
which then carry the decision (``apply_mitigation`` decides for rows written elsewhere, a Spark job's scores):
the per-response inputs of ``hri_core.mitigation.decide`` are computed in SQL -- stakes, query ambiguity and
one token per claim (its labels, ``is_core``, whether evidence is linked to it: a non-blank span or a source
id that is a retrieved chunk's id or source) -- and ``decide`` runs once per *distinct* input tuple, never
once per response. Claims whose every label reads as SUPPORTED without an authority failure under the policy
cannot change the decision except by their position, so they are one token (``S``), and only the other claims
are read into the tuple with their positions; the position of the claim a sentence names is mapped back to its
real claim id in SQL. The action (answer / revise / ask / abstain / escalate), the decision-table row, the one
sentence and the policy version are stored on the score row (``scores.mitigation_*``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from hri_core import LABELS, Response
from hri_core.mitigation import (
    ClaimReading,
    MitigationPolicy,
    decide_readings,
    default_mitigation_policy,
    mitigation_policy_from_dict,
    read_claims,
)
from hri_core.vocabulary import LABEL_BIT, STAKES
from register.access import version_approvals
from register.access.permissions import Permission, authorize
from register.collector import collector_paused
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, RegisterError

__all__ = ["MITIGATION_COLUMNS", "MITIGATION_VALUES", "UNREADABLE_RULE", "activate_policy", "active_policy",
           "apply_mitigation", "create_policy_draft", "decided", "get_policy", "list_policies", "mitigation_inputs",
           "policy_meta"]

MITIGATION_COLUMNS = ("mitigation_action", "mitigation_rule", "mitigation_reason", "mitigation_claim_id",
                      "mitigation_policy_version")
# a response whose stored claims this version cannot read (a label it does not know): a person decides
UNREADABLE_RULE = "unreadable"
NEUTRAL_TOKEN = "S"


# --- versions ---------------------------------------------------------------------------------------------


def _from_row(version: int, name: str, params: Any) -> MitigationPolicy:
    data = json.loads(params) if isinstance(params, str) else dict(params)
    data.update({"name": name, "version": version})
    return MitigationPolicy.model_validate(data)


def get_policy(store: Store | Transaction, version: int) -> MitigationPolicy:
    """The stored mitigation policy with this version number."""
    row = store.query_one("SELECT policy_version, name, params FROM mitigation_policies WHERE policy_version = ?",
                          [version])
    if row is None:
        raise NotFound(f"mitigation policy version {version} does not exist")
    return _from_row(*row)


def active_policy(store: Store | Transaction) -> MitigationPolicy:
    """The policy new scores are decided under (version 1, seed 004's table, until another is published)."""
    row = store.query_one("SELECT policy_version, name, params FROM mitigation_policies WHERE status = 'active' "
                          "ORDER BY policy_version DESC LIMIT 1")
    if row is None:
        raise NotFound("no active mitigation policy: the database was not migrated")
    return _from_row(*row)


def list_policies(store: Store) -> list[dict]:
    """Every stored version, oldest first: status and provenance (not the parameters)."""
    return store.dicts("SELECT policy_version, name, status, fingerprint, based_on, created_at, created_by, "
                       "published_at, published_by, reason FROM mitigation_policies ORDER BY policy_version")


def policy_meta(store: Store, version: int) -> dict:
    """Status and provenance of one stored version."""
    meta = store.one("SELECT policy_version, name, status, fingerprint, based_on, created_at, created_by, "
                     "published_at, published_by, reason FROM mitigation_policies WHERE policy_version = ?", [version])
    if meta is None:
        raise NotFound(f"mitigation policy version {version} does not exist")
    return meta


def create_policy_draft(store: Store, actor: Actor, overrides: dict, *, based_on: int | None = None,
                        name: str | None = None) -> int:
    """A new draft from a (partial) parameter mapping laid over ``based_on`` (default: the active policy).

    Needs ``Permission.PROFILE_EDIT`` (the policy sits next to the scoring profile and is edited by the
    same people); raises ``MitigationPolicyError`` naming every bad field.
    """
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="mitigation_policy", entity_id=based_on)
    base = get_policy(store, based_on) if based_on else active_policy(store)
    merged = base.model_dump(mode="json", exclude={"name", "version"})
    for key, value in overrides.items():
        if key == "readings" and isinstance(value, dict):
            merged["readings"] = {**merged["readings"], **value}
        else:
            merged[key] = value
    policy = mitigation_policy_from_dict(merged)
    if name:
        policy = policy.model_copy(update={"name": name})
    elif base.name:
        policy = policy.model_copy(update={"name": base.name})

    def fn(tx: Transaction) -> Change:
        version = tx.scalar("SELECT coalesce(max(policy_version), 0) + 1 FROM mitigation_policies")
        params = policy.model_dump(mode="json", exclude={"name", "version"})
        tx.execute("INSERT INTO mitigation_policies (policy_version, name, status, params, fingerprint, based_on, "
                   "created_at, created_by) VALUES (?, ?, 'draft', ?, ?, ?, ?, ?)",
                   [version, policy.name, json.dumps(params), policy.fingerprint(), base.version, utc_now(),
                    actor.name])
        version_approvals.record_proposal(tx, "mitigation_policy", version, actor)  # a system draft is nobody's
        return Change("mitigation_policy", str(version), None, {"status": "draft", "params": params},
                      result=version)

    return store.write(actor, "mitigation_policy.create_draft", fn)


def activate_policy(store: Store, actor: Actor, version: int, reason: str) -> None:
    """Make a draft the active mitigation policy (the previous one is archived); four eyes, reason required.

    Scores keep the decision they were stored with; the next score run decides under the new version
    (``register.scoring.profiles.publish`` or ``rescore``).
    """
    authorize(store, actor, Permission.PROFILE_PUBLISH, entity_type="mitigation_policy", entity_id=version)
    if not reason or not reason.strip():
        raise RegisterError("a reason is required to publish a mitigation policy")
    author = store.one("SELECT created_by FROM mitigation_policies WHERE policy_version = ?", [version])
    if author is not None:  # four eyes as for profiles: register.access.version_approvals
        version_approvals.require_second_person(store, actor, "mitigation_policy", version, author["created_by"],
                                                Permission.PROFILE_PUBLISH)

    def fn(tx: Transaction) -> Change:
        status = tx.scalar("SELECT status FROM mitigation_policies WHERE policy_version = ?", [version])
        if status is None:
            raise NotFound(f"mitigation policy version {version} does not exist")
        if status != "draft":
            raise RegisterError(f"mitigation policy version {version} is {status}; only a draft can be published")
        previous = [row[0] for row in tx.query("SELECT policy_version FROM mitigation_policies "
                                               "WHERE status = 'active'")]
        tx.execute("UPDATE mitigation_policies SET status = 'archived' WHERE status = 'active'")
        tx.execute("UPDATE mitigation_policies SET status = 'active', published_at = ?, published_by = ?, reason = ? "
                   "WHERE policy_version = ?", [utc_now(), actor.name, reason.strip(), version])
        return Change("mitigation_policy", str(version), {"status": "draft", "previous_active": previous},
                      {"status": "active", "reason": reason.strip()})

    store.write(actor, "mitigation_policy.publish", fn)


# --- the decision, in bulk ----------------------------------------------------------------------------------


@functools.cache
def _non_blank_class() -> str:
    """An RE2 class matching any character Python's ``str.strip`` keeps (``_linked_evidence``'s test)."""
    spaces = "".join(f"\\x{{{ord(c):x}}}" for c in map(chr, range(0x3001)) if c.isspace())
    return f"[^{spaces}]"


def _neutral_labels(policy: MitigationPolicy) -> list[str]:
    """Labels that read SUPPORTED with no authority failure: a claim of only these cannot change a decision."""
    return [label.value for label in LABELS if policy.readings[label].verdict == "SUPPORTED"
            and policy.readings[label].authority_failure is None]


def mitigation_inputs(policy: MitigationPolicy, p: Params, responses: str, keys: tuple[int, int],
                      authority: str | None = None) -> str:
    """SELECT of decide's inputs per response: response_key, stakes, query_ambiguous, claims (the claims that are
    not neutral, as ``"claim_idx:token"`` in a fixed order), n (the claim count) and sig (the tuple as one text
    key).

    ``responses`` is a condition on ``responses r`` naming the revisions to decide (the caller's fixed SQL; it
    may use named ``$`` parameters of its own); ``keys`` (lowest, highest ``response_key``, both included)
    limits it to a slice, read from the claims' row groups of that range only (claims are stored in key order).
    ``authority``: a table of the claims the register's Authority checks flag (``register.scoring.decision``'s
    ``_authority_found``: response_key, claim_idx, labels, label_mask, is_core, span, source_id and failures, the
    words ``hri_core.authority.AuthorityResult.failures`` gives); each such claim's token carries its words, and a
    claim of neutral labels that is flagged is not neutral.
    """
    in_slice = f" AND {{alias}}.response_key BETWEEN {p(int(keys[0]))} AND {p(int(keys[1]))}"
    neutral = _neutral_labels(policy)
    non_neutral = sum(LABEL_BIT[label] for label in LABELS if label.value not in neutral)
    linked = (f"(coalesce(regexp_matches(cl.span, {p(_non_blank_class())}), false) OR (cl.source_id IS NOT NULL AND "
              "r.retrieved_context IS NOT NULL AND (list_contains(json_extract_string(r.retrieved_context, '$[*].id'), "
              "cl.source_id) OR list_contains(json_extract_string(r.retrieved_context, '$[*].source_id'), "
              "cl.source_id))))")
    token = ("array_to_string(cl.labels, ',') || '/' || "
             "CASE WHEN cl.is_core THEN 'C' WHEN NOT cl.is_core THEN 'N' ELSE '?' END || '/' || "
             f"CASE WHEN {linked} THEN 'L' ELSE '-' END || '/' || "
             "coalesce(array_to_string(au.failures, '+'), '')")
    stakes = f"CASE WHEN r.stakes IN ({', '.join(p(s) for s in STAKES)}) THEN r.stakes END"
    # Only the claims that are not neutral are read into the tuple, each with its position (claim_idx): a neutral
    # claim between them is known by its position alone, and those after the last other one count in no sentence
    # (only the "answer" row says how many claims were checked, and it is reached only when every claim is
    # neutral). A response whose claims are all neutral is answered whatever its stakes: its tuple is its claim
    # count. Grouping only these claims (a minority in the benchmark data) into an unordered list() sorted as
    # text costs much less than list(token ORDER BY claim_idx) over every claim, an ordered aggregate DuckDB sorts
    # group by group (docs/performance.md); the text order is fixed, so equal tuples have equal keys, and
    # ``_tokens`` places each claim by its claim_idx.
    # Authority: the flagged claims are few (a register of current strong sources flags none), so a claim of
    # neutral labels is read from the flagged table, never by another scan of the claims.
    joined, flagged = "", ""
    if authority is not None:
        joined = (f"\n      LEFT JOIN {authority} au ON au.response_key = cl.response_key "
                  "AND au.claim_idx = cl.claim_idx")
        flagged = (f"SELECT cl.response_key, cl.claim_idx, {token.replace('au.failures', 'cl.failures')} AS token "
                   f"FROM {authority} cl JOIN rr r ON r.response_key = cl.response_key "
                   f"WHERE (cl.label_mask & {p(non_neutral)}) = 0{in_slice.format(alias='cl')}\n      UNION ALL ")
    else:
        token = token.replace("au.failures", "NULL::VARCHAR[]")
    return f"""
WITH rr AS (SELECT r.response_key, {stakes} AS stakes, r.query_ambiguous, r.retrieved_context, r.claim_count
            FROM responses r WHERE ({responses}){in_slice.format(alias="r")}),
t AS ({flagged}SELECT cl.response_key, cl.claim_idx, {token} AS token
      FROM claims cl JOIN rr r ON r.response_key = cl.response_key{joined}
      WHERE (cl.label_mask & {p(non_neutral)}) <> 0{in_slice.format(alias="cl")}),
c AS (SELECT response_key, list_sort(list(claim_idx || ':' || token)) AS claims FROM t GROUP BY response_key),
d AS (SELECT r.response_key, r.stakes, r.query_ambiguous, r.claim_count AS n, c.claims IS NULL AND r.claim_count > 0
             AS neutral, coalesce(c.claims, []) AS claims
      FROM rr r LEFT JOIN c ON c.response_key = r.response_key)
SELECT response_key, CASE WHEN neutral THEN NULL ELSE stakes END AS stakes,
       CASE WHEN neutral THEN NULL ELSE query_ambiguous END AS query_ambiguous, claims, n,
       CASE WHEN neutral THEN 'neutral|' || n
            ELSE concat_ws('|', coalesce(stakes, '-'), coalesce(query_ambiguous::VARCHAR, '-'),
                           array_to_string(claims, ';')) END AS sig
FROM d"""


def _tokens(claims: list[str], n: int) -> list[str]:
    """One token per claim up to the last one that is not neutral (all ``n`` when every claim is neutral), from
    the claims that are not neutral as ``"claim_idx:token"``."""
    if not claims:
        return [NEUTRAL_TOKEN] * n
    placed = {int(idx): token for idx, token in (claim.split(":", 1) for claim in claims)}
    return [placed.get(idx, NEUTRAL_TOKEN) for idx in range(max(placed) + 1)]


def _canonical_response(stakes: str | None, ambiguous: bool | None, tokens: list[str],
                        filler: str) -> tuple[Response, dict[str, list[str]]]:
    """A response with the decision-relevant content of the tuple: claim ``c<n>`` at position n; and the Authority
    failure words of its claims (claim id -> words), as ``decide`` reads them."""
    # validated like any record (pydantic's core is faster here than constructing models in Python): a stored
    # label this version does not know fails the tuple, which then fails closed
    claims: list[dict[str, Any]] = []
    authority: dict[str, list[str]] = {}
    for position, token in enumerate(tokens, start=1):
        if token == NEUTRAL_TOKEN:
            claims.append({"claim_id": f"c{position}", "labels": [filler]})
            continue
        labels, core, linked, words = token.split("/")
        claim: dict[str, Any] = {"claim_id": f"c{position}", "labels": labels.split(",")}
        if words:
            authority[f"c{position}"] = words.split("+")
        if core != "?":
            claim["is_core"] = core == "C"
        if linked == "L":
            claim["span"] = "linked evidence"
        claims.append(claim)
    return Response.model_validate({"response_id": "tuple", "stakes": stakes, "query_ambiguous": ambiguous,
                                    "claims": claims}), authority


class _ClaimReader:
    """Each distinct claim token read once (``read_claims`` on a one-claim response, validated like any record),
    then placed at each position it occurs in: a tuple's claims are a few tokens repeated across thousands of
    tuples, so reading every claim of every tuple again was most of the decision's CPU."""

    def __init__(self, policy: MitigationPolicy, filler: str) -> None:
        self._policy, self._filler = policy, filler
        self._read: dict[str, ClaimReading | Exception] = {}
        self._placed: dict[tuple[str, int], ClaimReading] = {}

    def reading(self, token: str, position: int) -> ClaimReading:
        """The claim of ``token`` as claim ``c<position>``; raises what validating it raised (the tuple then
        fails closed)."""
        placed = self._placed.get((token, position))
        if placed is not None:
            return placed
        read = self._read.get(token)
        if read is None:
            try:
                response, authority = _canonical_response(None, None, [token], self._filler)
                read = read_claims(response, self._policy, authority)[0]
            except (ValueError, KeyError) as error:  # pydantic's ValidationError is a ValueError
                read = error
            self._read[token] = read
        if isinstance(read, Exception):
            raise read
        placed = dataclasses.replace(read, claim_id=f"c{position}", position=position)
        self._placed[(token, position)] = placed
        return placed


def decide_tuples(policy: MitigationPolicy, tuples: list[tuple]) -> pa.Table:
    """``decide`` once per distinct input tuple (sig, stakes, query_ambiguous, tokens): sig, action, rule,
    reason and the 1-based position of the claim the sentence names (NULL when it names none).

    A tuple this version cannot read (a stored label it does not know) fails closed: escalate, a person
    decides, and the sentence says why. Each distinct claim token is read once (``_ClaimReader``); the decision
    is ``hri_core.mitigation.decide_readings``, the steps ``decide`` takes (a property test holds the two equal).
    """
    neutral = _neutral_labels(policy)
    reader = _ClaimReader(policy, neutral[0] if neutral else "")  # without neutral labels no claim is neutral
    out: dict[str, list] = {"sig": [], "action": [], "rule": [], "reason": [], "position": []}
    rule: str  # the decision's rule, or UNREADABLE_RULE (no rule of the policy) for a tuple that cannot be read
    for sig, stakes, ambiguous, tokens in tuples:
        try:
            claims = tuple(reader.reading(token, position) for position, token in enumerate(tokens, start=1))
            decision = decide_readings(claims, policy, stakes=stakes, query_ambiguous=ambiguous)
            action, rule, reason = decision.action, decision.rule, decision.reason
            position = int(decision.claim_id[1:]) if decision.claim_id else None
        except (ValueError, KeyError) as error:
            action, rule, position = "escalate", UNREADABLE_RULE, None
            reason = (f"escalate: the stored claims cannot be read by this version "
                      f"({type(error).__name__}), so no step of CLAIM could be checked")
        for key, value in (("sig", sig), ("action", action), ("rule", rule), ("reason", reason),
                           ("position", position)):
            out[key].append(value)
    return pa.table(out, schema=pa.schema([("sig", pa.string()), ("action", pa.string()), ("rule", pa.string()),
                                           ("reason", pa.string()), ("position", pa.int32())]))


MITIGATION_SLICE = 500_000  # responses decided at once: their inputs (lists of claim tokens) are held in memory
_DECIDED_SCHEMA = pa.schema([("decision", pa.int32()), ("sig", pa.string()), ("action", pa.string()),
                             ("rule", pa.string()), ("reason", pa.string()), ("position", pa.int32())])
# the stored columns of a decision, over _mitigated m joined to _mitigation_decided d (``decided``)
MITIGATION_VALUES = {"mitigation_action": "d.action", "mitigation_rule": "d.rule", "mitigation_reason": "d.reason",
                     "mitigation_claim_id": "m.claim_id"}


@contextlib.contextmanager
def decided(tx: Transaction, policy: MitigationPolicy, responses: str,
            params: dict[str, Any] | None = None, *, authority: str | None = None, run: bool = True) -> Iterator[int]:
    """Decide the mitigation of the revisions ``responses`` (a condition on ``responses r``, named ``$``
    parameters in ``params``) and hold the decisions for the caller's statements; yields the number of
    distinct input tuples ``decide`` ran on.

    While open, TEMP TABLE ``_mitigated`` (response_key, decision, claim_id: the claim the sentence names)
    holds one row per revision and ``_mitigation_decided`` (decision, sig, action, rule, reason, position) one
    per distinct tuple; both are dropped on leaving. The caller joins them where it writes (a score run's
    INSERT reads them, so no score row is written twice). In slices of about ``MITIGATION_SLICE`` revisions by
    ``response_key``: the inputs of the benchmark database at once outgrow the memory limit (measured:
    docs/performance.md), a slice's do not; each distinct tuple is decided once, whichever slice it first appears in.
    ``authority``: the table of the claims the Authority checks flag (``mitigation_inputs``), read by ``decide``
    as seed 004 asks (answer only when authority passes). ``run`` false (a CLAIM lens that skips Mitigation,
    ``hri_core.lens``): both tables stay empty, no score row is given a mitigation.
    """
    params = dict(params or {})
    tx.execute("CREATE OR REPLACE TEMP TABLE _mitigated (response_key BIGINT, decision INTEGER, claim_id VARCHAR)")
    tx.execute("CREATE OR REPLACE TEMP TABLE _mitigation_decided (decision INTEGER, sig VARCHAR, action VARCHAR, "
               "rule VARCHAR, reason VARCHAR, position INTEGER)")
    try:
        span = tx.one(f"SELECT min(r.response_key) AS lo, max(r.response_key) AS hi, count(*) AS n "
                      f"FROM responses r WHERE {responses}", params) if run else None
        if span is not None and span["n"]:
            slices = max(1, math.ceil(span["n"] / MITIGATION_SLICE))
            width = max(1, math.ceil((span["hi"] - span["lo"] + 1) / slices))
            for lo in range(span["lo"], span["hi"] + 1, width):
                _decide_slice(tx, policy, responses, params, (lo, lo + width - 1), authority)
        yield tx.scalar("SELECT count(*) FROM _mitigation_decided")
    finally:
        tx.execute("DROP TABLE IF EXISTS _mitigated")
        tx.execute("DROP TABLE IF EXISTS _mitigation_decided")


def _decide_slice(tx: Transaction, policy: MitigationPolicy, responses: str, params: dict[str, Any],
                  keys: tuple[int, int], authority: str | None) -> None:
    p = Params()
    inputs = mitigation_inputs(policy, p, responses, keys, authority)
    tx.execute(f"CREATE OR REPLACE TEMP TABLE _mitigation_in AS {inputs}", {**params, **p.values})
    try:
        # the tuples read into Python and decided with the collector paused: a pass over tens of thousands of them
        # made it run over and over (register.collector)
        with collector_paused():
            fresh = [(sig, stakes, ambiguous, _tokens(claims, n)) for sig, stakes, ambiguous, claims, n in tx.query(
                "SELECT sig, any_value(stakes), any_value(query_ambiguous), any_value(claims), any_value(n) "
                "FROM _mitigation_in ANTI JOIN _mitigation_decided USING (sig) GROUP BY sig")]
            table = decide_tuples(policy, fresh) if fresh else None
            del fresh
        if table is not None:
            # fetched whole (not scalar): register() refuses a connection with a pending result
            first = tx.query("SELECT count(*) FROM _mitigation_decided")[0][0]
            numbered = table.add_column(0, "decision", pa.array(range(first, first + len(table)), pa.int32()))
            with tx.relation("_mitigation_fresh", numbered.select(_DECIDED_SCHEMA.names).cast(_DECIDED_SCHEMA)):
                tx.execute("INSERT INTO _mitigation_decided SELECT * FROM _mitigation_fresh")
        # the position a sentence names (1-based, in claim order) is the claim whose claim_idx is one less:
        # importers number a response's claims 0, 1, 2 ... in order
        tx.execute("INSERT INTO _mitigated SELECT i.response_key, d.decision, cl.claim_id "
                   "FROM _mitigation_in i JOIN _mitigation_decided d USING (sig) "
                   "LEFT JOIN claims cl ON cl.response_key = i.response_key AND cl.claim_idx = d.position - 1 "
                   "AND cl.response_key BETWEEN $lo AND $hi", {"lo": int(keys[0]), "hi": int(keys[1])})
    finally:
        tx.execute("DROP TABLE IF EXISTS _mitigation_in")


def apply_mitigation(tx: Transaction, run_id: int, policy: MitigationPolicy, *, authority: str | None = None) -> int:
    """Decide the mitigation of every score row of ``run_id`` and store it on the row; returns the number of
    distinct input tuples ``decide`` ran on. (A score run of the register decides before it writes: ``decided``
    joined in its INSERT; this is for rows written from elsewhere, such as a Spark job's scores.) ``authority``: as
    ``decided`` reads it."""
    with decided(tx, policy, "r.response_key IN (SELECT response_key FROM scores WHERE run_id = $run)",
                 {"run": run_id}, authority=authority) as count:
        sets = ", ".join(f"{column} = u.{column}" for column in MITIGATION_VALUES)
        tx.execute(f"""
            UPDATE scores SET {sets}, mitigation_policy_version = $version
            FROM (SELECT m.response_key, {', '.join(f'{v} AS {c}' for c, v in MITIGATION_VALUES.items())}
                  FROM _mitigated m JOIN _mitigation_decided d USING (decision)) u
            WHERE scores.run_id = $run AND scores.response_key = u.response_key
        """, {"run": run_id, "version": policy.version})
    return count


def default_policy_params() -> dict:
    """Version 1's parameters as migration 009 stores them (a test holds the two equal)."""
    return default_mitigation_policy().model_dump(mode="json", exclude={"name", "version"})
