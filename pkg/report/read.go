package report

import (
	"context"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
)

// ReadFiles builds the report of detail CSV files (results.DetailFiles
// picks them out of a directory's files), with the nodes and series CSVs
// "kvbench run" wrote beside them: the same report Build makes of the
// same rows. The rows stream from the files into the builder, which
// keeps only what the report needs: 100,000 rows never sit in memory at
// once. The rows that were read are checked too (duplicates, conflicts),
// so that the errors of the lines that do not parse and of those that do
// are returned at once, in the files' order.
func ReadFiles(ctx context.Context, files []string, opts Options) (*Report, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	scanErr := results.Scan(files, b.add)
	if b.n == 0 {
		if scanErr != nil {
			return nil, scanErr
		}
		return nil, fmt.Errorf("%w: no detail rows in %s", results.ErrEmpty, strings.Join(files, ", "))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep, err := b.finish()
	if err != nil || scanErr != nil {
		return nil, results.Merge(files, scanErr, err)
	}
	if err := rep.addNodesBeside(files); err != nil { // nodes.go
		return nil, err
	}
	if err := rep.addSeriesBeside(files); err != nil { // series.go
		return nil, err
	}
	return rep, nil
}

// ParseBaselines parses a --baseline value, "kvstore=nopersist,redis=none",
// into a map from target to strategy.
func ParseBaselines(s string) (map[string]string, error) {
	m := make(map[string]string)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		target, strategy, ok := strings.Cut(part, "=")
		target, strategy = strings.TrimSpace(target), strings.TrimSpace(strategy)
		if !ok || target == "" || strategy == "" {
			return nil, fmt.Errorf("%w: baseline %q: want target=strategy", ErrFormat, part)
		}
		if prev, dup := m[target]; dup && prev != strategy {
			return nil, fmt.Errorf("%w: baseline for %s given twice (%s, %s)", ErrFormat, target, prev, strategy)
		}
		m[target] = strategy
	}
	return m, nil
}
