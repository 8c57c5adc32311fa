package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// PruneOptions chooses the runs to delete. With both set, a run goes only
// when it is older than OlderThan and not among the newest Keep.
type PruneOptions struct {
	// OlderThan, when positive, selects the runs that started longer ago.
	OlderThan time.Duration
	// Keep, when positive, selects every run but the newest Keep.
	Keep int
	// DryRun lists the runs without deleting them.
	DryRun bool
	// Now is the time OlderThan counts from (time.Now when zero).
	Now time.Time
}

// PruneResult is what Prune deleted, or would delete.
type PruneResult struct {
	Runs   []*Run `json:"runs"`
	Rows   int    `json:"rows"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Prune deletes runs, their detail and series rows, and the environments
// no run uses any more, in one transaction. A run still running is never
// deleted.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (*PruneResult, error) {
	if o.OlderThan <= 0 && o.Keep <= 0 {
		return nil, fmt.Errorf("%w: prune needs an age (older than) or a count (keep)", ErrOption)
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	runs, err := s.Runs(ctx, 0)
	if err != nil {
		return nil, err
	}
	res := &PruneResult{DryRun: o.DryRun}
	for i, r := range runs { // newest first
		old := o.OlderThan <= 0 || r.Started.Before(o.Now.Add(-o.OlderThan))
		beyond := o.Keep <= 0 || i >= o.Keep
		if old && beyond && r.Status != StatusRunning {
			res.Runs = append(res.Runs, r)
			res.Rows += r.Rows
		}
	}
	if o.DryRun || len(res.Runs) == 0 {
		return res, nil
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		const chunk = 500
		for i := 0; i < len(res.Runs); i += chunk {
			part := res.Runs[i:min(i+chunk, len(res.Runs))]
			ids := make([]any, len(part))
			for j, r := range part {
				ids[j] = r.id
			}
			in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
			for _, table := range []string{"series", "detail"} {
				if _, err := s.exec(ctx, tx, "DELETE FROM "+table+" WHERE run IN "+in, ids...); err != nil {
					return err
				}
			}
			if _, err := s.exec(ctx, tx, "DELETE FROM runs WHERE id IN "+in, ids...); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM environments WHERE id NOT IN (SELECT env FROM detail WHERE env IS NOT NULL)")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("history: prune: %w", err)
	}
	return res, nil
}
