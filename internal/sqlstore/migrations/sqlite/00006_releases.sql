-- +goose Up
-- Releases: a closed round's verified examples frozen as files (splits, manifest, datasheet, canary),
-- its test split registered as a scoring dataset. install_settings holds the install's secret, from
-- which the anonymisation, split and canary keys are derived (shared by every replica).
CREATE TABLE releases (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id      BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    round_number INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    dataset_id   BIGINT REFERENCES datasets (id) ON DELETE SET NULL,
    dir          TEXT NOT NULL,
    manifest     TEXT NOT NULL,
    datasheet    TEXT NOT NULL DEFAULT '',
    canary       TEXT NOT NULL,
    public       BOOLEAN NOT NULL DEFAULT FALSE,
    created_by   BIGINT REFERENCES users (id),
    created_at   BIGINT NOT NULL,
    UNIQUE (task_id, round_number, version)
);

CREATE TABLE install_settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE install_settings;
DROP TABLE releases;
