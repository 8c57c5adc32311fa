package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/results"
)

// The functions below are the "kvbench history" subcommands: each opens
// the store at its Location, does one thing, writes to w and closes it.

// withStore opens the store, runs f and closes it.
func withStore(ctx context.Context, location string, f func(*Store) error) error {
	s, err := Open(ctx, location)
	if err != nil {
		return err
	}
	return errors.Join(f(s), s.Close())
}

// ImportOptions is "history import".
type ImportOptions struct {
	Location string
	// Files are the detail CSVs.
	Files []string
	// Commit and Branch are recorded with every run imported.
	Commit, Branch string
}

// ImportFiles imports the files and prints a line per run; warnings go to
// stderr.
func ImportFiles(ctx context.Context, o ImportOptions, w, stderr io.Writer) error {
	return withStore(ctx, o.Location, func(s *Store) error {
		res, err := s.ImportWith(ctx, o.Files, RunInfo{Commit: o.Commit, Branch: o.Branch})
		if res != nil {
			for _, im := range res.Runs {
				what := fmt.Sprintf("imported %d rows", im.Rows)
				if im.Series > 0 {
					what += fmt.Sprintf(" and %d series rows", im.Series)
				}
				if im.Existing {
					what = "already in the history: nothing added"
				}
				name := im.RunID
				if im.Label != "" {
					name += " (" + im.Label + ")"
				}
				fmt.Fprintf(w, "%s: run %s: %s\n", im.File, name, what)
			}
			for _, warn := range res.Warnings {
				fmt.Fprintln(stderr, "warning:", warn)
			}
		}
		return err
	})
}

// ListOptions is "history list".
type ListOptions struct {
	Location string
	// Limit, when positive, lists the newest Limit runs.
	Limit int
	// Format is one of ListWriters' ("": md).
	Format render.Format
}

// Listing is what "history list" prints: the runs of the store at
// Location, newest first.
type Listing struct {
	Location string
	Runs     []*Run
}

// ListWriters are the formats of "history list": md (a table, the
// default), csv or json.
var ListWriters = render.Writers[Listing]{
	{Format: render.Markdown, Write: Listing.writeMarkdown},
	{Format: render.CSV, Write: Listing.writeCSV},
	{Format: render.JSON, Write: Listing.writeJSON},
}

// List prints the runs, newest first.
func List(ctx context.Context, o ListOptions, w io.Writer) error {
	if _, err := ListWriters.Parse(string(o.Format)); err != nil {
		return optionError(err)
	}
	return withStore(ctx, o.Location, func(s *Store) error {
		runs, err := s.Runs(ctx, o.Limit)
		if err != nil {
			return err
		}
		return ListWriters.Write(w, o.Format, Listing{Location: s.Location, Runs: runs})
	})
}

// writeMarkdown writes a table of the runs.
func (l Listing) writeMarkdown(w io.Writer) error {
	if len(l.Runs) == 0 {
		_, err := fmt.Fprintf(w, "no run in %s\n", l.Location)
		return err
	}
	var rows [][]string
	for _, r := range l.Runs {
		rows = append(rows, runRecord(r, false))
	}
	return render.WriteTable(w, runHeader, "llllllllrr", rows)
}

// writeCSV writes a line per run, times in full.
func (l Listing) writeCSV(w io.Writer) error {
	var rows [][]string
	for _, r := range l.Runs {
		rows = append(rows, runRecord(r, true))
	}
	return writeCSV(w, runHeader, rows)
}

// writeJSON writes the runs as an array, empty when there are none.
func (l Listing) writeJSON(w io.Writer) error {
	runs := l.Runs
	if runs == nil {
		runs = []*Run{}
	}
	return writeJSON(w, runs)
}

// runHeader are the columns of list.
var runHeader = []string{"run_id", "started", "status", "label", "commit", "branch", "host", "kvbench", "rows", "ok_rows"}

// runRecord is a run's cells; raw gives full times for csv.
func runRecord(r *Run, raw bool) []string {
	started := r.Started.Local().Format("2006-01-02 15:04:05")
	if raw {
		started = r.Started.UTC().Format(time.RFC3339)
	}
	return []string{r.RunID, started, r.Status, r.Label, r.Commit, r.Branch, r.Host, r.KvbenchVersion, strconv.Itoa(r.Rows), strconv.Itoa(r.OKRows)}
}

// ShowOptions is "history show".
type ShowOptions struct {
	Location string
	// Run is the run id (RUN@HOST when two hosts have it, or latest).
	Run string
	// Format is one of ShowWriters' ("": md).
	Format render.Format
}

// Shown is a run with its rows, as show prints it.
type Shown struct {
	Run          *Run                   `json:"run"`
	Environments map[string]Environment `json:"environments"`
	Rows         []results.Row          `json:"rows"`
	Series       []results.SeriesRow    `json:"series,omitempty"`
}

// Show prints a run: what it was recorded with, its environments, and
// the report of its rows (kvbench report's, from the rows the store
// holds).
func Show(ctx context.Context, o ShowOptions, w io.Writer) error {
	if _, err := ShowWriters.Parse(string(o.Format)); err != nil {
		return optionError(err)
	}
	return withStore(ctx, o.Location, func(s *Store) error {
		r, err := s.findRun(ctx, o.Run)
		if err != nil {
			return err
		}
		rows, envIDs, err := s.detailOf(ctx, r.id)
		if err != nil {
			return fmt.Errorf("history: read run %s: %w", r.RunID, err)
		}
		r.Rows = len(rows)
		for i := range rows {
			if rows[i].OK() {
				r.OKRows++
			}
		}
		series, err := s.seriesOf(ctx, r.id)
		if err != nil {
			return fmt.Errorf("history: read run %s: %w", r.RunID, err)
		}
		all, err := s.environments(ctx)
		if err != nil {
			return err
		}
		envs := map[string]Environment{}
		for _, id := range envIDs {
			if e, ok := all[id]; ok {
				envs[e.Fingerprint()] = e
			}
		}
		return ShowWriters.Write(w, o.Format, &Shown{Run: r, Environments: envs, Rows: rows, Series: series})
	})
}

