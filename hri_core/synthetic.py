"""Deterministic synthetic responses in the interchange format, for demos, load tests and benchmarks.

``generate_responses(n, seed)`` yields ``n`` plain dicts shaped like one line of the JSON Lines
interchange format (DOMAIN.md section 4), spread over several use cases and models, with a label mix
that looks like a governed deployment: mostly SUPPORTED, a tail of PARTIAL / UNSUPPORTED /
CONTRADICTED / OUTDATED / OUT_OF_SCOPE / ACCESS_GAP, rare validated negative feedback and a few
multi-label claims. Question, answer, claim text, source id and evidence span come from small
per-use-case templates, so that a response page reads plausibly: a CONTRADICTED claim states a value
that differs from the one in its evidence span, an OUTDATED claim cites the superseded version of
its document, an ACCESS_GAP claim cites a restricted source.

Pure and streaming: stdlib only (``random.Random(seed)``), no I/O, one record at a time, so a caller
can write a million records without holding them. The same ``(n, seed, start, months, id_prefix)``
always yields the same records; records depend on ``n`` (creation times are spread evenly over the
window), so the first k records of ``n`` are not the k records of ``n=k``.

Callers: the demo-data and benchmark scripts (which write the files) and the tests.
Nothing here is real data: every name, value and document id is invented.
"""

from __future__ import annotations

import calendar
from bisect import bisect_right
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from random import Random
from typing import Any, NamedTuple

__all__ = ["LABEL_BASE_RATES", "MODELS", "USE_CASES", "generate_responses"]


class _Fact(NamedTuple):
    """One checkable statement a use case's answers make: claim and evidence share the value slot."""

    claim: str  # str.format_map template; {v} is the value, other slots come from the response context
    span: str  # the evidence sentence, formatted with the *true* value
    values: tuple[str, ...]  # possible values; one is true for a response, the others are wrong
    criticality: int  # base criticality (jittered per claim)
    doc: str  # source document id stem; "-2026" current, "-2024" superseded


class _UseCase(NamedTuple):
    name: str
    stakes: str  # "high" | "medium" | "low"
    weight: float  # share of traffic
    context: tuple[dict[str, str], ...]  # one is picked per response: names, slugs used in templates
    questions: tuple[str, ...]
    intros: tuple[str, ...]
    facts: tuple[_Fact, ...]
    restricted: tuple[str, ...]  # source ids the requester may not see (ACCESS_GAP)
    off_scope: tuple[str, ...]  # claims outside the use case's approved scope (OUT_OF_SCOPE)
    label_factor: dict[str, float]  # per-use-case multipliers of the base error rates


_F = _Fact

