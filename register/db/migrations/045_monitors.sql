-- 045: monitors (issue 35, item 8): named thresholds on the headline figures, checked after every score run (an
-- import's, a rescore's, a revision's), and the alerts they raise delivered as JSON to webhooks. register.monitors.
-- Never edit once landed: add a new numbered file instead.

-- The monitors and the webhooks, versioned: every change (add, edit, remove) appends a version under the same name;
-- the latest version of a name is in force unless it says removed. Only admins write them (monitors.edit).
CREATE TABLE monitor_versions (
    name        VARCHAR NOT NULL,
    version     INTEGER NOT NULL,
    figure      VARCHAR NOT NULL,          -- register.monitors.figures.FIGURES
    use_case    VARCHAR,                   -- NULL: every current answer
    threshold   DOUBLE NOT NULL,           -- the monitor fires while the figure is above it
    webhooks    VARCHAR[] NOT NULL,        -- webhook names its alerts go to; empty: every webhook in force
    removed     BOOLEAN NOT NULL,
    reason      VARCHAR,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  VARCHAR NOT NULL,
    PRIMARY KEY (name, version)
);

CREATE TABLE monitor_webhook_versions (
    name        VARCHAR NOT NULL,
    version     INTEGER NOT NULL,
    url         VARCHAR NOT NULL,          -- http:// or https://; redirects are never followed
    secret_env  VARCHAR,                   -- NAME of the environment variable holding the HMAC secret (never the
                                           -- secret itself); NULL: deliveries are not signed
    removed     BOOLEAN NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  VARCHAR NOT NULL,
    PRIMARY KEY (name, version)
);

-- One row per check: the score runs it followed (those after the previous check's through_run_id: score_runs is
-- the record of what changed, written in the score run's own transaction, so a check never slows or fails it and
-- a run committed while nothing checked is checked later), and what each monitor read.
CREATE SEQUENCE IF NOT EXISTS seq_monitor_check START 1;
CREATE TABLE monitor_checks (
    check_id        BIGINT PRIMARY KEY,
    checked_at      TIMESTAMPTZ NOT NULL,
    checked_by      VARCHAR NOT NULL,
    through_run_id  BIGINT,                -- the newest score run the check followed; NULL: none yet
    run_ids         BIGINT[] NOT NULL,     -- the score runs since the previous check (the newest 1,000)
    batch_ids       BIGINT[] NOT NULL,     -- the import batches those runs scored (the newest 1,000)
    readings        JSON NOT NULL          -- per monitor: name, version, figure, use_case, value, threshold, state
);

-- Each monitor's state after the latest check that read it: an alert is raised only when it changes (cleared ->
-- fired, fired -> cleared), so a monitor that stays above its threshold raises one alert, however many checks.
CREATE TABLE monitor_states (
    name        VARCHAR PRIMARY KEY,
    version     INTEGER NOT NULL,
    state       VARCHAR NOT NULL CHECK (state IN ('fired', 'cleared')),
    value       DOUBLE,
    since       TIMESTAMPTZ NOT NULL,      -- when it entered this state
    check_id    BIGINT NOT NULL,           -- the latest check that read it
    alert_id    BIGINT                     -- the alert raised when it entered this state (NULL: none)
);

-- The outbox: an alert, written in the check's transaction, and one delivery per webhook it goes to. Deliveries are
-- made outside any write (register.monitors.outbox), each attempt recorded, until delivered or given up.
CREATE SEQUENCE IF NOT EXISTS seq_monitor_alert START 1;
CREATE TABLE monitor_alerts (
    alert_id    BIGINT PRIMARY KEY,
    name        VARCHAR NOT NULL,
    version     INTEGER NOT NULL,
    state       VARCHAR NOT NULL CHECK (state IN ('fired', 'cleared')),
    check_id    BIGINT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    payload     JSON NOT NULL              -- what every webhook receives, but the delivery's own fields
);

CREATE SEQUENCE IF NOT EXISTS seq_monitor_delivery START 1;
CREATE TABLE monitor_deliveries (
    delivery_id      BIGINT PRIMARY KEY,
    alert_id         BIGINT NOT NULL,
    webhook          VARCHAR NOT NULL,     -- its version in force at each attempt is used (a fixed URL applies)
    status           VARCHAR NOT NULL CHECK (status IN ('pending', 'delivered', 'given_up')),
    attempts         INTEGER NOT NULL,
    next_attempt_at  TIMESTAMPTZ,          -- NULL once finished
    finished_at      TIMESTAMPTZ,
    last_error       VARCHAR
);

CREATE TABLE monitor_attempts (
    delivery_id      BIGINT NOT NULL,
    attempt          INTEGER NOT NULL,
    webhook_version  INTEGER,
    started_at       TIMESTAMPTZ NOT NULL,
    seconds          DOUBLE NOT NULL,
    status_code      INTEGER,              -- the HTTP status, NULL when none came (timeout, refused connection)
    outcome          VARCHAR NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
    error            VARCHAR,
    PRIMARY KEY (delivery_id, attempt)
);
