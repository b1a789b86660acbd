-- +goose Up
-- Evaluation as a service: datasets (versioned, with their perturbed copies), one evaluation per
-- model × dataset × variant, leaderboard forks and snapshots, and the owner of each job (a remote
-- worker run by a model builder leases only the jobs of that builder's models).
CREATE TABLE datasets (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id      BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    access       TEXT NOT NULL,
    version      INTEGER NOT NULL DEFAULT 1,
    round_number INTEGER NOT NULL DEFAULT 0,
    sha256       TEXT NOT NULL,
    size         INTEGER NOT NULL DEFAULT 0,
    variants     TEXT NOT NULL DEFAULT '{}',
    created_by   BIGINT REFERENCES users (id),
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX datasets_task_name ON datasets (task_id, lower(name));

-- One row per example of the current version; variant '' is the dataset itself, 'robustness' and
-- 'fairness' its perturbed copies (only the changed examples, each naming its original).
CREATE TABLE dataset_examples (
    dataset_id   BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    variant      TEXT NOT NULL,
    idx          INTEGER NOT NULL,
    uid          TEXT NOT NULL,
    original_uid TEXT NOT NULL DEFAULT '',
    perturbation TEXT NOT NULL DEFAULT '',
    input        TEXT NOT NULL,
    gold         TEXT NOT NULL,
    tags         TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (dataset_id, variant, idx)
);

CREATE TABLE evaluations (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    model_id        BIGINT NOT NULL REFERENCES models (id) ON DELETE CASCADE,
    dataset_id      BIGINT NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    variant         TEXT NOT NULL,
    dataset_version INTEGER NOT NULL,
    status          TEXT NOT NULL,
    fault           TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    result          TEXT NOT NULL DEFAULT '{}',
    log             TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    UNIQUE (model_id, dataset_id, variant)
);
CREATE INDEX evaluations_dataset ON evaluations (dataset_id);

CREATE TABLE leaderboard_forks (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id         BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    slug            TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    user_id         BIGINT NOT NULL REFERENCES users (id),
    metric_weights  TEXT NOT NULL DEFAULT '{}',
    dataset_weights TEXT NOT NULL DEFAULT '{}',
    created_at      BIGINT NOT NULL
);

CREATE TABLE leaderboard_snapshots (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id    BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    slug       TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    user_id    BIGINT NOT NULL REFERENCES users (id),
    body       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

ALTER TABLE jobs ADD COLUMN user_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN task_id BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE jobs DROP COLUMN task_id;
ALTER TABLE jobs DROP COLUMN user_id;
DROP TABLE leaderboard_snapshots;
DROP TABLE leaderboard_forks;
DROP TABLE evaluations;
DROP TABLE dataset_examples;
DROP TABLE datasets;
