package history

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
)

// SeriesRow is one interval of an attempt: a row of the series CSV
// ("kvbench_series_<time>.csv", beside the detail CSV), one per attempt,
// command and interval, which joins the attempt's detail row on RunID,
// Target, Strategy, Mode, Round and Attempt. Its csv tags are the CSV's
// columns and the series table's.
type SeriesRow struct {
	RunID    string `csv:"run_id" json:"run_id"`
	Target   string `csv:"target" json:"target"`
	Strategy string `csv:"strategy" json:"strategy"`
	Mode     string `csv:"mode" json:"mode"`
	Round    int    `csv:"round" json:"round"`
	Attempt  int    `csv:"attempt" json:"attempt"`
	// Command is the command the row measures, or results.CommandTotal
	// for the whole load.
	Command string `csv:"command" json:"command"`
	// TS is the interval's start, in seconds from the measurement's.
	TS float64 `csv:"t_s" json:"t_s"`
	// Requests and Errors are the interval's replies and error replies;
	// QPS is Requests per second of the interval.
	Requests int64   `csv:"requests" json:"requests"`
	Errors   int64   `csv:"errors" json:"errors"`
	QPS      float64 `csv:"qps" json:"qps"`
	// P50Us … MaxUs are the interval's latency percentiles, in µs.
	P50Us  float64 `csv:"p50_us" json:"p50_us"`
	P99Us  float64 `csv:"p99_us" json:"p99_us"`
	P999Us float64 `csv:"p999_us" json:"p999_us"`
	MaxUs  float64 `csv:"max_us" json:"max_us"`
	// Workload and Node are the workload and the cluster node the row
	// belongs to, where they apply.
	Workload string `csv:"workload" json:"workload,omitempty"`
	Node     string `csv:"node" json:"node,omitempty"`
}

// seriesFields are SeriesRow's columns.
var seriesFields = taggedFields[SeriesRow]("csv")

// Series records series rows of the run being recorded, in one
// transaction.
func (r *Recorder) Series(ctx context.Context, rows []SeriesRow) error {
	if r.run == 0 {
		return fmt.Errorf("history: Series before BeginRun")
	}
	return r.s.addSeries(ctx, r.run, rows)
}

// addSeries inserts series rows of a run.
func (s *Store) addSeries(ctx context.Context, run int64, rows []SeriesRow) error {
	width := 1 + len(seriesFields)
	batch := make([][]any, 0, len(rows))
	for i := range rows {
		batch = append(batch, fieldArgs([]any{run}, reflect.ValueOf(rows[i]), seriesFields))
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return s.insertRows(ctx, tx, "series", "run, "+names(seriesFields, ""), width, batch)
	})
	if err != nil {
		return fmt.Errorf("history: record the series: %w", err)
	}
	return nil
}

// seriesOf reads a run's series rows, in the order they were written.
func (s *Store) seriesOf(ctx context.Context, run int64) ([]SeriesRow, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind("SELECT "+names(seriesFields, "")+" FROM series WHERE run = ? ORDER BY id"), run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SeriesRow
	for rows.Next() {
		var r SeriesRow
		if err := rows.Scan(fieldPtrs(reflect.ValueOf(&r).Elem(), seriesFields)...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
