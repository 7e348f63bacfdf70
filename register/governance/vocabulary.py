"""The governance vocabularies (DOMAIN.md section 7; paper Tables VII and VIII).

Source types, claim types, verification statuses and required handlings, each value typed once
here, and the paper's minimum evidence rules (Table VIII) in those words. Everything else -- the
registers' validation, the evidence rules, the checklist's SQL (as bound parameters), the pages'
pickers -- takes the values from these names.
"""

from __future__ import annotations

from typing import NamedTuple

from hri_core.vocabulary import (
    USE_CASE_APPROVED,
    USE_CASE_PROPOSED,
    USE_CASE_RETIRED,
    USE_CASE_STATUSES,
    USE_CASE_SUSPENDED,
)

__all__ = [
    "ACCEPTABLE_SECONDARY", "AUTHOR_INTERPRETATION", "CLAIM_TYPES", "HANDLINGS", "HANDLING_STATUSES",
    "MOVED_TO_FUTURE_WORK", "MUTABLE_SOURCE_TYPES", "PAPER_RULES", "PAPER_RULES_AS_WORDED", "PRIMARY",
    "REQUESTER_ROLE_PATTERN", "SETTLED_STATUSES", "SOFTENED", "SOURCE_BASES", "SOURCE_TYPES", "STATUSES",
    "USE_CASE_STATUSES", "WEAKEST_TIER", "WITHDRAWN_STATUSES",
    "WordedRule",
]

# --- source types -----------------------------------------------------------------------------------

PEER_REVIEWED = "peer-reviewed publication"
CONFERENCE = "recognized conference proceedings"
PREPRINT = "preprint"
OFFICIAL_FRAMEWORK = "official framework"
DATASET_DOCUMENTATION = "official dataset card or repository documentation"
VENDOR_DOCUMENTATION = "vendor documentation"
INTERNAL_POLICY = "approved internal policy / access-control record"
WEB_PAGE = "web page"
ORIGINAL_PROPOSAL = "original proposal"

SOURCE_TYPES = (PEER_REVIEWED, CONFERENCE, PREPRINT, OFFICIAL_FRAMEWORK, DATASET_DOCUMENTATION, VENDOR_DOCUMENTATION,
                INTERNAL_POLICY, WEB_PAGE, ORIGINAL_PROPOSAL)
# sources whose content can change after it was read: an access date is required
MUTABLE_SOURCE_TYPES = (WEB_PAGE, VENDOR_DOCUMENTATION, DATASET_DOCUMENTATION)
# a source's authority tier runs from 1 (strongest: primary, peer reviewed) to this (weakest)
WEAKEST_TIER = 5

# --- claim types ------------------------------------------------------------------------------------

SCIENTIFIC = "scientific/methodological"
BENCHMARK_NUMBER = "benchmark property or number"
VENDOR_CAPABILITY = "vendor capability"
GOVERNANCE_FRAMEWORK = "governance framework"
INTERNAL_PERMISSION = "internal policy/permission"
DESIGN_CHOICE = "original design choice"
# the author's own reading of a source, recorded as such (Table IX item 1 asks for sources of *factual* claims)
AUTHOR_INTERPRETATION = "author interpretation"

CLAIM_TYPES = (SCIENTIFIC, BENCHMARK_NUMBER, VENDOR_CAPABILITY, GOVERNANCE_FRAMEWORK, INTERNAL_PERMISSION,
               DESIGN_CHOICE, AUTHOR_INTERPRETATION)

# Table IX item 1: "linked to a primary or acceptable secondary source" -- what a claim's sources are to it
PRIMARY, ACCEPTABLE_SECONDARY = "primary", "acceptable secondary"
SOURCE_BASES = (PRIMARY, ACCEPTABLE_SECONDARY)

# --- verification statuses --------------------------------------------------------------------------