USE_CASES: tuple[_UseCase, ...] = (
    _UseCase(
        name="supplier-contracts", stakes="high", weight=0.13,
        context=tuple({"supplier": s, "slug": g} for s, g in (
            ("Acme Logistics", "acme"), ("Northwind Components", "northwind"), ("Globex Packaging", "globex"),
            ("Initech Software", "initech"), ("Umbrella Facilities", "umbrella"), ("Contoso Cloud", "contoso"))),
        questions=(
            "Summarise the key terms of our contract with {supplier}.",
            "What are the termination and renewal terms in the {supplier} agreement?",
            "Can we rely on {supplier} for weekend support under the current SLA?",
            "What does the {supplier} contract say about pricing and payment?",
            "What are {supplier}'s obligations if there is a security incident?",
        ),
        intros=("According to the {supplier} master services agreement:",
                "Here is a summary of the relevant terms of the {supplier} contract."),
        facts=(
            _F("The contract with {supplier} expires on {v}.", "Term: this Agreement remains in force until {v}.",
              ("31 December 2026", "30 June 2027", "31 March 2027", "31 December 2027"), 2, "contract-{slug}"),
            _F("Either party may terminate the agreement with {v} days' written notice.",
              "Termination for convenience requires {v} days' prior written notice.",
              ("30", "60", "90", "120"), 3, "contract-{slug}"),
            _F("The SLA includes {v} support.", "Support hours: {v}.",
              ("24/7", "Mon-Fri 8:00-18:00", "Mon-Sat 7:00-22:00"), 2, "sla-{slug}"),
            _F("Invoices are payable within {v} days.", "Payment terms: net {v} days from the invoice date.",
              ("30", "45", "60"), 2, "contract-{slug}"),
            _F("The liability of {supplier} is capped at {v} of the annual fees.",
              "Aggregate liability shall not exceed {v} of the fees paid in the preceding twelve months.",
              ("100%", "150%", "200%"), 3, "contract-{slug}"),
            _F("The agreement renews automatically for {v}.",
              "Upon expiry the Agreement renews automatically for successive periods of {v}.",
              ("one year", "two years", "six months"), 2, "contract-{slug}"),
            _F("{supplier} must report security incidents within {v} hours.",
              "The Supplier shall notify the Customer of any security incident within {v} hours.",
              ("24", "48", "72"), 3, "dpa-{slug}"),
            _F("Prices may increase by at most {v} per year.", "Annual price adjustments are capped at {v}.",
              ("3%", "5%", "CPI + 1%"), 2, "price-list-{slug}"),
            _F("Service credits of {v} apply when availability falls below target.",
              "Service credits: {v} of the monthly fee per missed availability target.",
              ("5%", "10%", "15%"), 2, "sla-{slug}"),
            _F("The availability target is {v}.", "The Supplier guarantees a monthly availability of {v}.",
              ("99.5%", "99.9%", "99.95%"), 2, "sla-{slug}"),
            _F("Disputes are governed by the laws of {v}.", "This Agreement is governed by the laws of {v}.",
              ("England and Wales", "Germany", "the Netherlands", "New York"), 1, "contract-{slug}"),
            _F("{supplier} holds {v} certification.", "Certificates held by the Supplier: {v}.",
              ("ISO 27001", "ISO 9001", "SOC 2 Type II"), 2, "vendor-profile-{slug}"),
            _F("Subcontracting requires {v}.", "The Supplier may not subcontract without {v}.",
              ("prior written consent", "30 days' notice to the Customer", "approval by the steering committee"),
              1, "contract-{slug}"),
            _F("The contract manager at {supplier} is {v}.", "Contract manager: {v}.",
              ("Dana Whitfield", "Luis Moreno", "Priya Raman"), 1, "vendor-profile-{slug}"),
        ),
        restricted=("security-questionnaire-{slug}", "board-minutes-2026", "legal-opinion-{slug}"),
        off_scope=("The liability clause would most likely be unenforceable in court.",
                   "You should withhold payment until {supplier} fixes the outage.",
                   "Switching to a competitor would save about 20% per year.",
                   "This exclusivity clause breaches competition law."),
        label_factor={"OUTDATED": 1.5, "CONTRADICTED": 1.1},
    ),
    _UseCase(
        name="hr-policy", stakes="medium", weight=0.20,
        context=tuple({"country": c} for c in ("Germany", "the United Kingdom", "France", "Spain", "Poland")),
        questions=(
            "How many days of annual leave do full-time employees in {country} get?",
            "What is our parental leave policy in {country}?",
            "Can I work remotely from abroad, and for how long?",
            "How do I claim travel expenses?",
            "What happens to unused holiday at the end of the year?",
            "What are the probation and notice periods for new employees in {country}?",
        ),
        intros=("According to the current HR policy for {country}:", "Here is what the employee handbook says."),
        facts=(
            _F("Full-time employees in {country} receive {v} days of paid annual leave.",
              "Annual leave entitlement ({country}, full-time): {v} working days.",
              ("25", "27", "28", "30"), 2, "hr-leave-policy"),
            _F("Up to {v} days of unused leave can be carried over to the next year.",
              "Carry-over of unused leave is limited to {v} days.", ("3", "5", "10"), 1, "hr-leave-policy"),
            _F("Parental leave is paid at full salary for {v} weeks.",
              "Enhanced parental pay: 100% of base salary for {v} weeks.", ("12", "16", "26"), 2,
              "hr-parental-leave"),
            _F("Employees may work remotely from abroad for up to {v} days per year.",
              "Temporary remote work from another country is permitted for a maximum of {v} days per calendar year.",
              ("20", "30", "45"), 2, "hr-remote-work"),
            _F("Sick leave must be reported to your manager before {v} on the first day.",
              "Absence due to illness must be reported before {v} on the first day of absence.",
              ("9:00", "10:00", "12:00"), 1, "hr-absence"),
            _F("A medical certificate is required from the {v} day of sick leave.",
              "A doctor's certificate is required from the {v} calendar day of absence.",
              ("second", "third", "fourth"), 1, "hr-absence"),
            _F("Travel expenses must be submitted within {v} days.",
              "Expense claims must be submitted within {v} days of the travel end date.",
              ("30", "60", "90"), 1, "hr-expenses"),
            _F("The probation period for new employees is {v} months.", "Probation: {v} months from the start date.",
              ("3", "6"), 2, "hr-onboarding"),
            _F("The notice period after probation is {v}.", "After probation, the notice period is {v}.",
              ("one month", "two months", "three months"), 2, "hr-contracts"),
            _F("Overtime is compensated with {v}.", "Approved overtime is compensated with {v}.",
              ("time off in lieu", "a 25% pay supplement", "a 50% pay supplement"), 2, "hr-working-time"),
            _F("The annual performance review takes place in {v}.",
              "Performance reviews are held once a year in {v}.", ("January", "March", "October"), 1,
              "hr-performance"),
            _F("The company matches pension contributions up to {v} of salary.",
              "Employer pension matching: up to {v} of base salary.", ("4%", "5%", "6%"), 2, "hr-benefits"),
            _F("Employees get {v} paid volunteering days per year.",
              "Volunteering leave: {v} paid days per calendar year.", ("1", "2", "3"), 1, "hr-benefits"),
        ),
        restricted=("salary-bands-2026", "hr-case-files", "disciplinary-register"),
        off_scope=("Your manager's decision would probably not hold up at an employment tribunal.",
                   "You should negotiate a higher salary before the review cycle.",
                   "Given your symptoms, you should take at least a week off.",
                   "This severance offer is below what a court would award."),
        label_factor={"ACCESS_GAP": 2.0},
    ),
    _UseCase(
        name="customer-support", stakes="low", weight=0.30,
        context=tuple({"plan": p} for p in ("Basic", "Pro", "Family", "Business")),
        questions=(
            "How do I cancel my {plan} subscription?",
            "Can I get a refund for my {plan} plan?",
            "What is included in the {plan} plan?",
            "How long does delivery take, and what does express shipping cost?",
            "How do I reset my password?",
            "Is my device still under warranty?",
        ),
        intros=("Thanks for reaching out! Here is what I found.", "Happy to help with your {plan} plan."),
        facts=(
            _F("You can cancel the {plan} plan at any time from {v}.", "Subscriptions can be cancelled from {v}.",
              ("the Account > Billing page", "the mobile app settings", "the customer portal"), 1, "kb-billing"),
            _F("Refunds are available within {v} days of purchase.", "Refund window: {v} days from the purchase date.",
              ("14", "30", "60"), 2, "kb-refunds"),
            _F("The {plan} plan includes {v} of cloud storage.", "{plan} plan storage allowance: {v}.",
              ("50 GB", "200 GB", "1 TB", "2 TB"), 1, "kb-plans"),
            _F("Standard delivery takes {v} working days.", "Standard shipping: {v} working days.",
              ("2-3", "3-5", "5-7"), 1, "kb-shipping"),
            _F("Express delivery costs {v}.", "Express shipping fee: {v}.",
              ("EUR 4.99", "EUR 9.99", "EUR 14.99"), 1, "kb-shipping"),
            _F("A password reset link is valid for {v}.", "Password reset links expire after {v}.",
              ("15 minutes", "1 hour", "24 hours"), 1, "kb-account"),
            _F("The {plan} plan allows up to {v} users.", "Maximum users on the {plan} plan: {v}.",
              ("1", "5", "6", "25"), 1, "kb-plans"),
            _F("Phone support is available {v}.", "Phone support hours: {v}.",
              ("Mon-Fri 9:00-17:00", "24/7", "Mon-Sat 8:00-20:00"), 1, "kb-contact"),
            _F("Returns are free for orders over {v}.", "Free returns apply to orders above {v}.",
              ("EUR 20", "EUR 50", "EUR 100"), 1, "kb-returns"),
            _F("The warranty on devices is {v}.", "Device warranty: {v} from the delivery date.",
              ("one year", "two years", "three years"), 2, "kb-warranty"),
            _F("Upgrading from the {plan} plan takes effect {v}.", "Plan upgrades take effect {v}.",
              ("immediately", "at the next billing date", "within 24 hours"), 1, "kb-billing"),
            _F("Your data is kept for {v} after you close your account.",
              "After account closure, customer data is retained for {v}.",
              ("30 days", "90 days", "one year"), 2, "kb-privacy"),
            _F("Annual billing saves {v} compared to monthly billing.",
              "Annual billing: {v} discount compared to monthly billing.", ("10%", "15%", "20%"), 1, "kb-billing"),
        ),
        restricted=("crm-account-notes", "fraud-rules", "internal-escalation-matrix"),
        off_scope=("You could probably get the charge reversed through your bank instead.",
                   "A competitor's plan would be cheaper for you.",
                   "The battery swelling is safe to ignore.",
                   "You are entitled to compensation under consumer law."),
        label_factor={"OUT_OF_SCOPE": 1.5},
    ),
    _UseCase(
        name="claims-handling", stakes="high", weight=0.14,
        context=tuple({"policy": p} for p in ("home", "motor", "travel", "contents")),
        questions=(
            "Is water damage covered under the customer's {policy} policy?",
            "What excess applies to this {policy} claim?",
            "How long does the customer have to report a {policy} claim?",
            "Which documents are needed to settle a {policy} claim?",
            "Can the customer appeal the decision on their {policy} claim?",
        ),
        intros=("Based on the {policy} policy wording:", "Summary of the relevant {policy} policy terms:"),
        facts=(
            _F("The excess on {policy} claims is {v}.", "Standard excess ({policy}): {v} per claim.",
              ("EUR 100", "EUR 250", "EUR 500"), 3, "policy-wording-{policy}"),
            _F("Claims must be reported within {v} days of the incident.",
              "The insured must notify us of a claim within {v} days.", ("14", "30", "60"), 3,
              "policy-wording-{policy}"),
            _F("Accidental water damage is {v}.", "Escape of water: {v}.",
              ("covered", "covered up to EUR 10,000", "excluded"), 3, "policy-wording-{policy}"),
            _F("Claims above {v} require an on-site assessment.",
              "A loss adjuster visit is required for claims exceeding {v}.",
              ("EUR 2,500", "EUR 5,000", "EUR 10,000"), 2, "claims-handbook"),
            _F("The policy covers up to {v} for temporary accommodation.", "Alternative accommodation: up to {v}.",
              ("EUR 5,000", "EUR 10,000", "EUR 20,000"), 2, "policy-wording-{policy}"),
            _F("Approved claims are paid within {v} working days.",
              "Settlement is made within {v} working days of approval.", ("5", "10", "15"), 2, "claims-handbook"),
            _F("A police report is required for {v}.", "A crime reference number is mandatory for {v}.",
              ("all theft claims", "theft claims above EUR 1,000", "theft and vandalism claims"), 2,
              "claims-handbook"),
            _F("Items older than {v} are settled at depreciated value.",
              "Items older than {v} are indemnified at their depreciated value.",
              ("two years", "three years", "five years"), 2, "policy-wording-{policy}"),
            _F("The maximum payout for a single item is {v}.", "Single-article limit: {v}.",
              ("EUR 1,500", "EUR 2,000", "EUR 5,000"), 3, "policy-wording-{policy}"),
            _F("After an at-fault claim the no-claims discount is reduced by {v}.",
              "Following an at-fault claim, the no-claims discount is reduced by {v}.",
              ("two years", "three years", "half"), 2, "policy-wording-{policy}"),
            _F("Suspected fraud is referred to {v}.", "Suspected fraud must be referred to {v}.",
              ("the Special Investigations Unit", "the claims team leader", "compliance"), 2, "claims-handbook"),
            _F("Customers can appeal a declined claim within {v}.",
              "Appeals against a declined claim may be lodged within {v}.",
              ("30 days", "eight weeks", "six months"), 3, "complaints-procedure"),
            _F("Flood damage is covered only if {v}.", "Flood cover applies only if {v}.",
              ("the property is outside a designated flood zone", "the flood add-on was purchased",
               "the damage is reported within 48 hours"), 3, "policy-wording-{policy}"),
        ),
        restricted=("claimant-medical-records", "fraud-investigation-notes", "reserve-calculations"),
        off_scope=("The customer is clearly exaggerating the loss.",
                   "We should settle quickly to avoid a lawsuit.",
                   "The customer's neighbour is legally liable for the damage.",
                   "Any other insurer would reject this claim."),
        label_factor={"CONTRADICTED": 1.2, "OUTDATED": 1.2},
    ),
    _UseCase(
        name="it-helpdesk", stakes="low", weight=0.23,
        context=tuple({"os": o} for o in ("Windows 11", "macOS", "Ubuntu")),
        questions=(
            "How do I connect to the VPN from home on {os}?",
            "My password expired, how do I reset it?",
            "How do I request a new laptop?",
            "Can I install software on my {os} laptop myself?",
            "How do I get access to a shared drive?",
            "I lost my phone with the authenticator app, what should I do?",
        ),
        intros=("Here are the steps from the IT knowledge base.", "For {os} devices, the IT guidance is:"),
        facts=(
            _F("Passwords expire every {v} days.", "Password maximum age: {v} days.", ("60", "90", "180"), 1,
              "it-password-policy"),
            _F("Passwords must have at least {v} characters.", "Minimum password length: {v} characters.",
              ("12", "14", "16"), 1, "it-password-policy"),
            _F("The VPN client for {os} is {v}.", "Approved VPN client on {os}: {v}.",
              ("GlobalProtect", "Cisco AnyConnect", "WireGuard"), 1, "it-vpn-guide"),
            _F("Laptops are replaced every {v} years.", "Standard laptop refresh cycle: {v} years.",
              ("3", "4", "5"), 1, "it-hardware"),
            _F("New hardware requests take {v} working days.",
               "Hardware requests are fulfilled within {v} working days.",
              ("3", "5", "10"), 1, "it-hardware"),
            _F("Installing software on {os} requires {v}.", "Software installation on {os} requires {v}.",
              ("a request in the self-service portal", "local admin rights", "approval by your manager"), 2,
              "it-software-policy"),
            _F("Shared drive access is approved by {v}.", "Access to shared drives is approved by {v}.",
              ("the data owner", "your line manager", "the IT service desk"), 2, "it-access-policy"),
            _F("The service desk is open {v}.", "Service desk hours: {v}.",
              ("Mon-Fri 8:00-18:00", "24/7", "Mon-Fri 7:00-19:00"), 1, "it-contact"),
            _F("Multi-factor authentication uses {v}.", "MFA method: {v}.",
              ("the Authenticator app", "a hardware key", "SMS codes"), 2, "it-security-policy"),
            _F("Lost devices must be reported within {v}.", "Report lost or stolen devices within {v}.",
              ("1 hour", "4 hours", "24 hours"), 2, "it-security-policy"),
            _F("Mailbox storage is limited to {v}.", "Mailbox quota: {v}.", ("50 GB", "100 GB", "200 GB"), 1,
              "it-email"),
            _F("Deleted files can be restored for {v} days.", "Deleted files are retained for {v} days.",
              ("30", "60", "93"), 1, "it-storage"),
            _F("Personal devices can access email only with {v}.", "BYOD email access requires {v}.",
              ("the company's device management profile", "a VPN connection", "manager approval"), 2, "it-byod"),
        ),
        restricted=("admin-runbook", "firewall-config", "privileged-access-register"),
        off_scope=("You could bypass the proxy with a personal hotspot.",
                   "Your manager is monitoring your screen.",
                   "Buying your own laptop would be faster.",
                   "The outage was caused by a mistake of the network team."),
        label_factor={"ACCESS_GAP": 1.5},
    ),
)

