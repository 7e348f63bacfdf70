-- 016: every score run records the fingerprint of the profile parameters it scored with.
-- A run's profile_version names a stored profile, but rescore accepts any profile object under that
-- number; the fingerprint (hri_core.ScoringProfile.fingerprint) says which parameters were really used,
-- so the impact preview can recompute a weights-only draft from the stored rows only when they are the
-- stored version's. NULL for runs scored before this column existed.
-- Never edit once landed: add a new numbered file instead.

ALTER TABLE score_runs ADD COLUMN profile_fingerprint VARCHAR;
