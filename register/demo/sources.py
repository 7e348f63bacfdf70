"""The demo's source register: every source its answers cite, so the Authority step finds real things.

The demo's answers cite three kinds of source: the synthetic knowledge bases of ``hri_core.synthetic`` (each
document in a current ``-2026`` version and the superseded ``-2024`` one its outdated claims follow, and the
restricted documents its access-gap claims cite), the web pages of the Factcheck-GPT answers
(``data/demo/factcheck_gpt.jsonl``) and the documents of the paper's Table V example. Each is recorded with a
type and an authority tier (1 strongest .. 5), so that what the Authority step finds is what the demo means:

* **superseded**: ``kb-refunds-2026`` was replaced by ``kb-refunds-2027`` (the refund window changed), so the
  supported claims that still cite it are stale;
* **past its date**: ``it-vpn-guide-2026`` was valid until ``VPN_GUIDE_VALID_UNTIL``: the answers given after it
  rest on an expired guide (and Table V's price list of 2024 was valid to the end of 2024);
* **restricted**: the documents the access-gap claims cite (and Table V's security questionnaire) are restricted to
  administrators, whom no use case's requesters include: forbidden;
* **tiers 4 and 5**: a supplier's own profile (vendor documentation, tier 4) does not establish its
  certification, and a forum post (tier 5) does not establish a fact; the uncategorised rule asks for tier 3 or
  better (``hri_core.authority.default_authority_rules``).

The rows go through the ordinary register import (``register.governance.transfer.import_register``), so they are
validated and audited like any user's file. Called by ``register.demo.seed_demo``.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd

from hri_core.synthetic import USE_CASES
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import RegisterError
from register.governance.transfer import import_register
from register.governance.vocabulary import INTERNAL_POLICY, OFFICIAL_FRAMEWORK, VENDOR_DOCUMENTATION, WEB_PAGE

__all__ = ["SUPERSEDED", "VPN_GUIDE_VALID_UNTIL", "demo_source_rows", "seed_demo_sources"]

CURRENT, PREVIOUS = "2026", "2024"  # the synthetic documents' version suffixes
SUPERSEDED = ("kb-refunds-2026", "kb-refunds-2027")  # (the superseded source, its successor)
VPN_GUIDE = "it-vpn-guide-2026"
VPN_GUIDE_VALID_UNTIL = "2026-09-30"  # inside the synthetic answers' window (June to November 2026)
RESTRICTED_TO = "admin"  # no use case's requesters: the access-gap documents are forbidden to all of them
READ_ON = "2026-05-15"  # when the demo's mutable sources (vendor documents, web pages) were read
# the web pages written by anyone (forums, social networks, fan wikis): the weakest tier
USER_GENERATED = ("quora.com", "reddit.com", "stackoverflow.com", "stackexchange.com", "linkedin.com", "medium.com",
                  "fandom.com", "numerade.com", "answers.com")
OFFICIAL = (".gov", ".int", ".mil")  # government and intergovernmental pages: official, tier 2


def _document(source_id: str, title: str, source_type: str, tier: int, **extra: str) -> dict[str, str]:
    row = {"source_id": source_id, "title": title, "source_type": source_type, "authority_tier": str(tier)}
    if source_type in (VENDOR_DOCUMENTATION, WEB_PAGE):
        row["access_date"] = READ_ON
    row.update(extra)
    return row


def _kind(stem: str) -> tuple[str, int]:
    """A synthetic document's type and tier by its name: a supplier's profile and price list are its own
    documents (vendor documentation, tier 4 and 3); every other one is the organisation's own approved
    document (a contract, a policy, a knowledge-base article: tier 1, help articles tier 2)."""
    if stem.startswith("vendor-profile-"):
        return VENDOR_DOCUMENTATION, 4
    if stem.startswith("price-list-"):
        return VENDOR_DOCUMENTATION, 3
    return INTERNAL_POLICY, 2 if stem.startswith("kb-") else 1


def _synthetic_rows() -> list[dict[str, str]]:
    """Every document the synthetic answers can cite, current and superseded, and their restricted documents."""
    rows: dict[str, dict[str, str]] = {}
    for use_case in USE_CASES:
        for context in use_case.context:
            for fact in use_case.facts:
                stem = fact.doc.format_map(context)
                source_type, tier = _kind(stem)
                title = stem.replace("-", " ").capitalize()
                current, previous = f"{stem}-{CURRENT}", f"{stem}-{PREVIOUS}"
                rows.setdefault(previous, _document(previous, f"{title} ({PREVIOUS})", source_type, tier,
                                                    superseded_by=current, notes=f"{use_case.name}: replaced in "
                                                                                 f"{CURRENT}"))
                rows.setdefault(current, _document(current, f"{title} ({CURRENT})", source_type, tier,
                                                   notes=use_case.name))
            for restricted in use_case.restricted:
                name = restricted.format_map(context)
                rows.setdefault(name, _document(name, name.replace("-", " ").capitalize(), INTERNAL_POLICY, 1,
                                                restricted_to=RESTRICTED_TO,
                                                notes=f"{use_case.name}: restricted, not for its requesters"))
    old, new = SUPERSEDED
    rows[old]["superseded_by"] = new
    rows[old]["notes"] = "customer-support: the refund window changed; answers citing this version are stale"
    rows[new] = _document(new, "Kb refunds (2027)", INTERNAL_POLICY, 2, notes="customer-support: current refunds "
                                                                                "article, not cited yet")
    rows[VPN_GUIDE]["valid_until"] = VPN_GUIDE_VALID_UNTIL
    rows[VPN_GUIDE]["notes"] = "it-helpdesk: valid until the new VPN client's rollout"
    return list(rows.values())


def _web_rows(path: Path) -> list[dict[str, str]]:
    """The web pages the Factcheck-GPT answers cite: tier 5 when anyone may write them, tier 2 when official,
    else tier 3 (an edited reference or publication page)."""
    rows: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            for claim in json.loads(line).get("claims") or []:
                url = claim.get("source_id")
                if not url or url in rows:
                    continue
                host = (urlparse(url).hostname or "").removeprefix("www.")
                if any(host == h or host.endswith("." + h) for h in USER_GENERATED):
                    tier, kind = 5, WEB_PAGE
                elif host.endswith(OFFICIAL):
                    tier, kind = 2, OFFICIAL_FRAMEWORK if host.endswith(".int") else WEB_PAGE
                else:
                    tier, kind = 3, WEB_PAGE
                rows[url] = _document(url, host or url, kind, tier, publisher=host)
    return list(rows.values())


def _table_v_rows() -> list[dict[str, str]]:
    """The documents of the paper's Table V example (``data/table_v_supplier_contract.jsonl``)."""
    return [
        _document("contract-2024-07", "Supplier master services agreement (July 2024)", INTERNAL_POLICY, 1),
        _document("price-list-2024", "Supplier price list 2024", VENDOR_DOCUMENTATION, 3, valid_until="2024-12-31",
                  notes="Table V: pricing for 2024 only"),
        _document("security-questionnaire", "Supplier security questionnaire", INTERNAL_POLICY, 1,
                  restricted_to=RESTRICTED_TO, notes="Table V: not for the requester"),
    ]


def demo_source_rows(data_dir: Path) -> list[dict[str, str]]:
    """The demo's source register rows (text cells, as a register file holds them), by source id."""
    rows = {r["source_id"]: r for r in _table_v_rows() + _synthetic_rows() + _web_rows(data_dir / "demo" /
                                                                                      "factcheck_gpt.jsonl")}
    return list(rows.values())


def seed_demo_sources(store: Store, actor: Actor, data_dir: Path) -> int:
    """Record the demo's cited sources (``demo_source_rows``) in the source register; returns the rows inserted.
    Idempotent: skipped when the register already holds the demo's superseded source (kept, or deleted since)."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type="demo")  # first, whether or not it writes
    if store.scalar("SELECT count(*) FROM sources WHERE source_id = ?", [SUPERSEDED[0]]):
        return 0
    frame = pd.DataFrame(demo_source_rows(data_dir), dtype=object)
    result = import_register(store, actor, "sources", frame.where(frame.notna(), None))
    if result.rejected:
        raise RegisterError("the demo's source register no longer validates: "
                            + "; ".join(str(p) for p in result.rejected[:5]))
    return result.inserted