MODELS: tuple[str, ...] = ("rag-v3", "rag-v4", "gpt-baseline")

# Share of traffic per model at the start (f=0) and end (f=1) of the window: rag-v4 is rolled out.
_MODEL_SHARE = {"rag-v3": (0.55, 0.15), "rag-v4": (0.10, 0.60), "gpt-baseline": (0.35, 0.25)}

# Probability that a claim's (first) label is each error label, for rag-v3 in an ordinary response;
# SUPPORTED takes the rest. Multiplied by model, use case, drift and per-response factors below.
LABEL_BASE_RATES: dict[str, float] = {
    "PARTIAL": 0.075,
    "UNSUPPORTED": 0.065,
    "CONTRADICTED": 0.040,
    "OUTDATED": 0.030,
    "OUT_OF_SCOPE": 0.020,
    "ACCESS_GAP": 0.020,
    "VALIDATED_NEGATIVE_FEEDBACK": 0.010,
}
_ERROR_LABELS = tuple(LABEL_BASE_RATES)
_MODEL_FACTOR: dict[str, dict[str, float]] = {
    "rag-v3": {},
    "rag-v4": {label: 0.6 for label in _ERROR_LABELS},
    # No retrieval: invents more, rarely leaks restricted documents, never cites context.
    "gpt-baseline": {"PARTIAL": 1.4, "UNSUPPORTED": 2.4, "CONTRADICTED": 1.8, "OUTDATED": 1.5,
                     "OUT_OF_SCOPE": 1.6, "ACCESS_GAP": 0.3, "VALIDATED_NEGATIVE_FEEDBACK": 1.5},
}
# Some answers go wrong together: a response is calm, ordinary or troubled.
_RESPONSE_FACTORS = ((0.5, 0.45), (1.0, 0.35), (2.2, 0.20))  # (factor, probability); mean ~1
_MAX_ERROR_RATE = 0.85
# Second label of a multi-label claim, by first label (only pairs that make sense together).
_SECOND_LABEL = {
    "CONTRADICTED": "OUTDATED",  # the claim follows a superseded document that the current one contradicts
    "OUTDATED": "CONTRADICTED",
    "UNSUPPORTED": "ACCESS_GAP",  # the only support is a document the requester may not see
    "ACCESS_GAP": "UNSUPPORTED",
    "PARTIAL": "ACCESS_GAP",  # the rest of the claim is only in a document the requester may not see
    "OUT_OF_SCOPE": "UNSUPPORTED",
}
_MULTI_LABEL_RATE = 0.05  # of error claims
_CRITICALITY_JITTER = ((-1, 0.13), (0, 0.76), (1, 0.10), (2, 0.01))
_NO_CLAIMS_RATE = 0.02
_NO_CLAIMS_ANSWERS = (
    "I could not find an approved source that answers this question, so I will not guess.",
    "I'm sorry, I can't help with that request.",
    "Could you clarify which document or case you mean?",
)


