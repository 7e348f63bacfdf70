-- 037: what the approval of a held label change also records (issue 33, item 3). A change held because it would
-- lower an answer's decision may stand for more than the revision: an adjudication's label provenance (which
-- annotators agreed, which adjudication decided, under which rubric), a feedback item's resolution. Until the change
-- is approved none of that is true, so none of it is written; the approval writes it with the revision it stores
-- (register.ingest.approvals). JSON, NULL when the change stands for its revision alone.
-- Never edit once landed: add a new numbered file instead.

ALTER TABLE pending_label_changes ADD COLUMN follow_up VARCHAR;
