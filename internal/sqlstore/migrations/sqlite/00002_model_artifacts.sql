-- +goose Up
-- The trained artifact behind a built-in model (issue 4): the model's bytes live in the blob store
-- under blob_key; the row keeps their size and SHA-256, so a blob that was swapped or corrupted is
-- refused at load, and the training manifest (sources and their hashes, seed, hyperparameters,
-- held-out scores), so model pages and score provenance need not read the blob. One artifact per
-- model, never updated: retraining registers a new model.
CREATE TABLE model_artifacts (
    model_id   INTEGER PRIMARY KEY REFERENCES models (id) ON DELETE CASCADE,
    blob_key   TEXT NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    manifest   TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL
);

-- Training reads a task's verified examples round by round, in id order.
CREATE INDEX examples_task_status ON examples (task_id, status, id);

-- +goose Down
DROP INDEX examples_task_status;
DROP TABLE model_artifacts;
