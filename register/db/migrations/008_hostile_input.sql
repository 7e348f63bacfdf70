-- 008: scores whose sums cannot overflow, scoring failures that fail closed, resumable imports.
-- Never edit once landed: add a new numbered file instead.
--
-- total_criticality and floors_fired were INTEGER, and the scorer cast its sums to INTEGER: two claims of
-- criticality 2147483647 made every scoring run fail. A sum of INTEGER criticalities over fewer than 2^31
-- claims fits a BIGINT, whatever is stored.
ALTER TABLE scores ALTER COLUMN total_criticality SET DATA TYPE BIGINT;
ALTER TABLE scores ALTER COLUMN floors_fired SET DATA TYPE BIGINT;

-- Why the scorer could not score this response (NULL: it was scored). Such a row carries the worst-case
-- numbers (every dimension 1, HRI 1, score 100, the top band) and the action 'review': it fails closed,
-- into the review queue, and never stops the scoring of the other responses.
ALTER TABLE scores ADD COLUMN scoring_failure VARCHAR;

-- The chunk size an import ran with: resuming an interrupted import (`import --resume`) skips the records
-- its committed chunks hold and must cut the rest of the file into the same chunks.
ALTER TABLE import_batches ADD COLUMN chunk_size INTEGER;
