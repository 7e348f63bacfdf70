-- 051: claims-register semantics (issue 37, item 4; paper Table IX items 1 and 5). Never edit once landed.
--
-- source_basis: whether the claim's sources are "primary" or "acceptable secondary" (register/governance/
-- vocabulary.py, SOURCE_BASES); NULL when not recorded.
-- source_locators: where in each linked source the claim is found (a page, a section or a quote), one per entry
-- of source_ids at the same position ('' when none is recorded for that link).
-- The new claim type "author interpretation" and the statuses "softened" and "moved to future work" are vocabulary
-- values of the existing columns: nothing to migrate.

ALTER TABLE register_claims ADD COLUMN IF NOT EXISTS source_basis VARCHAR;
ALTER TABLE register_claims ADD COLUMN IF NOT EXISTS source_locators VARCHAR[];
