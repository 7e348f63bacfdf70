"""Weight elicitation as stored records: AHP judgements and Delphi rounds that become draft profiles.

Called by the elicitation page (through ``ui`` helpers) and by scripts. The math is
``hri_core.ahp`` and ``hri_core.delphi``; this module keeps who judged what and when, enforces the
Delphi rules (an expert sees no one else's weights until the round is closed; only the facilitator
opens and closes rounds), and turns a result into a draft profile with its elicitation record
attached (table ``elicitations``, migration 005) in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hri_core import ahp, delphi, profile_from_dict
from hri_core.errors import FieldProblem, HRIError
from register.access.permissions import Permission, authorize, deny
from register.db.store import Actor, Change, Cursor, Store, Transaction, utc_now
from register.errors import ElicitationError, NotFound, PermissionDenied, StaleEdit
from register.scoring.profiles import active_profile, get_profile, insert_profile

__all__ = ["ahp_analysis", "close_round", "delphi_session", "elicitations_for",
           "finalise_delphi", "list_sessions", "open_next_round", "open_session", "round_submissions",
           "save_ahp", "submit_weights"]


def _draft_with_record(store: Store, actor: Actor, weights: Mapping[str, float], method: str,
                       record: dict, *, name: str | None, based_on: int | None, tx_hook=None) -> tuple[int, int]:
    """Insert a draft profile with ``weights`` and its elicitation record in one transaction."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile", entity_id=based_on)
    base = get_profile(store, based_on) if based_on else active_profile(store)
    profile = profile_from_dict(ahp.weights_to_profile_dict(weights), base=base)
    profile = profile.model_copy(update={"name": name or f"{base.name}+{method}"})

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, profile, "draft", actor, base.version, None)
        elicitation_id = tx.scalar("SELECT nextval('seq_elicitation')")
        full = {**record, "method": method, "profile_version": version, "recorded_by": actor.name,
                "recorded_at": utc_now().isoformat(), "weights": profile.to_dict()["weights"]}
        tx.execute("INSERT INTO elicitations VALUES (?, ?, ?, ?, ?, ?)",
                   [elicitation_id, method, version, json.dumps(full), utc_now(), actor.name])
        if tx_hook is not None:
            tx_hook(tx, version)
        return Change("scoring_profile", str(version), None,
                      {"status": "draft", "params": profile.to_dict(), "elicitation_id": elicitation_id,
                       "method": method},
                      result=(version, elicitation_id),
                      extra_events=[("elicitation.record", "elicitation", str(elicitation_id), None,
                                     {"method": method, "profile_version": version})])

    return store.write(actor, "profile.create_draft", fn)


def elicitations_for(store: Store, version: int) -> list[dict]:
    """The elicitation records attached to a profile version, oldest first."""
    rows = store.query("SELECT elicitation_id, method, record, created_at, created_by FROM elicitations "
                       "WHERE profile_version = ? ORDER BY elicitation_id", [version])
    return [{"elicitation_id": e, "method": m, "record": json.loads(r), "created_at": at, "created_by": by}
            for e, m, r, at, by in rows]


# --- AHP -----------------------------------------------------------------------------------------


def ahp_analysis(experts: Sequence[Mapping[str, Any]]) -> dict:
    """Per-expert and combined AHP results of ``[{"expert": name, "judgements": {...} or [...]}]``.

    Several experts are combined by the element-wise geometric mean of their matrices. Raises
    ``HRIError`` naming every bad judgement (with the expert's index).
    """
    if not experts:
        raise HRIError([FieldProblem("experts", "at least one expert's judgements are required")])
    problems, matrices, per_expert, names = [], [], [], []
    for k, item in enumerate(experts):
        name = str(item.get("expert") or "").strip()
        if not name:
            problems.append(FieldProblem(f"experts[{k}].expert", "a name is required"))
        elif name in names:
            problems.append(FieldProblem(f"experts[{k}].expert", f"duplicate expert {name!r}"))
        names.append(name)
        # as given: matrix_from_judgements refuses (HRIError) what is missing or neither a mapping nor a list
        judgements: Any = item.get("judgements")
        try:
            matrix = ahp.matrix_from_judgements(judgements)
        except HRIError as error:
            problems.extend(FieldProblem(f"experts[{k}].{p.loc}", p.message) for p in error.problems)
            continue
        matrices.append(matrix)
        per_expert.append((name, ahp.analyse_matrix(matrix)))
    if problems:
        raise HRIError(problems)
    combined = ahp.analyse_matrix(ahp.aggregate_matrices(matrices)) if len(matrices) > 1 else per_expert[0][1]
    return {"experts": per_expert, "combined": combined}