// ShowWriters are the formats of "history show": md (the default), json
// or html.
var ShowWriters = render.Writers[*Shown]{
	{Format: render.Markdown, Write: (*Shown).writeMarkdown},
	{Format: render.JSON, Write: func(sh *Shown, w io.Writer) error { return writeJSON(w, sh) }},
	{Format: render.HTML, Write: (*Shown).writeHTML},
}

// markdown is the run's markdown: head, what it was recorded with and
// its environments; body, the report of its rows.
func (sh *Shown) markdown() (head, body []byte, err error) {
	r := sh.Run
	var md bytes.Buffer
	fmt.Fprintf(&md, "# Run %s\n\n", r.RunID)
	fields := [][]string{{"started", r.Started.Local().Format("2006-01-02 15:04:05 MST")}, {"status", r.Status},
		{"label", r.Label}, {"commit", r.Commit}, {"branch", r.Branch}, {"host", r.Host}, {"kvbench", r.KvbenchVersion},
		{"source", r.Source}, {"rows", fmt.Sprintf("%d (%d ok)", r.Rows, r.OKRows)}, {"series rows", strconv.Itoa(len(sh.Series))}}
	if !r.Finished.IsZero() {
		fields = slices.Insert(fields, 1, []string{"finished", r.Finished.Local().Format("2006-01-02 15:04:05 MST")})
	}
	var kept [][]string
	for _, f := range fields {
		if f[1] != "" {
			kept = append(kept, f)
		}
	}
	if err := render.WriteTable(&md, []string{"", ""}, "ll", kept); err != nil {
		return nil, nil, err
	}
	for _, fp := range slices.Sorted(maps.Keys(sh.Environments)) {
		fmt.Fprintf(&md, "\nEnvironment %s: %s.\n", fp, sh.Environments[fp].String())
	}
	var rep bytes.Buffer
	if len(sh.Rows) > 0 {
		built, err := report.Build(sh.Rows, report.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("history: report of run %s: %w", r.RunID, err)
		}
		if err := output.Markdown(built, &rep); err != nil {
			return nil, nil, err
		}
	}
	return md.Bytes(), rep.Bytes(), nil
}

// writeMarkdown writes the run's markdown, head then report.
func (sh *Shown) writeMarkdown(w io.Writer) error {
	head, body, err := sh.markdown()
	if err != nil {
		return err
	}
	md := append(append(head, '\n'), body...)
	_, err = w.Write(md)
	return err
}

// writeHTML writes the run's markdown as one page.
func (sh *Shown) writeHTML(w io.Writer) error {
	head, body, err := sh.markdown()
	if err != nil {
		return err
	}
	return render.WritePage(w, render.LangEN, "kvbench run "+sh.Run.RunID, render.Section{Markdown: head}, render.Section{Markdown: body})
}

// TrendOptions is "history trend".
type TrendOptions struct {
	Location string
	AnalyzeOptions
	// Format is one of TrendWriters' ("": md).
	Format render.Format
}

// Trend prints the metric of every series over its runs, change points
// marked.
func Trend(ctx context.Context, o TrendOptions, w io.Writer) error {
	if _, err := TrendWriters.Parse(string(o.Format)); err != nil {
		return optionError(err)
	}
	return withStore(ctx, o.Location, func(s *Store) error {
		a, err := s.Analyze(ctx, o.AnalyzeOptions)
		if err != nil {
			return err
		}
		return a.WriteTrend(w, o.Format)
	})
}

// CheckOptions is "history check".
type CheckOptions struct {
	Location string
	AnalyzeOptions
	// Threshold, when positive, is the gate: the error wraps
	// ErrRegression when a series' newest runs sit in a regression of
	// more than Threshold percent.
	Threshold float64
	// Format is one of CheckWriters' ("": text).
	Format render.Format
}

// Check prints the change points of every series and applies the gate.
// The output is written before the gate's error is returned.
func Check(ctx context.Context, o CheckOptions, w io.Writer) error {
	if _, err := CheckWriters.Parse(string(o.Format)); err != nil {
		return optionError(err)
	}
	return withStore(ctx, o.Location, func(s *Store) error {
		a, err := s.Analyze(ctx, o.AnalyzeOptions)
		if err != nil {
			return err
		}
		res, gate := a.Check(o.Threshold)
		if res == nil {
			return gate
		}
		if err := res.Write(w, o.Format); err != nil {
			return err
		}
		return gate
	})
}

// PruneCmdOptions is "history prune".
type PruneCmdOptions struct {
	Location string
	PruneOptions
}

// PruneRuns deletes (or with DryRun lists) the runs chosen, a line each.
func PruneRuns(ctx context.Context, o PruneCmdOptions, w io.Writer) error {
	return withStore(ctx, o.Location, func(s *Store) error {
		res, err := s.Prune(ctx, o.PruneOptions)
		if err != nil {
			return err
		}
		verb := "deleted"
		if res.DryRun {
			verb = "would delete"
		}
		for _, r := range res.Runs {
			fmt.Fprintf(w, "%s run %s (%s, %s, %d rows)\n", verb, r.RunID, r.Started.Local().Format("2006-01-02 15:04"), r.Status, r.Rows)
		}
		_, err = fmt.Fprintf(w, "%s %d runs, %d detail rows\n", verb, len(res.Runs), res.Rows)
		return err
	})
}
