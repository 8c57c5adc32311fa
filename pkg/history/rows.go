package history

import (
	"context"
	"database/sql"
	"reflect"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
)

// fieldCol is a struct field stored in a column.
type fieldCol struct {
	name  string
	index int
}

// taggedFields lists T's fields that carry the tag, by the tag's value
// (up to a comma), in field order; "-" and untagged fields are left out.
func taggedFields[T any](tag string) []fieldCol {
	var fs []fieldCol
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
		if name != "" && name != "-" {
			fs = append(fs, fieldCol{name, i})
		}
	}
	return fs
}

// detailFields are results.Row's columns: the detail CSV's, which the
// detail table holds under the same names.
var detailFields = taggedFields[results.Row]("csv")

// fieldArgs appends the fields of v (a struct value) to args, in fs order.
func fieldArgs(args []any, v reflect.Value, fs []fieldCol) []any {
	for _, f := range fs {
		args = append(args, v.Field(f.index).Interface())
	}
	return args
}

// fieldPtrs are pointers to the fields of v (addressable), in fs order,
// for Scan.
func fieldPtrs(v reflect.Value, fs []fieldCol) []any {
	out := make([]any, len(fs))
	for i, f := range fs {
		out[i] = v.Field(f.index).Addr().Interface()
	}
	return out
}

// names joins the columns' names with commas, each prefixed by prefix.
func names(fs []fieldCol, prefix string) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(prefix + f.name)
	}
	return b.String()
}

// placeholders is "(?, ?, …)" for n values.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// insertBatch is how many rows one INSERT statement carries: fewer
// round trips through the driver, the cost of an import.
const insertBatch = 16

// insertRows inserts values (each row's arguments, in the order of cols)
// into table, insertBatch rows per statement.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, table, cols string, width int, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), insertBatch)
		q := "INSERT INTO " + table + " (" + cols + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(placeholders(width)+", ", n), ", ")
		st, err := s.prepared(ctx, q)
		if err != nil {
			return err
		}
		args := make([]any, 0, n*width)
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// prepared returns the statement of query, prepared once per store:
// parsing an INSERT of 16 rows of 50 columns costs more than running it.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, s.d.rebind(query))
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st, nil
}

// attempts splits rows into attempts: consecutive rows of one target,
// strategy, mode, workload, round and attempt (a workload's attempt is a
// row per command and a total row).
func attempts(rows []results.Row) [][]results.Row {
	var out [][]results.Row
	key := func(r *results.Row) [6]string {
		return [6]string{r.Target, r.Strategy, r.Mode, r.Workload, strconv.Itoa(r.Round), strconv.Itoa(r.Attempt)}
	}
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && key(&rows[j]) == key(&rows[i]) {
			j++
		}
		out = append(out, rows[i:j])
		i = j
	}
	return out
}

// mainRow is the row of an attempt that speaks for it: a workload's total
// row, else the last.
func mainRow(att []results.Row) *results.Row {
	for i := range att {
		if att[i].Workload != "" && att[i].Command == results.CommandTotal {
			return &att[i]
		}
	}
	return &att[len(att)-1]
}

// writeAttempts inserts the attempts' rows into detail for run, each ok
// attempt's rows with its environment (the environments being created as
// needed; envs caches their ids).
func (s *Store) writeAttempts(ctx context.Context, tx *sql.Tx, run int64, atts [][]results.Row, envs map[string]int64) error {
	width := 2 + len(detailFields)
	var batch [][]any
	for _, att := range atts {
		var env any // NULL: an attempt that measured nothing has no environment
		if m := mainRow(att); m.OK() {
			id, err := s.environment(ctx, tx, EnvironmentOf(m), envs)
			if err != nil {
				return err
			}
			env = id
		}
		for i := range att {
			args := make([]any, 0, width)
			args = append(args, run, env)
			batch = append(batch, fieldArgs(args, reflect.ValueOf(att[i]), detailFields))
		}
	}
	return s.insertRows(ctx, tx, "detail", "run, env, "+names(detailFields, ""), width, batch)
}

// environment returns the id of e's row, inserting it if new.
func (s *Store) environment(ctx context.Context, tx *sql.Tx, e Environment, cache map[string]int64) (int64, error) {
	fp := e.Fingerprint()
	if id, ok := cache[fp]; ok {
		return id, nil
	}
	args := fieldArgs([]any{fp}, reflect.ValueOf(e), envFields)
	if _, err := s.exec(ctx, tx, "INSERT INTO environments (fingerprint, "+names(envFields, "")+") VALUES "+
		placeholders(len(args))+" ON CONFLICT (fingerprint) DO NOTHING", args...); err != nil {
		return 0, err
	}
	var id int64
	if err := tx.QueryRowContext(ctx, s.d.rebind("SELECT id FROM environments WHERE fingerprint = ?"), fp).Scan(&id); err != nil {
		return 0, err
	}
	cache[fp] = id
	return id, nil
}