VERIFIED = "verified"
PARTIALLY_VERIFIED = "partially verified"
UNVERIFIED = "unverified"
PROVISIONAL = "provisional (design parameter)"
HYPOTHESIS = "hypothesis"
NOT_CLAIMED = "not claimed"
REMOVED = "removed"
# Table IX item 5: ambiguous or unverifiable claims are "removed, softened, or moved to future work"
SOFTENED = "softened"
MOVED_TO_FUTURE_WORK = "moved to future work"
# Table VIII, internal policy/permission: "classify as ACCESS_GAP or UNKNOWN rather than infer authorization"
ACCESS_GAP = "ACCESS_GAP"
UNKNOWN = "UNKNOWN"
# Table VII's row for the paper's own contribution: "Not a literature claim; explicitly proposed here."
NOT_LITERATURE = "not a literature claim"

STATUSES = (VERIFIED, PARTIALLY_VERIFIED, UNVERIFIED, PROVISIONAL, HYPOTHESIS, NOT_CLAIMED, REMOVED, ACCESS_GAP,
            UNKNOWN, NOT_LITERATURE, SOFTENED, MOVED_TO_FUTURE_WORK)
# no longer asserted: no evidence needed (a softened claim is still asserted, more weakly: it still needs its source)
WITHDRAWN_STATUSES = (NOT_CLAIMED, REMOVED, MOVED_TO_FUTURE_WORK)
# item 5's three ways of settling an ambiguous or unverifiable claim
SETTLED_STATUSES = (REMOVED, SOFTENED, MOVED_TO_FUTURE_WORK)
UNSETTLED_STATUSES = (UNVERIFIED, PARTIALLY_VERIFIED)  # still to verify, soften or remove

# --- use cases (the approved-use-case register) ------------------------------------------------------

# the status words are hri_core's (hri_core.vocabulary): the scorer's Scope check reads them too
PROPOSED, APPROVED, SUSPENDED, RETIRED = USE_CASE_PROPOSED, USE_CASE_APPROVED, USE_CASE_SUSPENDED, USE_CASE_RETIRED
# Requester roles name the people who ask a use case's questions ("clinician", "contract-manager"): a
# vocabulary of their own, not the console's roles (viewer ... admin say what a person may do in this
# console, not who asks an AI system). A role is a short name, at most 80 characters, starting with a
# letter or digit; the ; and , of a file's lists and control characters cannot be part of one.
REQUESTER_ROLE_PATTERN = r"[^\W_][^;,\x00-\x1f\x7f]{0,79}"

# --- required handlings -----------------------------------------------------------------------------

REMOVE = "remove"
SOFTEN = "soften"
MARK_HYPOTHESIS = "mark as hypothesis"
DROP_NUMBER = "do not report the number"
AS_VENDOR_CLAIM = "classify as vendor claim"
AS_ACCESS_GAP = "classify as ACCESS_GAP/UNKNOWN"

HANDLINGS = (REMOVE, SOFTEN, MARK_HYPOTHESIS, DROP_NUMBER, AS_VENDOR_CLAIM, AS_ACCESS_GAP)
# which verification status shows that a handling was applied (soften and the classifications are
# wording changes no register field can show: a reviewer confirms them in the checklist). Rule version 1
# was evaluated with this mapping; rules of later versions carry their own ``handled_statuses``.
HANDLING_STATUSES = ((REMOVE, REMOVED), (REMOVE, NOT_CLAIMED), (MARK_HYPOTHESIS, HYPOTHESIS),
                     (DROP_NUMBER, REMOVED), (DROP_NUMBER, NOT_CLAIMED), (DROP_NUMBER, PROVISIONAL))

# --- Table VIII of the paper: the first rule version ------------------------------------------------

