package history

import (
	"context"
	"database/sql"
	"reflect"

	"github.com/kvbench/kvbench/pkg/results"
)

// seriesFields are results.SeriesRow's columns: the series CSV's, which
// the series table holds under the same names (its optional figures as
// NULL).
var seriesFields = taggedFields[results.SeriesRow]("csv")

// writeSeries inserts series rows of run.
func (s *Store) writeSeries(ctx context.Context, tx *sql.Tx, run int64, rows []results.SeriesRow) error {
	width := 1 + len(seriesFields)
	batch := make([][]any, 0, len(rows))
	for i := range rows {
		batch = append(batch, fieldArgs([]any{run}, reflect.ValueOf(rows[i]), seriesFields))
	}
	return s.insertRows(ctx, tx, "series", "run, "+names(seriesFields, ""), width, batch)
}

// seriesOf reads a run's series rows, in the order they were written.
func (s *Store) seriesOf(ctx context.Context, run int64) ([]results.SeriesRow, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind("SELECT "+names(seriesFields, "")+" FROM series WHERE run = ? ORDER BY id"), run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []results.SeriesRow
	for rows.Next() {
		var r results.SeriesRow
		if err := rows.Scan(fieldPtrs(reflect.ValueOf(&r).Elem(), seriesFields)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
