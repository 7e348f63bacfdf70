-- 056: which profile versions a score run scored with, besides its own (issue 37, item 3). A run under a lens
-- version (055) scores the use cases a lens binds under their bound profile versions; score_runs.profile_version
-- names only the run's default. Reads that find a version's scores through its runs (the overview's profile
-- filter: register/console/queries/filters.py, version_runs) read this list too. NULL: the run scored under its
-- own version only. Filled for the runs written since 055 from their score rows. Never edit once landed: add a
-- new numbered file instead.

ALTER TABLE score_runs ADD COLUMN bound_profile_versions INTEGER[];

UPDATE score_runs SET bound_profile_versions = b.versions
FROM (SELECT s.run_id, list(DISTINCT s.profile_version ORDER BY s.profile_version) AS versions
      FROM scores s JOIN score_runs r ON r.run_id = s.run_id
      WHERE s.lens_version IS NOT NULL AND s.profile_version <> r.profile_version
      GROUP BY s.run_id) b
WHERE score_runs.run_id = b.run_id;
