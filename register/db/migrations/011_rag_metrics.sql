-- 011: RAG hallucination metric inputs per stored response revision (issue 12, section 6).
-- Never edit once landed: add a new numbered file instead.
--
-- Written at import time, in the transaction that stores the response (register/ingest/rag_inputs.py):
-- for a response carrying RAGChecker's entailment checks, its eleven per-query metric values computed by
-- hri_core.ragmetrics.query_metrics (fractions in [0, 1]); for a row of a RAGAS result table, its metric
-- columns as given. The RAG metrics page aggregates them in SQL: RAGChecker's overall figures are the mean
-- over queries of these per-query values, times 100, rounded to one decimal.

CREATE TABLE IF NOT EXISTS rag_responses (
    response_key    BIGINT NOT NULL,          -- responses.response_key of the revision the values belong to
    response_id     VARCHAR NOT NULL,
    revision        INTEGER NOT NULL,
    framework       VARCHAR NOT NULL CHECK (framework IN ('ragchecker', 'ragas')),
    response_claims INTEGER,                  -- R, G and K of the query (RAGChecker); NULL for RAGAS
    gt_claims       INTEGER,
    chunks          INTEGER,
    missing_checks  VARCHAR[],                -- RAGChecker checks the input lacked: metrics needing them are 0
    categories      VARCHAR[] NOT NULL,       -- what the question is about: its claims' categories (+ RAGAS column)
    critical        BOOLEAN NOT NULL,         -- any of them a critical-information category (seed 003)
    PRIMARY KEY (response_key, framework)
);

CREATE TABLE IF NOT EXISTS rag_metric_values (
    response_key BIGINT NOT NULL,
    framework    VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,            -- RAGChecker's metric name, or the RAGAS column name
    value        DOUBLE,                      -- a fraction in [0, 1]; NULL: RAGAS could not compute it
    PRIMARY KEY (response_key, framework, metric)
);