PAPER_RULES = (
    (SCIENTIFIC, (PEER_REVIEWED, CONFERENCE, PREPRINT), (REMOVE, SOFTEN, MARK_HYPOTHESIS),
     "Peer-reviewed paper, recognized conference proceedings, or clearly marked preprint when no peer-reviewed "
     "source exists. If missing: remove, soften, or mark explicitly as hypothesis or open question."),
    (BENCHMARK_NUMBER, (PEER_REVIEWED, CONFERENCE, DATASET_DOCUMENTATION), (DROP_NUMBER,),
     "Primary benchmark paper, official dataset card, or official repository documentation. If missing: do not "
     "report the number; state only the qualitative point if supported."),
    (VENDOR_CAPABILITY, (VENDOR_DOCUMENTATION, WEB_PAGE), (AS_VENDOR_CLAIM,),
     "Official vendor documentation, release note, or product page with access date. If missing: classify as "
     "vendor claim, not independent validation."),
    (GOVERNANCE_FRAMEWORK, (OFFICIAL_FRAMEWORK,), (SOFTEN,),
     "Official framework document from the issuing body. If missing: do not paraphrase as regulatory "
     "requirement unless the source itself states it."),
    (INTERNAL_PERMISSION, (INTERNAL_POLICY,), (AS_ACCESS_GAP,),
     "Approved policy, access-control record, system log, or authorized process owner confirmation. If "
     "missing: classify as ACCESS_GAP or UNKNOWN rather than infer authorization."),
    (DESIGN_CHOICE, (ORIGINAL_PROPOSAL,), (MARK_HYPOTHESIS,),
     "Explicit statement that the element is proposed by this paper. If missing: do not present it as an "
     "established standard or empirically validated result."),
)


# --- Table VIII as the paper words it: the second rule version ----------------------------------------


class WordedRule(NamedTuple):
    """One rule of Table VIII as worded: version 1's four fields plus what the wording adds."""

    claim_type: str
    acceptable_source_types: tuple[str, ...]
    handling: tuple[str, ...]
    guidance: str
    handled_statuses: tuple[str, ...]           # the statuses that show the handling was applied
    needs_access_date: bool = False             # a source counts only with the date it was read
    preprint_only_without_peer_review: bool = False  # a preprint counts only when the claim says none exists
    refused_statuses: tuple[str, ...] = ()      # statuses a claim of this type may not carry


_GUIDANCE = {rule[0]: rule[3] for rule in PAPER_RULES}

# What version 1 read into the table and the paper does not say:
# * a benchmark number without a source was compliant when marked provisional; the paper says "do not
#   report the number" (removed or not claimed);
# * a preprint counted whether or not a peer-reviewed source exists; the paper allows it only "when no
#   peer-reviewed source exists" (the claim's ``no_peer_reviewed_source`` field says so);
# * any web page counted for a vendor capability; the paper asks for "official vendor documentation,
#   release note, or product page with access date";
# * internal policy without approved evidence had no status to record; the paper says "classify as
#   ACCESS_GAP or UNKNOWN";
# * the paper's own contribution could be marked verified; Table VII marks it "Not a literature claim".
PAPER_RULES_AS_WORDED = (
    WordedRule(SCIENTIFIC, (PEER_REVIEWED, CONFERENCE, PREPRINT), (REMOVE, SOFTEN, MARK_HYPOTHESIS),
               _GUIDANCE[SCIENTIFIC], (REMOVED, NOT_CLAIMED, HYPOTHESIS), preprint_only_without_peer_review=True),
    WordedRule(BENCHMARK_NUMBER, (PEER_REVIEWED, CONFERENCE, DATASET_DOCUMENTATION), (DROP_NUMBER,),
               _GUIDANCE[BENCHMARK_NUMBER], (REMOVED, NOT_CLAIMED)),
    WordedRule(VENDOR_CAPABILITY, (VENDOR_DOCUMENTATION,), (AS_VENDOR_CLAIM,), _GUIDANCE[VENDOR_CAPABILITY], (),
               needs_access_date=True),
    WordedRule(GOVERNANCE_FRAMEWORK, (OFFICIAL_FRAMEWORK,), (SOFTEN,), _GUIDANCE[GOVERNANCE_FRAMEWORK], ()),
    WordedRule(INTERNAL_PERMISSION, (INTERNAL_POLICY,), (AS_ACCESS_GAP,), _GUIDANCE[INTERNAL_PERMISSION],
               (ACCESS_GAP, UNKNOWN)),
    WordedRule(DESIGN_CHOICE, (ORIGINAL_PROPOSAL,), (MARK_HYPOTHESIS,), _GUIDANCE[DESIGN_CHOICE], (HYPOTHESIS,),
               refused_statuses=(VERIFIED,)),
)
