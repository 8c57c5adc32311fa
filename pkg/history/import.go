package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/results"
)

// Imported is one run found in the files Import read.
type Imported struct {
	// RunID and Host identify the run in the store.
	RunID string `json:"run_id"`
	Host  string `json:"host,omitempty"`
	// Label is the run's label.
	Label string `json:"label,omitempty"`
	// File is the file it was read from.
	File string `json:"file"`
	// Rows is the number of detail rows.
	Rows int `json:"rows"`
	// Series is the number of series rows, from the series CSV beside
	// the file.
	Series int `json:"series,omitempty"`
	// Existing is set when the store held the run already: nothing was
	// written.
	Existing bool `json:"existing,omitempty"`
}

// ImportResult is what Import did.
type ImportResult struct {
	// Runs are the runs found, in the order of the files.
	Runs []Imported `json:"runs"`
	// Warnings are findings that did not stop the import.
	Warnings []error `json:"-"`
}

// Import loads detail CSVs into the store, those of earlier versions too
// (results.ReadCSV's rules): each run of a file (its rows of one run_id)
// becomes a run, named by its label column, or else by its run id; rows
// without a run_id take the file's (kvbench_detail_<time>.csv gives
// <time>, another name its base name). A run the store already holds (same
// run id and load machine) is left as it is, so importing a file twice
// adds nothing. The series CSV beside a detail CSV (results.SeriesPath)
// is imported with it, each run's series rows with the run; the
// companions kvbench writes beside the detail CSVs (results.Companion)
// are skipped among the files. Each run is one transaction.
func (s *Store) Import(ctx context.Context, files []string) (*ImportResult, error) {
	return s.ImportWith(ctx, files, RunInfo{})
}

// ImportWith is Import recording each run with info's commit and branch,
// which a detail CSV does not carry: "kvbench run --commit" names a run
// by its commit, and a run recorded later by import keeps it.
func (s *Store) ImportWith(ctx context.Context, files []string, info RunInfo) (*ImportResult, error) {
	res := &ImportResult{}
	envs := make(map[string]int64)
	for _, file := range results.DetailFiles(files) {
		rows, err := results.ReadFiles([]string{file})
		if err != nil {
			return res, err
		}
		if len(rows) == 0 {
			res.Warnings = append(res.Warnings, fmt.Errorf("%s: %w: no rows", file, results.ErrEmpty))
			continue
		}
		runs := groupRuns(rows, file)
		if err := addSeriesBeside(runs, file, res); err != nil {
			return res, err
		}
		for _, g := range runs {
			im, err := s.importRun(ctx, g, file, envs, info)
			if err != nil {
				clear(envs)
				return res, err
			}
			res.Runs = append(res.Runs, im)
			if g.labels > 1 {
				res.Warnings = append(res.Warnings, fmt.Errorf("%s: run %s has %d labels; it is named %q", file, g.runID, g.labels, g.label))
			}
		}
	}
	return res, nil
}

// fileRun is one run's rows in a file.
type fileRun struct {
	runID, host, label string
	labels             int // distinct labels seen
	started            time.Time
	rows               []results.Row
	series             []results.SeriesRow
}

// addSeriesBeside gives the runs of the detail CSV file their rows of the
// series CSV beside it, if there is one; rows of a run the detail CSV
// lacks are left out with a warning.
func addSeriesBeside(runs []*fileRun, file string, res *ImportResult) error {
	path := results.SeriesPath(file)
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	rows, err := results.ReadSeriesFile(path)
	if err != nil {
		return err
	}
	byID := make(map[string]*fileRun, len(runs))
	for _, g := range runs {
		byID[g.runID] = g
	}
	fallback := fileRunID(file)
	orphans := map[string]int{}
	for _, r := range rows {
		if r.RunID == "" {
			r.RunID = fallback
		}
		g := byID[r.RunID]
		if g == nil {
			orphans[r.RunID]++
			continue
		}
		g.series = append(g.series, r)
	}
	for _, id := range slices.Sorted(maps.Keys(orphans)) {
		res.Warnings = append(res.Warnings, fmt.Errorf("%s: %d rows of run %s, which %s does not have: not imported", path, orphans[id], id, file))
	}
	return nil
}