def save_ahp(store: Store, actor: Actor, experts: Sequence[Mapping[str, Any]], *, name: str | None = None,
             based_on: int | None = None) -> tuple[int, int]:
    """Turn AHP judgements into a draft profile with the elicitation record attached.

    Refused (``ElicitationError``) when the combined consistency ratio is above 0.10, naming the most
    inconsistent judgements. Returns ``(profile_version, elicitation_id)``.
    """
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile", entity_id=based_on)
    analysis = ahp_analysis(experts)
    combined = analysis["combined"]
    if not combined.acceptable:
        worst = ", ".join(f"{j.row}/{j.col} = {j.value:.3g} (the weights imply {j.implied:.3g})"
                          for j in combined.inconsistent)
        raise ElicitationError(f"the combined consistency ratio CR = {combined.cr:.3f} is above "
                               f"{combined.max_cr:.2f}; revisit the most inconsistent judgements: {worst}")
    record = {
        "experts": [{"expert": name, "judgements": [[combined.criteria[i], combined.criteria[j], r.matrix[i][j]]
                                                    for i in range(len(r.criteria))
                                                    for j in range(i + 1, len(r.criteria))],
                     "cr": r.cr, "weights": r.weights} for name, r in analysis["experts"]],
        "aggregation": "geometric mean of the experts' matrices" if len(analysis["experts"]) > 1 else "single expert",
        "combined": combined.to_dict(),
        "cr": combined.cr,
        "date": utc_now().date().isoformat(),
    }
    return _draft_with_record(store, actor, combined.weights, "ahp", record, name=name, based_on=based_on)


# --- Delphi --------------------------------------------------------------------------------------


def _session_row(reader: Store | Cursor, session_id: int) -> dict:
    """The session's row, read through the store or inside a write's transaction."""
    row = reader.one("SELECT session_id, title, facilitator, experts, iqr_threshold, status, created_at, "
                     "profile_version FROM delphi_sessions WHERE session_id = ?", [session_id])
    if row is None:
        raise NotFound(f"Delphi session {session_id} does not exist")
    return row


def _require_facilitator(store: Store, actor: Actor, session: dict, what: str) -> None:
    if actor.name != session["facilitator"]:
        deny(store, actor, Permission.PROFILE_EDIT, "delphi_session", session["session_id"],
             f"only the facilitator ({session['facilitator']}) may {what}", PermissionDenied)


