-- 013: labels people can trust (HRI paper section V): the labelling rubric as versioned data, labelling
-- batches assigned to two or more annotators, their blind annotations, the adjudication of
-- disagreements, and the provenance of every label the register revised. Never edit once landed: add a
-- new numbered file instead.
--
-- "During pilot annotation, each claim should be labeled independently by at least two annotators when
-- feasible. Disagreements may be resolved by majority vote, expert adjudication, or a documented
-- escalation rule." Labels that come out of this process reach the scored claims only as a new
-- revision of the response (register.ingest.revise); these tables keep how they came about.

CREATE SEQUENCE IF NOT EXISTS seq_label_batch START 1;
CREATE SEQUENCE IF NOT EXISTS seq_adjudication START 1;

-- the rubric (hri_core.rubric.Rubric as JSON): a new version per change, the newest is in force
CREATE TABLE IF NOT EXISTS rubric_versions (
    rubric_version      INTEGER PRIMARY KEY,
    name                VARCHAR NOT NULL,
    rubric              JSON NOT NULL,
    fingerprint         VARCHAR NOT NULL,      -- hri_core.rubric.Rubric.fingerprint()
    min_agreement_alpha DOUBLE,                -- checklist item 7's agreement threshold
    created_at          TIMESTAMPTZ NOT NULL,
    created_by          VARCHAR NOT NULL,
    reason              VARCHAR NOT NULL
);

-- a labelling batch: which responses (the revision shown to the annotators), who labels them
CREATE TABLE IF NOT EXISTS label_batches (
    batch_id        INTEGER PRIMARY KEY,
    title           VARCHAR NOT NULL,
    rubric_version  INTEGER NOT NULL,
    annotators      VARCHAR[] NOT NULL,        -- every one labels every claim of the batch
    selection       JSON NOT NULL,             -- the filters or the random sample that chose the responses
    created_at      TIMESTAMPTZ NOT NULL,
    created_by      VARCHAR NOT NULL,
    CHECK (len(annotators) >= 2)
);

CREATE TABLE IF NOT EXISTS label_batch_items (
    batch_id     INTEGER NOT NULL,
    response_id  VARCHAR NOT NULL,
    revision     INTEGER NOT NULL,             -- the revision the annotators label
    position     INTEGER NOT NULL,             -- the order the workbench shows
    PRIMARY KEY (batch_id, response_id)
);

-- one annotator's reading of one unit (a claim, or a claim the annotator split, merged or added).
-- state: 'open' (added, split or merged but not labelled yet), 'labelled', or 'replaced' (the annotator
-- replaced this claim by its parts or by a merged claim: it has no labels).
CREATE TABLE IF NOT EXISTS annotations (
    batch_id      INTEGER NOT NULL,
    response_id   VARCHAR NOT NULL,
    unit_id       VARCHAR NOT NULL,            -- the claim id, or the id of a split / merged / added claim
    annotator     VARCHAR NOT NULL,
    origin        VARCHAR NOT NULL CHECK (origin IN ('claim', 'split', 'merge', 'added')),
    derived_from  VARCHAR[],                   -- the claims a split / merged unit came from
    position      DOUBLE NOT NULL,             -- where the unit stands in the answer's claim order
    state         VARCHAR NOT NULL CHECK (state IN ('open', 'labelled', 'replaced')),
    text          VARCHAR,
    labels        VARCHAR[],
    dimensions    VARCHAR[],
    criticality   INTEGER,
    category      VARCHAR,
    source_id     VARCHAR,
    span          VARCHAR,
    note          VARCHAR,
    annotated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (batch_id, response_id, unit_id, annotator)
);

-- how a unit the annotators disagreed on was resolved, by whom, why (four eyes: not one of its annotators)
CREATE TABLE IF NOT EXISTS adjudications (
    adjudication_id  INTEGER PRIMARY KEY,
    batch_id         INTEGER NOT NULL,
    response_id      VARCHAR NOT NULL,
    unit_id          VARCHAR NOT NULL,
    rule             VARCHAR NOT NULL CHECK (rule IN ('majority', 'expert', 'escalation')),
    reason           VARCHAR NOT NULL CHECK (length(trim(reason)) > 0),
    adjudicator      VARCHAR NOT NULL,
    adjudicator_role VARCHAR NOT NULL,
    decided_at       TIMESTAMPTZ NOT NULL,
    keep_unit        BOOLEAN NOT NULL,         -- false: the unit is not a claim of the answer
    text             VARCHAR,
    labels           VARCHAR[],
    dimensions       VARCHAR[],
    criticality      INTEGER,
    category         VARCHAR,
    source_id        VARCHAR,
    span             VARCHAR,
    UNIQUE (batch_id, response_id, unit_id)
);

-- where each label of a revised claim came from: imported (kept from the file), annotated (every
-- annotator agreed), adjudicated (an adjudicator decided); under which rubric version
CREATE TABLE IF NOT EXISTS label_provenance (
    response_id     VARCHAR NOT NULL,
    revision        INTEGER NOT NULL,
    claim_id        VARCHAR NOT NULL,
    label           VARCHAR NOT NULL,
    provenance      VARCHAR NOT NULL CHECK (provenance IN ('imported', 'annotated', 'adjudicated')),
    batch_id        INTEGER,
    adjudication_id INTEGER,
    rubric_version  INTEGER,
    recorded_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (response_id, revision, claim_id, label)
);
