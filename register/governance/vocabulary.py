"""The governance vocabularies (DOMAIN.md section 7; paper Tables VII and VIII).

Source types, claim types, verification statuses and required handlings, each value typed once
here, and the paper's minimum evidence rules (Table VIII) in those words. Everything else -- the
registers' validation, the evidence rules, the checklist's SQL (as bound parameters), the pages'
pickers -- takes the values from these names.
"""

from __future__ import annotations

__all__ = [
    "CLAIM_TYPES", "HANDLINGS", "HANDLING_STATUSES", "MUTABLE_SOURCE_TYPES", "PAPER_RULES", "SOURCE_TYPES",
    "STATUSES", "WITHDRAWN_STATUSES",
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

# --- claim types ------------------------------------------------------------------------------------

SCIENTIFIC = "scientific/methodological"
BENCHMARK_NUMBER = "benchmark property or number"
VENDOR_CAPABILITY = "vendor capability"
GOVERNANCE_FRAMEWORK = "governance framework"
INTERNAL_PERMISSION = "internal policy/permission"
DESIGN_CHOICE = "original design choice"

CLAIM_TYPES = (SCIENTIFIC, BENCHMARK_NUMBER, VENDOR_CAPABILITY, GOVERNANCE_FRAMEWORK, INTERNAL_PERMISSION,
               DESIGN_CHOICE)

# --- verification statuses --------------------------------------------------------------------------

VERIFIED = "verified"
PARTIALLY_VERIFIED = "partially verified"
UNVERIFIED = "unverified"
PROVISIONAL = "provisional (design parameter)"
HYPOTHESIS = "hypothesis"
NOT_CLAIMED = "not claimed"
REMOVED = "removed"

STATUSES = (VERIFIED, PARTIALLY_VERIFIED, UNVERIFIED, PROVISIONAL, HYPOTHESIS, NOT_CLAIMED, REMOVED)
WITHDRAWN_STATUSES = (NOT_CLAIMED, REMOVED)  # no longer asserted: no evidence needed
UNSETTLED_STATUSES = (UNVERIFIED, PARTIALLY_VERIFIED)  # still to verify, soften or remove

# --- required handlings -----------------------------------------------------------------------------

REMOVE = "remove"
SOFTEN = "soften"
MARK_HYPOTHESIS = "mark as hypothesis"
DROP_NUMBER = "do not report the number"
AS_VENDOR_CLAIM = "classify as vendor claim"
AS_ACCESS_GAP = "classify as ACCESS_GAP/UNKNOWN"

HANDLINGS = (REMOVE, SOFTEN, MARK_HYPOTHESIS, DROP_NUMBER, AS_VENDOR_CLAIM, AS_ACCESS_GAP)
# which verification status shows that a handling was applied (soften and the classifications are
# wording changes no register field can show: a reviewer confirms them in the checklist)
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
