"""Governance: the source and claims registers, the minimum evidence rules, the checklist, the report.

Modules, one job each:

- ``vocabulary``: source types, claim types, statuses, handlings, the paper's Table VIII;
- ``rows``: normalising and validating register rows (pandera);
- ``registers``: reading, saving and restoring sources, claims and use cases;
- ``use_cases``: the approved-use-case register's four eyes (what an edit may not do, the approval);
- ``transfer``: register files (upload, import by key, export, templates, formula escaping);
- ``evidence``: the versioned minimum evidence rules and every claim evaluated against them;
- ``seed``: the paper's own register as the example;
- ``checks``: the seven checks of Table IX; ``checklist``: their runs, sign-offs and CI gate;
- ``report``: the release report of a run.

The names below are the registers' public API in one namespace (``from register import governance``);
code inside the register imports the module that holds a name.
"""

from register.errors import Problem, ValidationFailed
from register.governance.evidence import (
                                          approve_rules,
                                          current_rule_version,
                                          ensure_default_rules,
                                          evaluate_rules,
                                          list_rules,
                                          pending_rule_versions,
                                          rule_versions,
                                          save_rules,
)
from register.governance.registers import (
                                          RowChanges,
                                          add_row,
                                          canonical_rows,
                                          list_claims,
                                          list_sources,
                                          readable_key,
                                          restore,
                                          save_claims,
                                          save_sources,
                                          save_use_cases,
)
from register.governance.rows import CLAIM_COLUMNS, SOURCE_COLUMNS, USE_CASE_COLUMNS, claim_key_for
from register.governance.seed import seed_paper_register
from register.governance.transfer import (
                                          CLAIM_TEMPLATE_COLUMNS,
                                          MAX_UPLOAD_BYTES,
                                          ImportResult,
                                          export_claims,
                                          export_sources,
                                          export_use_cases,
                                          formula_escaped,
                                          import_register,
                                          read_upload,
                                          template,
)
from register.governance.use_cases import approve_use_case, list_use_cases, use_case_row
from register.governance.vocabulary import (
                                          CLAIM_TYPES,
                                          HANDLINGS,
                                          MUTABLE_SOURCE_TYPES,
                                          PAPER_RULES,
                                          SOURCE_TYPES,
                                          STATUSES,
                                          USE_CASE_STATUSES,
)

__all__ = [
    "CLAIM_COLUMNS", "CLAIM_TEMPLATE_COLUMNS", "CLAIM_TYPES", "HANDLINGS", "MAX_UPLOAD_BYTES", "MUTABLE_SOURCE_TYPES",
    "PAPER_RULES", "SOURCE_COLUMNS", "SOURCE_TYPES", "STATUSES", "USE_CASE_COLUMNS", "USE_CASE_STATUSES",
    "ImportResult", "Problem", "RowChanges", "ValidationFailed", "add_row", "approve_rules", "approve_use_case",
    "canonical_rows", "claim_key_for", "current_rule_version", "ensure_default_rules", "evaluate_rules",
    "export_claims", "export_sources", "export_use_cases", "formula_escaped", "import_register", "list_claims",
    "list_rules", "list_sources", "list_use_cases", "pending_rule_versions", "read_upload", "readable_key",
    "restore", "rule_versions", "save_claims", "save_rules", "save_sources", "save_use_cases", "seed_paper_register",
    "template", "use_case_row",
]
