-- +goose Up
-- The whole loop: accounts, tasks, rounds, contexts, models, examples, validations, counters, jobs.
-- Times are unix milliseconds (UTC) so both engines compare and sort them the same way.
-- JSON is JSONB here and TEXT on SQLite; the Go side always reads and writes JSON text.

CREATE TABLE users (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      TEXT NOT NULL,
    email         TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    admin         BOOLEAN NOT NULL DEFAULT FALSE,
    created_at    BIGINT NOT NULL
);
-- Usernames and emails are unique regardless of case, so "Alice" cannot impersonate "alice".
CREATE UNIQUE INDEX users_username ON users (lower(username));
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE tokens (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    hash         BYTEA NOT NULL UNIQUE, -- SHA-256 of the token; the token itself is never stored
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    last_used_at BIGINT
);
CREATE INDEX tokens_user ON tokens (user_id);

CREATE TABLE tasks (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code          TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    description   TEXT NOT NULL,
    config        TEXT NOT NULL, -- as the owner wrote it (YAML or JSON), unknown keys and all
    config_rev    BIGINT NOT NULL DEFAULT 1,
    current_round INTEGER NOT NULL DEFAULT 0,
    settings      JSONB NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE TABLE task_owners (
    task_id BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, user_id)
);

CREATE TABLE models (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id    BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    url        TEXT NOT NULL DEFAULT '',
    options    JSONB NOT NULL DEFAULT '{}',
    card       TEXT NOT NULL DEFAULT '',
    published  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL
);
CREATE INDEX models_task ON models (task_id);

CREATE TABLE rounds (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id         BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number          INTEGER NOT NULL,
    status          TEXT NOT NULL,
    secret          TEXT NOT NULL,
    collected       BIGINT NOT NULL DEFAULT 0,
    fooled          BIGINT NOT NULL DEFAULT 0,
    verified_fooled BIGINT NOT NULL DEFAULT 0,
    rejected        BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    closed_at       BIGINT,
    UNIQUE (task_id, number)
);

CREATE TABLE round_models (
    round_id BIGINT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    model_id BIGINT NOT NULL REFERENCES models (id),
    position INTEGER NOT NULL,
    PRIMARY KEY (round_id, model_id)
);

CREATE TABLE contexts (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id      BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    round_id     BIGINT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    data         JSONB NOT NULL,
    tag          TEXT NOT NULL DEFAULT '',
    metadata     JSONB NOT NULL DEFAULT '{}',
    total_used   BIGINT NOT NULL DEFAULT 0,
    total_fooled BIGINT NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL
);
-- least_used picks the minimum total_used in a round, optionally within a tag.
CREATE INDEX contexts_round_used ON contexts (round_id, total_used, id);
CREATE INDEX contexts_round_tag ON contexts (round_id, tag, total_used);

CREATE TABLE examples (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id      BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    round_id     BIGINT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    context_id   BIGINT NOT NULL REFERENCES contexts (id),
    user_id      BIGINT NOT NULL REFERENCES users (id),
    input        JSONB NOT NULL,
    model_id     BIGINT REFERENCES models (id),
    model_name   TEXT NOT NULL DEFAULT '',
    model_output JSONB NOT NULL DEFAULT '{}',
    model_wrong  BOOLEAN,          -- NULL: ask_user answer pending, or the model failed
    model_error  TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL,
    flagged      BOOLEAN NOT NULL DEFAULT FALSE,
    flag_reason  TEXT NOT NULL DEFAULT '',
    metadata     JSONB NOT NULL DEFAULT '{}',
    tag          TEXT NOT NULL DEFAULT '',
    n_correct    INTEGER NOT NULL DEFAULT 0,
    n_incorrect  INTEGER NOT NULL DEFAULT 0,
    n_flagged    INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL
);
-- The validation queue scans pending examples of a round.
CREATE INDEX examples_queue ON examples (round_id, status, model_wrong, id);
CREATE INDEX examples_user ON examples (user_id, id);
CREATE INDEX examples_context ON examples (context_id);

CREATE TABLE validations (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    example_id BIGINT NOT NULL REFERENCES examples (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    label      TEXT NOT NULL,
    mode       TEXT NOT NULL,
    metadata   JSONB NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    -- One vote per user and mode: the second attempt is a conflict, even when two requests race.
    UNIQUE (example_id, user_id, mode)
);
CREATE INDEX validations_user ON validations (user_id, example_id);

-- Per user and round: the annotator leaderboard and the user's stats.
CREATE TABLE round_users (
    round_id        BIGINT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    user_id         BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    task_id         BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    submitted       BIGINT NOT NULL DEFAULT 0,
    fooled          BIGINT NOT NULL DEFAULT 0,
    verified_fooled BIGINT NOT NULL DEFAULT 0,
    rejected_fooled BIGINT NOT NULL DEFAULT 0,
    retracted       BIGINT NOT NULL DEFAULT 0,
    validations     BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (round_id, user_id)
);
CREATE INDEX round_users_task ON round_users (task_id, user_id);

-- Examples written per user, task and UTC day, for the task's daily cap (counts retracted ones too).
CREATE TABLE daily_counts (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    task_id BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    day     TEXT NOT NULL,
    n       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, task_id, day)
);

-- Durable jobs (evaluation, training, releases): leased by workers, retried with backoff, parked
-- after too many failures. The idempotency key makes enqueueing the same work twice a no-op.
CREATE TABLE jobs (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            TEXT NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    payload         JSONB NOT NULL DEFAULT '{}',
    state           TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    max_attempts    INTEGER NOT NULL DEFAULT 5,
    run_after       BIGINT NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     BIGINT NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    result          JSONB NOT NULL DEFAULT '{}',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX jobs_claim ON jobs (state, run_after, id);

-- +goose Down
DROP TABLE jobs;
DROP TABLE daily_counts;
DROP TABLE round_users;
DROP TABLE validations;
DROP TABLE examples;
DROP TABLE contexts;
DROP TABLE round_models;
DROP TABLE rounds;
DROP TABLE models;
DROP TABLE task_owners;
DROP TABLE tasks;
DROP TABLE tokens;
DROP TABLE users;