def _cumulative(weights: list[float]) -> list[float]:
    total = 0.0
    out = []
    for w in weights:
        total += w
        out.append(total)
    out[-1] = float("inf")  # guard against rounding: the last bucket catches everything
    return out


def _label_table(use_case: _UseCase, model: str, drift: float,
                 response_factor: float) -> tuple[list[float], tuple[str, ...]]:
    """Cumulative thresholds over (SUPPORTED, error labels...) for one situation."""
    rates = []
    for label in _ERROR_LABELS:
        rate = LABEL_BASE_RATES[label] * _MODEL_FACTOR[model].get(label, 1.0) * use_case.label_factor.get(label, 1.0)
        if label == "OUTDATED" and model != "rag-v4":
            rate *= drift  # the older pipelines' indexes age over the window; rag-v4 re-indexes
        rates.append(rate * response_factor)
    total = sum(rates)
    if total > _MAX_ERROR_RATE:
        rates = [r * _MAX_ERROR_RATE / total for r in rates]
    return _cumulative([1.0 - sum(rates), *rates]), ("SUPPORTED", *_ERROR_LABELS)


def _add_months(start: date, months: int) -> date:
    year, month0 = divmod(start.month - 1 + months, 12)
    year += start.year
    day = min(start.day, calendar.monthrange(year, month0 + 1)[1])
    return date(year, month0 + 1, day)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_responses(n: int, seed: int = 42, start: date = date(2026, 6, 1), months: int = 6, *,
                       id_prefix: str = "syn") -> Iterator[dict[str, Any]]:
    """Yield ``n`` synthetic interchange records (plain dicts), created evenly over ``months`` from ``start``.

    Deterministic: the same arguments give the same records. Response ids are
    ``<id_prefix>-<7-digit number>``, in creation-time order; claim ids ``<response_id>-<k>``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if months < 1:
        raise ValueError(f"months must be >= 1, got {months}")
    rnd = Random(seed)
    random = rnd.random

    t0 = datetime(start.year, start.month, start.day, tzinfo=UTC)
    window = (datetime.combine(_add_months(start, months), datetime.min.time(), tzinfo=UTC) - t0)
    window_s = window.total_seconds()

    # Everything that depends only on (use case, model, month, response factor) is tabulated once.
    uc_cum = _cumulative([uc.weight for uc in USE_CASES])
    month_models = []
    label_tables: dict[tuple[int, str, int, int], tuple[list[float], tuple[str, ...]]] = {}
    for month in range(months):
        f = (month + 0.5) / months
        month_models.append(_cumulative([a + (b - a) * f for a, b in (_MODEL_SHARE[m] for m in MODELS)]))
        drift = 0.7 + 0.8 * f
        for u, uc in enumerate(USE_CASES):
            for model in MODELS:
                for k, (factor, _) in enumerate(_RESPONSE_FACTORS):
                    label_tables[(u, model, month, k)] = _label_table(uc, model, drift, factor)
    rf_cum = _cumulative([p for _, p in _RESPONSE_FACTORS])
    jitter_cum = _cumulative([p for _, p in _CRITICALITY_JITTER])
    jitter = [d for d, _ in _CRITICALITY_JITTER]

    for i in range(n):
        created = t0 + timedelta(seconds=window_s * (i + random()) / n)
        month = min(months - 1, (created.year - t0.year) * 12 + created.month - t0.month)
        u = bisect_right(uc_cum, random())
        uc = USE_CASES[u]
        model = MODELS[bisect_right(month_models[month], random())]
        cum, labels_order = label_tables[(u, model, month, bisect_right(rf_cum, random()))]
        ctx = dict(uc.context[int(random() * len(uc.context))])
        rid = f"{id_prefix}-{i + 1:07d}"
        question = uc.questions[int(random() * len(uc.questions))].format_map(ctx)

        n_claims = 0 if random() < _NO_CLAIMS_RATE else min(12, max(1, int(rnd.gauss(6.1, 2.4) + 0.5)))
        facts = uc.facts
        order = list(range(len(facts)))
        for j in range(n_claims):  # partial Fisher-Yates: n_claims distinct facts
            pick = j + int(random() * (len(order) - j))
            order[j], order[pick] = order[pick], order[j]
        picked = order[:n_claims]
        claims = []
        texts = []
        for k, fact_index in enumerate(picked, start=1):
            fact = facts[fact_index]
            values = fact.values
            truth = int(random() * len(values))
            wrong = (truth + 1 + int(random() * (len(values) - 1))) % len(values)
            label = labels_order[bisect_right(cum, random())]
            doc = fact.doc.format_map(ctx) if "{" in fact.doc else fact.doc
            claim: dict[str, Any] = {"claim_id": f"{rid}-{k}"}
            source: str | None = f"{doc}-2026"
            span_value: str | None = values[truth]
            dims = None
            if label == "SUPPORTED" or label == "PARTIAL":
                value = truth
                if label == "PARTIAL" and model != "gpt-baseline" and random() < 0.25:
                    dims = ["C"]  # only partly matches the provided context (DOMAIN.md: set explicitly)
            elif label == "CONTRADICTED":
                value = wrong
                # With retrieved context the contradiction is also a context deviation.
                dims = ["F", "C"] if model != "gpt-baseline" and random() < 0.65 else ["F"]
            elif label == "OUTDATED":
                value = wrong
                source = f"{doc}-2024"  # the claim follows the superseded version
                span_value = values[wrong]
            elif label == "ACCESS_GAP":
                value = truth
                source = uc.restricted[int(random() * len(uc.restricted))].format_map(ctx)
                span_value = None
            elif label == "VALIDATED_NEGATIVE_FEEDBACK":
                value = wrong
            else:  # UNSUPPORTED, OUT_OF_SCOPE: nothing in the sources backs the claim
                value = int(random() * len(values))
                source = None
                span_value = None
            ctx["v"] = values[value]
            if label == "OUT_OF_SCOPE":
                text = uc.off_scope[int(random() * len(uc.off_scope))].format_map(ctx)
            else:
                text = fact.claim.format_map(ctx)
            claim["text"] = text
            texts.append(text)

            claim_labels = [label]
            if label == "VALIDATED_NEGATIVE_FEEDBACK":
                if random() < 0.5:  # a reviewer confirmed what the judge had already flagged
                    claim_labels.insert(0, "CONTRADICTED" if random() < 0.6 else "UNSUPPORTED")
            elif label != "SUPPORTED" and random() < _MULTI_LABEL_RATE:
                second = _SECOND_LABEL[label]
                claim_labels.append(second)
                dims = None  # explicit dimensions would apply to both labels: use the profile defaults
                if second == "ACCESS_GAP" and source is None:
                    source = uc.restricted[int(random() * len(uc.restricted))].format_map(ctx)
            claim["labels"] = claim_labels
            if dims is not None:
                claim["dimensions"] = dims
            crit = fact.criticality + jitter[bisect_right(jitter_cum, random())]
            claim["criticality"] = 1 if crit < 1 else (5 if crit > 5 else crit)
            if source is not None:
                claim["source_id"] = source
            if span_value is not None:
                ctx["v"] = span_value
                claim["span"] = fact.span.format_map(ctx)
            if label == "VALIDATED_NEGATIVE_FEEDBACK":
                feedback_at = created + timedelta(days=1 + int(random() * 21), seconds=int(random() * 36_000))
                # validated by the window's end at the latest: a record cannot bring feedback later than its import
                # (hri_core.feedback.future_feedback_problems), and the window's end is the earliest such import
                claim["feedback_at"] = _iso(min(feedback_at, t0 + window))
                r = random()
                claim["feedback_count"] = 1 if r < 0.6 else (2 if r < 0.85 else 3 + int(random() * 3))
                claim["feedback_resolved"] = random() < 0.45
            claims.append(claim)

        if n_claims:
            answer = uc.intros[int(random() * len(uc.intros))].format_map(ctx) + " " + " ".join(texts)
        else:
            answer = _NO_CLAIMS_ANSWERS[int(random() * len(_NO_CLAIMS_ANSWERS))]
        yield {
            "response_id": rid,
            "use_case": uc.name,
            "model": model,
            "created_at": _iso(created),
            "stakes": uc.stakes,
            "question": question,
            "answer": answer,
            "claims": claims,
        }
