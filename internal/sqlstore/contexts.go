package sqlstore

import (
	"context"
	"fmt"

	"github.com/dynabench-go/dynabench"
)

const contextCols = `id, task_id, round_id, data, tag, metadata, total_used, total_fooled, created_at`

func scanContext(row interface{ Scan(...any) error }) (*dynabench.Context, error) {
	var c dynabench.Context
	var data, meta []byte
	var created int64
	if err := row.Scan(&c.ID, &c.TaskID, &c.RoundID, &data, &c.Tag, &meta, &c.TotalUsed, &c.TotalFooled, &created); err != nil {
		return nil, err
	}
	var err error
	if c.Data, err = decodeMap(data); err != nil {
		return nil, err
	}
	if c.Metadata, err = decodeMap(meta); err != nil {
		return nil, err
	}
	c.CreatedAt = fromMillis(created)
	return &c, nil
}

// CreateContexts inserts every context in one transaction: all or none.
func (s *Store) CreateContexts(ctx context.Context, cs []*dynabench.Context) error {
	return s.InTx(ctx, func(dtx dynabench.Store) error {
		tx := dtx.(*Store)
		now := tx.now()
		for _, c := range cs {
			data, err := encodeJSON(c.Data)
			if err != nil {
				return err
			}
			meta, err := encodeJSON(c.Metadata)
			if err != nil {
				return err
			}
			err = tx.w().QueryRowContext(ctx,
				`INSERT INTO contexts (task_id, round_id, data, tag, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
				c.TaskID, c.RoundID, data, c.Tag, meta, now).Scan(&c.ID)
			if err != nil {
				return mapErr("create context", err)
			}
			c.CreatedAt = fromMillis(now)
		}
		return nil
	})
}

// FindContextByID returns the context or ENOTFOUND.
func (s *Store) FindContextByID(ctx context.Context, id int64) (*dynabench.Context, error) {
	c, err := scanContext(s.r().QueryRowContext(ctx, `SELECT `+contextCols+` FROM contexts WHERE id = $1`, id))
	return c, mapErr("context", err)
}

// pickQueries: each selects among the round's contexts (optionally of one tag, $2 = ” for any);
// ties are broken at random so concurrent annotators spread over the pool.
var pickQueries = map[string]string{
	dynabench.StrategyLeastUsed: `SELECT ` + contextCols + ` FROM contexts WHERE round_id = $1 AND ($2 = '' OR tag = $2)
		AND total_used = (SELECT min(total_used) FROM contexts WHERE round_id = $1 AND ($2 = '' OR tag = $2))
		ORDER BY random() LIMIT 1`,
	dynabench.StrategyUniform: `SELECT ` + contextCols + ` FROM contexts WHERE round_id = $1 AND ($2 = '' OR tag = $2)
		ORDER BY random() LIMIT 1`,
	dynabench.StrategyLeastFooled: `SELECT ` + contextCols + ` FROM contexts WHERE round_id = $1 AND ($2 = '' OR tag = $2)
		AND total_fooled = (SELECT min(total_fooled) FROM contexts WHERE round_id = $1 AND ($2 = '' OR tag = $2))
		ORDER BY random() LIMIT 1`,
	// Contexts whose examples all failed validation: at least one rejected, none verified or in flight.
	dynabench.StrategyValidationFailed: `SELECT ` + contextCols + ` FROM contexts c WHERE round_id = $1 AND ($2 = '' OR tag = $2)
		AND EXISTS (SELECT 1 FROM examples e WHERE e.context_id = c.id AND e.status = 'rejected')
		AND NOT EXISTS (SELECT 1 FROM examples e WHERE e.context_id = c.id AND e.status IN ('verified', 'pending_validation'))
		ORDER BY random() LIMIT 1`,
}

// PickContext chooses a context of the round by strategy (least_used by default).
func (s *Store) PickContext(ctx context.Context, q dynabench.ContextQuery) (*dynabench.Context, error) {
	if q.Strategy == "" {
		q.Strategy = dynabench.StrategyLeastUsed
	}
	query, ok := pickQueries[q.Strategy]
	if !ok {
		return nil, dynabench.FieldErrorf(dynabench.EINVALID, "strategy", "unknown strategy %q", q.Strategy)
	}
	c, err := scanContext(s.r().QueryRowContext(ctx, query, q.RoundID, q.Tag))
	if err != nil {
		return nil, mapErr(fmt.Sprintf("context (%s)", q.Strategy), err)
	}
	return c, nil
}
