-- +goose Up
-- Every example moved the counters of its round's one row, so on PostgreSQL all submissions of a
-- round queued behind that row's lock (about 400 examples/s, a twentieth of a bare insert). The
-- round's counters are now spread over shards picked by example id; a round's stats are their sum,
-- and Recount checks the sums against the rows as before.
CREATE TABLE round_counts (
    round_id        BIGINT NOT NULL REFERENCES rounds (id) ON DELETE CASCADE,
    shard           INTEGER NOT NULL,
    collected       BIGINT NOT NULL DEFAULT 0,
    fooled          BIGINT NOT NULL DEFAULT 0,
    verified_fooled BIGINT NOT NULL DEFAULT 0,
    rejected        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (round_id, shard)
);
INSERT INTO round_counts (round_id, shard, collected, fooled, verified_fooled, rejected)
    SELECT id, 0, collected, fooled, verified_fooled, rejected FROM rounds;
ALTER TABLE rounds DROP COLUMN collected;
ALTER TABLE rounds DROP COLUMN fooled;
ALTER TABLE rounds DROP COLUMN verified_fooled;
ALTER TABLE rounds DROP COLUMN rejected;

-- +goose Down
ALTER TABLE rounds ADD COLUMN collected BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN fooled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN verified_fooled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN rejected BIGINT NOT NULL DEFAULT 0;
UPDATE rounds SET
    collected = (SELECT COALESCE(sum(collected), 0) FROM round_counts c WHERE c.round_id = rounds.id),
    fooled = (SELECT COALESCE(sum(fooled), 0) FROM round_counts c WHERE c.round_id = rounds.id),
    verified_fooled = (SELECT COALESCE(sum(verified_fooled), 0) FROM round_counts c WHERE c.round_id = rounds.id),
    rejected = (SELECT COALESCE(sum(rejected), 0) FROM round_counts c WHERE c.round_id = rounds.id);
DROP TABLE round_counts;
