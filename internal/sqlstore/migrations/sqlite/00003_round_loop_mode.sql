-- +goose Up
-- How a round with several models in the loop answers an annotator: one model picked at random per
-- example (Dynabench's behaviour, the default), or all of them as an ensemble (mean probability or
-- majority vote).
ALTER TABLE rounds ADD COLUMN loop_mode TEXT NOT NULL DEFAULT 'random';

-- +goose Down
ALTER TABLE rounds DROP COLUMN loop_mode;
