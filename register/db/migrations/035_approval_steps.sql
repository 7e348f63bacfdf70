-- 035: four eyes on every versioned set of rules (issue 33, item 7). One row per step of a version's way to taking
-- effect, append-only: 'proposed' (who saved it and in which role: a version the system role made counts as
-- nobody's), 'endorsed' (an admin made a system-made draft theirs, so that a different admin may publish it) and
-- 'approved' (a second person made it take effect, with the reason). Kinds: scoring_profile, mitigation_policy,
-- evidence_rules, use_cases, authority_rules, judge_policy. A version of the last four with a 'proposed' row and
-- no 'approved' row is pending and not in force. register.access.version_approvals reads and writes it.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE approval_steps (
    kind        VARCHAR NOT NULL,
    version     INTEGER NOT NULL,
    step        VARCHAR NOT NULL CHECK (step IN ('proposed', 'endorsed', 'approved')),
    actor_name  VARCHAR NOT NULL,
    actor_role  VARCHAR NOT NULL,
    acted_at    TIMESTAMPTZ NOT NULL,
    reason      VARCHAR,
    PRIMARY KEY (kind, version, step)
);

-- Drafts the system made before this table existed (set-up, the demo's review-floors draft): their creating
-- audit event names the role.
INSERT INTO approval_steps (kind, version, step, actor_name, actor_role, acted_at, reason)
SELECT DISTINCT ON (entity_type, entity_id) entity_type, CAST(entity_id AS INTEGER), 'proposed', actor_name,
       actor_role, occurred_at, NULL
FROM audit_events
WHERE action IN ('profile.create_draft', 'mitigation_policy.create_draft') AND actor_role = 'system'
  AND entity_type IN ('scoring_profile', 'mitigation_policy') AND entity_id IS NOT NULL
ORDER BY entity_type, entity_id, seq;