def open_session(store: Store, actor: Actor, title: str, experts: Sequence[str], iqr_threshold: float) -> int:
    """Open a Delphi session (the actor facilitates) with its first round open; returns its id."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="delphi_session")
    names = [str(e).strip() for e in experts if str(e).strip()]
    problems = []
    if not title or not title.strip():
        problems.append("title: required")
    if len(names) < 2:
        problems.append("experts: at least two experts are needed")
    if len(set(names)) != len(names):
        problems.append("experts: a name appears twice")
    if isinstance(iqr_threshold, bool) or not isinstance(iqr_threshold, (int, float)) or not 0 < iqr_threshold < 1:
        problems.append(f"iqr_threshold: must be a weight difference in (0, 1), got {iqr_threshold!r}")
    if problems:
        raise ElicitationError("; ".join(problems))

    def fn(tx: Transaction) -> Change:
        session_id = tx.scalar("SELECT nextval('seq_delphi_session')")
        now = utc_now()
        tx.execute("INSERT INTO delphi_sessions VALUES (?, ?, ?, ?, ?, 'open', ?, NULL)",
                   [session_id, title.strip(), actor.name, names, float(iqr_threshold), now])
        tx.execute("INSERT INTO delphi_rounds VALUES (?, 1, 'open', ?, NULL, NULL)", [session_id, now])
        return Change("delphi_session", str(session_id), None,
                      {"title": title.strip(), "experts": names, "iqr_threshold": float(iqr_threshold),
                       "round": 1}, result=session_id)

    return store.write(actor, "delphi.open", fn)


def list_sessions(store: Store) -> list[dict]:
    rows = store.query("SELECT session_id FROM delphi_sessions ORDER BY session_id DESC")
    return [_session_row(store, r[0]) for r in rows]


def delphi_session(store: Store, session_id: int) -> dict:
    """The session and its rounds (number, status, who has submitted, and the summary once closed)."""
    session = _session_row(store, session_id)
    rounds = []
    for number, status, opened, closed, summary in store.query(
            "SELECT round_number, status, opened_at, closed_at, summary FROM delphi_rounds WHERE session_id = ? "
            "ORDER BY round_number", [session_id]):
        submitted = [r[0] for r in store.query(
            "SELECT expert FROM delphi_submissions WHERE session_id = ? AND round_number = ? ORDER BY expert",
            [session_id, number])]
        rounds.append({"round": number, "status": status, "opened_at": opened, "closed_at": closed,
                       "submitted": submitted, "summary": json.loads(summary) if summary else None})
    session["rounds"] = rounds
    return session


def _current_round(tx: Transaction, session_id: int) -> tuple[int, str]:
    number, status = tx.query_row("SELECT round_number, status FROM delphi_rounds WHERE session_id = ? "
                                  "ORDER BY round_number DESC LIMIT 1", [session_id],
                                  what=f"a round of Delphi session {session_id}")
    return number, status


def submit_weights(store: Store, actor: Actor, session_id: int, weights: Mapping[str, Any],
                   rationale: str | None = None) -> int:
    """The acting expert's weight vector for the open round (replaces their own earlier one in it).

    Returns the round number. Weights are validated and normalised (``hri_core.delphi``).
    """
    authorize(store, actor, Permission.READ, entity_type="delphi_session", entity_id=session_id)
    session = _session_row(store, session_id)
    if actor.name not in session["experts"]:
        deny(store, actor, Permission.READ, "delphi_session", session_id,
             f"{actor.name} is not an expert of Delphi session {session_id}", PermissionDenied)
    estimate = delphi.expert_estimate(actor.name, weights, (rationale or "").strip() or None)

    def fn(tx: Transaction) -> Change:
        if _session_row(tx, session_id)["status"] != "open":
            raise StaleEdit(f"Delphi session {session_id} is finalised, reload")
        number, status = _current_round(tx, session_id)
        if status != "open":
            raise StaleEdit(f"round {number} of session {session_id} is closed; wait for the next round")
        tx.execute("DELETE FROM delphi_submissions WHERE session_id = ? AND round_number = ? AND expert = ?",
                   [session_id, number, actor.name])
        tx.execute("INSERT INTO delphi_submissions VALUES (?, ?, ?, ?, ?, ?)",
                   [session_id, number, actor.name, json.dumps(estimate.weights), estimate.rationale, utc_now()])
        return Change("delphi_submission", f"{session_id}/{number}/{actor.name}", None,
                      {"round": number, "weights": estimate.weights, "rationale": estimate.rationale},
                      result=number)

    return store.write(actor, "delphi.submit", fn)


def round_submissions(store: Store, actor: Actor, session_id: int, round_number: int) -> list[dict]:
    """The submissions of a round as ``actor`` may see them: everyone's once the round is closed, only
    the actor's own while it is open (the facilitator too sees only who has submitted). Any role may be
    an expert; the account must be enabled."""
    authorize(store, actor, Permission.READ, entity_type="delphi_session", entity_id=session_id)
    status = store.scalar("SELECT status FROM delphi_rounds WHERE session_id = ? AND round_number = ?",
                          [session_id, round_number])
    if status is None:
        raise NotFound(f"Delphi session {session_id} has no round {round_number}")
    hidden = status == "open"
    rows = store.query(
        "SELECT expert, weights, rationale, submitted_at FROM delphi_submissions WHERE session_id = ? "
        "AND round_number = ? AND (NOT ? OR expert = ?) ORDER BY expert",
        [session_id, round_number, hidden, actor.name])
    return [{"expert": e, "weights": json.loads(w), "rationale": r, "submitted_at": at} for e, w, r, at in rows]


def close_round(store: Store, actor: Actor, session_id: int) -> dict:
    """Close the open round (facilitator only) and store its summary; returns the summary with
    ``converged`` (every IQR below the session's threshold)."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="delphi_session", entity_id=session_id)
    session = _session_row(store, session_id)
    _require_facilitator(store, actor, session, "close a round")

    def fn(tx: Transaction) -> Change:
        number, status = _current_round(tx, session_id)
        if status != "open":
            raise StaleEdit(f"round {number} of session {session_id} is already closed, reload")
        subs = tx.query("SELECT expert, weights, rationale FROM delphi_submissions WHERE session_id = ? "
                        "AND round_number = ? ORDER BY expert", [session_id, number])
        if len(subs) < 2:
            raise ElicitationError(f"round {number} has {len(subs)} submission(s); at least two are needed "
                                   "to summarise it")
        summary = delphi.summarise_round(delphi.build_round(
            number, [{"expert": e, "weights": json.loads(w), "rationale": r} for e, w, r in subs]))
        out = {**summary.to_dict(), "max_iqr": summary.max_iqr,
               "converged": delphi.converged(summary, session["iqr_threshold"]),
               "threshold": session["iqr_threshold"],
               "missing": [e for e in session["experts"] if e not in {s[0] for s in subs}]}
        tx.execute("UPDATE delphi_rounds SET status = 'closed', closed_at = ?, summary = ? "
                   "WHERE session_id = ? AND round_number = ?", [utc_now(), json.dumps(out), session_id, number])
        return Change("delphi_round", f"{session_id}/{number}", {"status": "open"},
                      {"status": "closed", "max_iqr": out["max_iqr"], "converged": out["converged"]}, result=out)

    return store.write(actor, "delphi.close_round", fn)


def open_next_round(store: Store, actor: Actor, session_id: int) -> int:
    """Open the next round once the current one is closed (facilitator only); returns its number."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="delphi_session", entity_id=session_id)
    session = _session_row(store, session_id)
    _require_facilitator(store, actor, session, "open a round")

    def fn(tx: Transaction) -> Change:
        if _session_row(tx, session_id)["status"] != "open":
            raise StaleEdit(f"Delphi session {session_id} is finalised, reload")
        number, status = _current_round(tx, session_id)
        if status == "open":
            raise StaleEdit(f"round {number} is still open: close it first")
        tx.execute("INSERT INTO delphi_rounds VALUES (?, ?, 'open', ?, NULL, NULL)",
                   [session_id, number + 1, utc_now()])
        return Change("delphi_round", f"{session_id}/{number + 1}", None, {"status": "open"}, result=number + 1)

    return store.write(actor, "delphi.open_round", fn)


def finalise_delphi(store: Store, actor: Actor, session_id: int, *, name: str | None = None,
                    accept_unconverged: bool = False) -> tuple[int, int]:
    """The last closed round's medians, normalised, become a draft profile with the full record (every
    round, submission and summary) attached. Refused unless the last round converged (or
    ``accept_unconverged``, which the record says). Returns ``(profile_version, elicitation_id)``."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="delphi_session", entity_id=session_id)
    session = delphi_session(store, session_id)
    _require_facilitator(store, actor, session, "finalise the session")
    if session["status"] != "open":
        raise StaleEdit(f"Delphi session {session_id} is already finalised (profile version "
                        f"{session['profile_version']})")
    last = session["rounds"][-1]
    if last["status"] != "closed":
        raise ElicitationError(f"round {last['round']} is still open: close it before finalising")
    summary = last["summary"]
    if not summary["converged"] and not accept_unconverged:
        raise ElicitationError(f"round {last['round']} has not converged: the largest IQR is "
                               f"{summary['max_iqr']:.4f}, the threshold {session['iqr_threshold']:g}")
    total = sum(summary["median_vector"].values())
    weights = {k: v / total for k, v in summary["median_vector"].items()}
    rounds = []
    for r in session["rounds"]:
        subs = store.query("SELECT expert, weights, rationale, submitted_at FROM delphi_submissions "
                           "WHERE session_id = ? AND round_number = ? ORDER BY expert", [session_id, r["round"]])
        rounds.append({"round": r["round"], "summary": r["summary"],
                       "submissions": [{"expert": e, "weights": json.loads(w), "rationale": ra,
                                        "submitted_at": at.isoformat()} for e, w, ra, at in subs]})
    record = {"session_id": session_id, "title": session["title"], "facilitator": session["facilitator"],
              "experts": list(session["experts"]), "iqr_threshold": session["iqr_threshold"],
              "converged": summary["converged"], "accepted_unconverged": bool(accept_unconverged and
                                                                               not summary["converged"]),
              "rounds": rounds, "date": utc_now().date().isoformat()}

    def hook(tx: Transaction, version: int) -> None:
        tx.execute("UPDATE delphi_sessions SET status = 'finalised', profile_version = ? WHERE session_id = ?",
                   [version, session_id])

    return _draft_with_record(store, actor, weights, "delphi", record, name=name, based_on=None, tx_hook=hook)
