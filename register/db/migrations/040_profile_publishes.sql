-- 040: a profile's publish, recorded until its rescore completes it (issue 34, class 6). Publishing is two steps in
-- two transactions: the draft made active, then every current response rescored under it. A crash between them
-- left the new version active over scores of the old one, and nothing said so. The activation now writes its row
-- here in its own transaction (rescore_run NULL: incomplete); the full rescore under that version fills rescore_run
-- in the rescore's transaction (register.scoring.publishes). An incomplete publish is named by `status` and the
-- Profiles page, and resumed by `rescore` or by publishing the same version again. scores_version: the version the
-- current scores were under when the publish began. superseded_by: a later publish made before this one completed.
-- Registers published before this migration have no rows: their publishes ran in one process call, as before.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE profile_publishes (
    profile_version INTEGER PRIMARY KEY,
    scores_version  INTEGER,
    published_at    TIMESTAMPTZ NOT NULL,
    published_by    VARCHAR NOT NULL,
    rescore_run     BIGINT,
    completed_at    TIMESTAMPTZ,
    superseded_by   INTEGER
);
