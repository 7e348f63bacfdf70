-- 053: the evidence sentences a judge cited for a proposal (issue 39): a judge that reads the evidence as a
-- whole cites every sentence that carried a part of the claim, possibly from several chunks. NULL for
-- proposals stored before, and for backends that cite no sentence. Shown, escaped, beside the proposal.
-- Never edit once landed: add a new numbered file instead.

ALTER TABLE judge_proposals ADD COLUMN IF NOT EXISTS cited_sentences VARCHAR[];
