"""Claims-register semantics (issue 37, item 4; Table IX items 1 and 5): a claim's sources primary or acceptable
secondary, a locator per link, "author interpretation" as a claim type, "softened" and "moved to future work" beside
"removed"; the CSV import and export carry them, and an older file without the new columns still imports."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from register import SYSTEM
from register.errors import ValidationFailed
from register.governance.checks import run_checks
from register.governance.evidence import ensure_default_rules
from register.governance.registers import add_row, list_claims
from register.governance.transfer import export_claims, import_register

SOURCE = {"source_id": "src-paper", "title": "A paper", "source_type": "peer-reviewed publication",
          "authority_tier": 1}


def _claim(store, key: str, **values) -> None:
    add_row(store, SYSTEM, "claims", {"claim_key": key, "statement": f"Claim {key}.",
                                      "claim_type": "scientific/methodological", "verification_status": "verified",
                                      **values})


def test_a_claim_records_its_basis_and_a_locator_per_link(store):
    add_row(store, SYSTEM, "sources", SOURCE)
    _claim(store, "k1", source_ids=["src-paper"], source_basis="Primary", source_locators="p. 4, 'as shown'")
    row = list_claims(store).set_index("claim_key").loc["k1"]
    assert row["source_basis"] == "primary" and list(row["source_locators"]) == ["p. 4, 'as shown'"]


def test_bad_semantics_are_refused_naming_the_field(store):
    add_row(store, SYSTEM, "sources", SOURCE)
    with pytest.raises(ValidationFailed) as caught:
        _claim(store, "k2", source_ids=["src-paper"], source_basis="tertiary", source_locators="p. 1 | p. 2")
    fields = {p.column for p in caught.value.problems}
    assert fields == {"source_basis", "source_locators"}


def test_the_new_claim_type_and_statuses_are_accepted_and_read_by_items_1_and_5(store):
    ensure_default_rules(store, SYSTEM)
    add_row(store, SYSTEM, "sources", SOURCE)
    _claim(store, "k-int", claim_type="author interpretation")  # no source: not a factual claim, item 1 passes
    _claim(store, "k-soft", verification_status="softened", source_ids=["src-paper"], source_basis="primary",
           source_locators="sec. 3")
    _claim(store, "k-future", verification_status="moved to future work")
    _claim(store, "k-gone", verification_status="removed")
    checks = {c["no"]: c for c in run_checks(store)["checks"]}
    assert checks[1]["status"] == "pass", checks[1]["offending"]
    assert "1 on a primary source" in checks[1]["note"] and "0 with a link that names no" in checks[1]["note"]
    assert checks[5]["status"] == "pass"
    assert checks[5]["note"] == "settled: 1 removed, 1 softened, 1 moved to future work"


def test_csv_export_and_import_carry_the_new_columns_and_old_files_still_import(store):
    add_row(store, SYSTEM, "sources", SOURCE)
    _claim(store, "k1", source_ids=["src-paper"], source_basis="acceptable secondary", source_locators="p. 9")
    frame = export_claims(store)
    assert frame.loc[0, "source_basis"] == "acceptable secondary" and frame.loc[0, "source_locators"] == "p. 9"
    old = pd.read_csv(io.StringIO("claim_id,statement,claim_type,source_type,source_ref,verification_status\n"
                                  "k-old,An old claim.,scientific/methodological,peer-reviewed publication,src-paper,"
                                  "verified\n"))
    result = import_register(store, SYSTEM, "claims", old)
    assert result.rejected_rows == 0 and result.inserted == 1
    row = list_claims(store).set_index("claim_key").loc["k-old"]
    assert row["source_basis"] is None or row["source_basis"] != row["source_basis"]
