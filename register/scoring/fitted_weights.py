"""Weights fitted from outcomes, offered as a draft profile with their evidence (issue 38, HRI paper Section IX:
weights elicited first, then "recalibrated empirically").

``draft_from_fit`` scores answers with a known outcome under the active profile, fits the seven weights
(``hri_core.outcome_fit``: maximum likelihood on the simplex, bootstrap intervals, cross-validated AUC,
average precision and expected cost against the active weights) and stores the fitted weights as a *draft*
over the active profile, with the fit's evidence attached as its elicitation record (data hash, n, method,
intervals, cross-validated metrics, costs, seed, quarantined lines), in one transaction. The draft then goes
the way of every draft: the impact preview shows which answers change band and action, and publishing it
needs a second person (``register.scoring.profiles.activate``). Nothing here lowers a score on its own.

``draft_from_register`` does the same from the register's own outcomes (``register.scoring.register_outcomes``:
review decisions, audit findings, validated feedback, imported outcomes, with their stored dimension scores);
its record's ``data`` names the rows' hash and the kinds they hold, with their counts.

The record's ``method`` is ``outcome_fit``; its row in ``elicitations`` carries the method ``calibration``
(the table's closed list, migration 005: an outcome fit is an empirical recalibration, as the band
suggestion is), so no migration is needed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hri_core import HRIError, ScoringProfile, profile_from_dict
from hri_core.outcome_fit import DEFAULT_FOLDS, DEFAULT_RESAMPLES, DEFAULT_SEED, WeightFit, fit_weights, read_outcomes
from hri_core.outcome_metrics import DEFAULT_COSTS, Costs
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import RegisterError
from register.scoring.profiles import active_profile, insert_profile
from register.scoring.register_outcomes import register_outcomes

__all__ = ["ELICITATION_METHOD", "FitDraft", "RECORD_METHOD", "REGISTER_SOURCE", "draft_from_fit",
           "draft_from_register"]

ELICITATION_METHOD = "calibration"  # the elicitations table's method (its closed list, migration 005)
RECORD_METHOD = "outcome_fit"
REGISTER_SOURCE = "register"  # the record's source_name of a fit to the register's own outcomes
MAX_QUARANTINE_IN_RECORD = 50  # the record names the first lines left out; the count is always complete


@dataclass(frozen=True)
class FitDraft:
    """The stored draft and the fit behind it."""

    profile_version: int
    elicitation_id: int
    fit: WeightFit


def fit_record(fit: WeightFit, source_name: str, based_on: int) -> dict[str, Any]:
    """The evidence stored with the draft: everything needed to judge the fit and to reproduce it."""
    output = fit.to_dict()
    return {
        "method": RECORD_METHOD, "source_name": source_name, "based_on": based_on,
        "data": output["data"], "n": output["n"], "harmful": output["harmful"], "fit_method": output["method"],
        "weights": output["weights"], "intervals": output["intervals"], "level": output["level"],
        "intercept": output["intercept"], "slope": output["slope"], "converged": output["converged"],
        "bootstrap": output["bootstrap"], "cv": output["cv"], "baseline": output["baseline"],
        "costs": output["costs"], "seed": output["seed"], "as_of": output["as_of"],
        "quarantined": output["quarantined"][:MAX_QUARANTINE_IN_RECORD],
    }


def draft_from_fit(store: Store, actor: Actor, records: Iterable[tuple[str, dict[str, Any] | HRIError]], *,
                   source_name: str, as_of: datetime | None = None, folds: int = DEFAULT_FOLDS,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, costs: Costs = DEFAULT_COSTS,
                   name: str | None = None) -> FitDraft:
    """Fit the weights to ``records`` (``(where, record)``, each an interchange response plus ``outcome``) and
    store them as a draft over the active profile with the fit's record. Records that cannot be read are left
    out and named in the record; data that cannot carry a fit raises ``hri_core.outcome_fit.FitError``."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile")
    base = active_profile(store)
    moment = as_of or utc_now()
    data = read_outcomes(records, base, moment)
    fit = fit_weights(data, base, moment, folds=folds, resamples=resamples, seed=seed, costs=costs)
    return _store_draft(store, actor, fit, fit_record(fit, source_name, base.version), base, name)


def draft_from_register(store: Store, actor: Actor, *, kinds: tuple[str, ...] | None = None,
                        data_hash: str | None = None, folds: int = DEFAULT_FOLDS, resamples: int = DEFAULT_RESAMPLES,
                        seed: int = DEFAULT_SEED, costs: Costs = DEFAULT_COSTS, name: str | None = None) -> FitDraft:
    """Fit the weights to the register's own outcomes (``register.scoring.register_outcomes``: of ``kinds``, default
    every kind) and store them as a draft over the active profile, the record's ``data`` naming the rows' hash,
    their kinds with counts and what was left out. ``data_hash``, when given, must be the rows' hash (the page
    offers the fit it showed, not another). Only a profile editor may; raises ``FitError`` when the rows cannot
    carry a fit."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type="scoring_profile")
    base = active_profile(store)
    data = register_outcomes(store, kinds)
    if data_hash is not None and data_hash != data.data_hash:
        raise RegisterError("the outcomes changed since the fit was shown: reload the page and look at it again")
    fit = fit_weights(data.outcome_set(), base, data.as_of(), folds=folds, resamples=resamples, seed=seed,
                      costs=costs)
    record = fit_record(fit, REGISTER_SOURCE, base.version)
    record["data"] = {**record["data"], **data.summary()}
    return _store_draft(store, actor, fit, record, base, name)


def _store_draft(store: Store, actor: Actor, fit: WeightFit, record: dict[str, Any], base: ScoringProfile,
                 name: str | None) -> FitDraft:
    """The fitted weights as a draft over ``base`` with ``record`` as its elicitation record, in one write."""
    profile = profile_from_dict({"weights": fit.weights}, base=base)
    profile = profile.model_copy(update={"name": name or f"{base.name}+outcome-fit"})

    def fn(tx: Transaction) -> Change:
        version = insert_profile(tx, profile, "draft", actor, base.version, None)
        elicitation_id = tx.scalar("SELECT nextval('seq_elicitation')")
        full = {**record, "profile_version": version, "recorded_by": actor.name, "recorded_at": utc_now().isoformat()}
        tx.execute("INSERT INTO elicitations VALUES (?, ?, ?, ?, ?, ?)",
                   [elicitation_id, ELICITATION_METHOD, version, json.dumps(full, allow_nan=False), utc_now(),
                    actor.name])
        return Change("scoring_profile", str(version), None,
                      {"status": "draft", "params": profile.to_dict(), "elicitation_id": elicitation_id,
                       "method": RECORD_METHOD, "data_sha256": fit.data_hash, "n": fit.n},
                      result=FitDraft(version, elicitation_id, fit),
                      extra_events=[("elicitation.record", "elicitation", str(elicitation_id), None,
                                     {"method": RECORD_METHOD, "profile_version": version})])

    result: FitDraft = store.write(actor, "profile.create_draft", fn)
    return result
