-- 026: the older profile versions whose view the register keeps as tables of their own (issue 14: scale).
-- When a run over everything replaces the current scores and every one of them was under one version, the read
-- model (current_scores, score_summary) is renamed to version_scores_<v> and version_summary_<v> instead of being
-- emptied: the console reads that version's view as it reads the current one, instead of joining the version's
-- score rows (about 3.3 s for the overview at 10M answers). register.scoring.version_views keeps them exact and
-- drops one when a run under its version changes it. A database from before starts with none kept.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS kept_version_views (
    profile_version  INTEGER PRIMARY KEY,
    kept_at          TIMESTAMPTZ NOT NULL,
    run_id           INTEGER NOT NULL       -- the run over everything, under another version, it was kept before
);