// runIDTime is the time a run id made by kvbench run holds.
var runIDTime = regexp.MustCompile(`(\d{8}_\d{6})`)

// groupRuns splits a file's rows by run id, in order of appearance.
func groupRuns(rows []results.Row, file string) []*fileRun {
	fallback := fileRunID(file)
	byID := map[string]*fileRun{}
	var order []*fileRun
	for _, r := range rows {
		id := r.RunID
		if id == "" {
			id = fallback
		}
		g := byID[id]
		if g == nil {
			g = &fileRun{runID: id}
			byID[id] = g
			order = append(order, g)
		}
		if r.RunID == "" {
			r.RunID = id
		}
		g.rows = append(g.rows, r)
	}
	for _, g := range order {
		counts := map[string]int{}
		for i := range g.rows {
			r := &g.rows[i]
			if g.host == "" {
				g.host = r.ClientHost
			}
			if r.Label != "" {
				counts[r.Label]++
			}
			if t, err := time.Parse(time.RFC3339, r.StartedAt); err == nil && (g.started.IsZero() || t.Before(g.started)) {
				g.started = t
			}
		}
		g.labels = len(counts)
		for l, n := range counts {
			if n > counts[g.label] || n == counts[g.label] && l < g.label {
				g.label = l
			}
		}
		if g.started.IsZero() {
			g.started = idTime(g.runID, file)
		}
	}
	return order
}

// fileRunID is the run id of a file's rows that have none.
func fileRunID(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if _, after, ok := strings.Cut(base, "_detail_"); ok && after != "" {
		return after
	}
	return base
}

// idTime is when a run without started_at ran: the time in its run id or
// file name (kvbench's 20060102_150405, local time), else the file's
// modification time.
func idTime(runID, file string) time.Time {
	for _, s := range []string{runID, filepath.Base(file)} {
		if m := runIDTime.FindString(s); m != "" {
			if t, err := time.ParseInLocation("20060102_150405", m, time.Local); err == nil {
				return t
			}
		}
	}
	if fi, err := os.Stat(file); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}

// importRun stores one run of a file, unless the store has it.
func (s *Store) importRun(ctx context.Context, g *fileRun, file string, envs map[string]int64, info RunInfo) (Imported, error) {
	im := Imported{RunID: g.runID, Host: g.host, Label: g.label, File: file, Rows: len(g.rows), Series: len(g.series)}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		id, err := s.insertRun(ctx, tx, storedRun{RunID: g.runID, Host: g.host, Started: g.started, Status: StatusImported,
			Label: g.label, Commit: info.Commit, Branch: info.Branch, Source: file})
		if errors.Is(err, ErrDuplicateRun) {
			im.Existing = true
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, "UPDATE runs SET finished_at = started_at WHERE id = ?", id); err != nil {
			return err
		}
		if err := s.writeAttempts(ctx, tx, id, attempts(sortedAttempts(g.rows)), envs); err != nil {
			return err
		}
		return s.writeSeries(ctx, tx, id, g.series)
	})
	if err != nil {
		return im, fmt.Errorf("history: import %s, run %s: %w", file, g.runID, err)
	}
	return im, nil
}

// sortedAttempts orders rows so that each attempt's rows are together (a
// merged file may interleave them); rows of one attempt keep their order.
func sortedAttempts(rows []results.Row) []results.Row {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b results.Row) int {
		return cmp.Or(strings.Compare(a.Target, b.Target), strings.Compare(a.Strategy, b.Strategy),
			strings.Compare(a.Mode, b.Mode), strings.Compare(a.Workload, b.Workload),
			cmp.Compare(a.Round, b.Round), cmp.Compare(a.Attempt, b.Attempt))
	})
	return out
}
