-- 015: claim verification. Judge calls cached by input hash and their token use per batch; judge
-- policies (versioned, off by default); verification runs and the machine verdicts they propose.
-- Never edit once landed: add a new numbered file instead.

CREATE SEQUENCE IF NOT EXISTS seq_judge_usage START 1;
CREATE SEQUENCE IF NOT EXISTS seq_verification_run START 1;
CREATE SEQUENCE IF NOT EXISTS seq_judge_proposal START 1;

-- One parsed answer of an LLM judge per input: the key is the sha256 of (endpoint model, task, prompt
-- version, the request's messages). Only answers that parsed are cached: a failure is retried next time.
CREATE TABLE IF NOT EXISTS judge_cache (
    cache_key      VARCHAR PRIMARY KEY,
    task           VARCHAR NOT NULL,           -- extract | entail
    model          VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    answer         VARCHAR NOT NULL,           -- the model's message content, as returned
    created_at     TIMESTAMPTZ NOT NULL
);

-- Token use and cost of each batch of judge calls (one row per batch, cached answers counted apart).
CREATE TABLE IF NOT EXISTS judge_usage (
    usage_id          BIGINT PRIMARY KEY,
    recorded_at       TIMESTAMPTZ NOT NULL,
    run_id            BIGINT,                  -- the verification run, when there is one
    backend           VARCHAR NOT NULL,
    profile           VARCHAR NOT NULL,        -- judge profile name@version
    model             VARCHAR,
    task              VARCHAR NOT NULL,
    requests          INTEGER NOT NULL,        -- HTTP requests sent, retries included
    cached            INTEGER NOT NULL,        -- answers served from judge_cache
    failures          INTEGER NOT NULL,        -- calls that failed closed (timeout, refusal, unparsable)
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    cost              DOUBLE NOT NULL          -- in the currency of the HRI_LLM_PRICE_* settings
);

-- A judge policy says which judges, at which confidence, for which claim categories and stakes, may set a
-- label without a person. Versioned; the active one applies; none active (the default) means every
-- machine verdict waits for a person.
CREATE TABLE IF NOT EXISTS judge_policies (
    version     INTEGER PRIMARY KEY,
    policy      JSON NOT NULL,
    active      BOOLEAN NOT NULL,
    created_by  VARCHAR NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS verification_runs (
    run_id          BIGINT PRIMARY KEY,
    started_at      TIMESTAMPTZ NOT NULL,
    actor_name      VARCHAR NOT NULL,
    source_name     VARCHAR NOT NULL,          -- the input file, or "console selection"
    judge_profile   VARCHAR NOT NULL,
    backend         VARCHAR NOT NULL,
    policy_version  INTEGER,                   -- NULL: no policy active, nothing applied without a person
    link_threshold  DOUBLE NOT NULL,
    responses       INTEGER NOT NULL DEFAULT 0,
    claims          INTEGER NOT NULL DEFAULT 0,
    batch_id        INTEGER                    -- the import batch that stored the responses' revisions
);

-- One machine verdict on one claim: a proposal until a person confirms or rejects it, or the active
-- policy applies it ('applied'). Only confirmed or applied verdicts reach a claim's labels.
CREATE TABLE IF NOT EXISTS judge_proposals (
    proposal_id     BIGINT PRIMARY KEY,
    run_id          BIGINT NOT NULL,
    response_id     VARCHAR NOT NULL,
    claim_idx       INTEGER NOT NULL,
    claim_id        VARCHAR NOT NULL,
    claim_text      VARCHAR NOT NULL,
    category        VARCHAR,
    stakes          VARCHAR,
    criticality     INTEGER NOT NULL,
    span            VARCHAR,                   -- the linked evidence span
    evidence_index  INTEGER,                   -- its chunk, 0-based
    link_score      DOUBLE NOT NULL,           -- claim-word recall of the span (0..1)
    unlinked        BOOLEAN NOT NULL,          -- no span reached the link threshold
    label           VARCHAR,                   -- NULL: the judge abstained (needs review)
    confidence      DOUBLE NOT NULL,
    abstained       BOOLEAN NOT NULL,
    reason          VARCHAR NOT NULL,
    target_label    VARCHAR,                   -- the verdict against the target answer, when given and judged
    backend         VARCHAR NOT NULL,
    judge_profile   VARCHAR NOT NULL,
    status          VARCHAR NOT NULL,          -- proposed | confirmed | rejected | applied
    final_label     VARCHAR,                   -- the label that reached the claim (confirmed, corrected or applied)
    decided_by      VARCHAR,
    decided_at      TIMESTAMPTZ,
    policy_version  INTEGER,                   -- the policy that applied it (status 'applied')
    created_at      TIMESTAMPTZ NOT NULL
);

-- Critical-information test sets (seed 003): questions with a ground-truth target and supporting quotes,
-- versioned (a version is never changed: an edit is the next version). Items are a JSON list:
-- {item_id, question, target, quotes, category, source_ids, draft}; draft = generated, not yet edited.
CREATE TABLE IF NOT EXISTS test_sets (
    name        VARCHAR NOT NULL,
    version     INTEGER NOT NULL,
    created_by  VARCHAR NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    note        VARCHAR,
    items       JSON NOT NULL,
    PRIMARY KEY (name, version)
);

-- One run of a test set against an assistant (or its imported answers), verified as a verification run.
CREATE TABLE IF NOT EXISTS test_set_runs (
    test_run_id       BIGINT PRIMARY KEY,
    name              VARCHAR NOT NULL,
    version           INTEGER NOT NULL,
    assistant_model   VARCHAR NOT NULL,
    started_at        TIMESTAMPTZ NOT NULL,
    actor_name        VARCHAR NOT NULL,
    verification_run  BIGINT,
    answered          INTEGER NOT NULL,
    failed            INTEGER NOT NULL      -- questions the assistant did not answer (timeout, refusal...)
);
CREATE SEQUENCE IF NOT EXISTS seq_test_set_run START 1;
