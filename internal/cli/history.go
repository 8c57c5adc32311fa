package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/pkg/history"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner"
	"github.com/kvbench/kvbench/pkg/stats"
)

// HistoryEnv names the environment variable that gives the history store
// when --history is not: a file, a postgres:// URL, or "off".
const HistoryEnv = "KVBENCH_HISTORY"

// historyOff is the value of HistoryEnv that turns recording off.
const historyOff = "off"

// errNoHistory: a history command found no store to use.
var errNoHistory = errors.New("no history store")

// historyLocation resolves where the history is kept: the flag when
// given, else $KVBENCH_HISTORY ("off": nowhere), else, outside tests, the
// file under the user's data directory. A test binary records nowhere
// unless told, so that "go test" leaves the home directory alone. "" means
// no history.
func historyLocation(flag string, given bool) (string, error) {
	if given {
		return flag, nil
	}
	if v, ok := os.LookupEnv(HistoryEnv); ok {
		if v == historyOff {
			return "", nil
		}
		return v, nil
	}
	if testing.Testing() {
		return "", nil
	}
	return history.DefaultPath()
}

// historyHelp is the --history flag's help.
const historyHelp = "history store: a SQLite file or a postgres:// URL (default: $" + HistoryEnv + ", else $XDG_DATA_HOME/kvbench/history.db or ~/.local/share/kvbench/history.db)"

// runHistory is run's history flags.
type runHistory struct {
	location       string
	off            bool
	commit, branch string
	flags          *pflag.FlagSet
}

// addRunHistoryFlags adds run's --history, --no-history, --commit and
// --branch.
func addRunHistoryFlags(f *pflag.FlagSet, h *runHistory) {
	h.flags = f
	f.StringVar(&h.location, "history", "", historyHelp+`; "off" records nothing`)
	f.BoolVar(&h.off, "no-history", false, "do not record the run in the history")
	f.StringVar(&h.commit, "commit", "", "commit of the server under test, recorded with the run (kvbench history names runs by it)")
	f.StringVar(&h.branch, "branch", "", "branch of the server under test, recorded with the run")
}

// start opens the history store and sets o.Recorder, unless the history
// is off or the run is a dry run; the returned function closes the store.
// A store that cannot be opened costs a warning: the run goes on, its
// detail CSV being the record.
func (h *runHistory) start(ctx context.Context, o *runner.Options, stderr io.Writer) (stop func()) {
	stop = func() {}
	if h.off || o.DryRun || h.location == historyOff {
		return stop
	}
	loc, err := historyLocation(h.location, h.flags != nil && h.flags.Changed("history"))
	if err == nil && loc == "" {
		return stop
	}
	var s *history.Store
	if err == nil {
		s, err = history.Open(ctx, loc)
	}
	if err != nil {
		fmt.Fprintf(stderr, "warning: %v; the run goes on without the history (the detail CSV has every row)\n", err)
		return stop
	}
	o.Recorder = s.NewRecorder(history.RunInfo{Label: o.Label, Commit: h.commit, Branch: h.branch, KvbenchVersion: buildVersion()})
	return func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(stderr, "warning: history: %v\n", err)
		}
	}
}

// historyCmd holds the history command's shared flag.
type historyCmd struct {
	location string
}

// store is the store the subcommand uses.
func (h *historyCmd) store(cmd *cobra.Command) (string, error) {
	loc, err := historyLocation(h.location, cmd.Flags().Changed("history"))
	if err == nil && loc == "" {
		err = fmt.Errorf("%w: give --history (%s is off, or this is a test)", errNoHistory, HistoryEnv)
	}
	return loc, err
}

// newHistoryCmd is "kvbench history" and its subcommands.
func newHistoryCmd() *cobra.Command {
	h := &historyCmd{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Every run kept: list, show, trends across commits, change points, a CI gate",
		Long: `history keeps every "kvbench run" (recorded as it goes, unless --no-history)
and the detail CSVs imported into it, in a SQLite file (by default under the
user's data directory) or a PostgreSQL database (--history postgres://...).

A series is one scenario (target/strategy/mode) on one environment (the
load machine, the server's configuration, TLS, shards, agents and the
settings): series never mix machines. "trend" shows a metric of every
series over its runs; "check" finds where it changed: E-Divisive means over
the runs' trimmed means, each change confirmed by the Mann-Whitney U test
of the rounds before and after it, with the shift and its confidence
interval. With --threshold, check is a gate for CI.

The manual: docs/history.md.`,
		Example: `  kvbench history list
  kvbench history import results/*_detail_*.csv
  kvbench history show 20261130_120000
  kvbench history trend --metric p99 --format html > trend.html
  kvbench history check --threshold 5 --format md     # exit 3 on a regression
  kvbench history prune --older-than 180d --dry-run`,
		Args: noArgs,
	}
	cmd.PersistentFlags().StringVar(&h.location, "history", "", historyHelp)
	cmd.AddCommand(h.importCmd(), h.listCmd(), h.showCmd(), h.trendCmd(), h.checkCmd(), h.pruneCmd())
	return cmd
}

// exactArgs is cobra.ExactArgs with the error marked as a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

func (h *historyCmd) importCmd() *cobra.Command {
	var o history.ImportOptions
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Load detail CSVs into the history, those of earlier versions too",
		Long: `import loads detail CSVs (quoted globs are expanded) into the history. Each
run of a file (its rows of one run_id) becomes a run named by its label
column, or its run id; rows without a run_id take the file's
(kvbench_detail_<time>.csv gives <time>). The series CSV beside a detail
CSV (kvbench_series_<time>.csv) is imported with it; the CSVs run writes
beside a detail CSV are skipped among the files. A run the history already
holds (same run id, same load machine) is left as it is: importing a file
twice adds nothing. --commit and --branch record the runs with the commit
and branch of the server measured, as "run --commit" does: a run that
could not be recorded as it ran says which import command records it.`,
		Example: `  kvbench history import results/*_detail_*.csv
  kvbench history import --history team.db 'old/*.csv'
  kvbench history import --commit abc1234 results/kvbench_detail_20261206_101500.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := results.ExpandPatterns(args)
			if err != nil {
				return &usageError{err}
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			s := streamsOf(cmd)
			o.Location, o.Files = loc, files
			return history.ImportFiles(cmd.Context(), o, s.Out, s.ErrOut)
		},
	}
	cmd.Flags().StringVar(&o.Commit, "commit", "", "commit of the server measured, recorded with every run imported")
	cmd.Flags().StringVar(&o.Branch, "branch", "", "branch of the server measured, recorded with every run imported")
	return cmd
}

func (h *historyCmd) listCmd() *cobra.Command {
	var o history.ListOptions
	format := string(history.ListWriters.Default())
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the runs, newest first, each with its run id",
		Long: `list prints the runs of the history, newest first: the run id its files
carry, when it started, its status (complete, interrupted, imported,
running, or incomplete: its process was killed), label, commit, branch,
load machine, kvbench version and row counts.`,
		Example: `  kvbench history list --limit 10
  kvbench history list --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Format, err = parseFormat(history.ListWriters, format); err != nil {
				return err
			}
			if o.Limit < 0 {
				return &usageError{fmt.Errorf("--limit %d: want 0 (all) or more", o.Limit)}
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			o.Location = loc
			return history.List(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.Limit, "limit", 0, "list the newest N runs (0: all)")
	cmd.Flags().StringVar(&format, "format", format, "output: "+history.ListWriters.String())
	return cmd
}

func (h *historyCmd) showCmd() *cobra.Command {
	var o history.ShowOptions
	format := string(history.ShowWriters.Default())
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run: how it was recorded, its environments and its report",
		Long: `show prints one run: its run id, times, status, label, commit, branch,
load machine and source, the environments of its scenarios, and the report
"kvbench report" makes of its rows. RUN is a run id ("latest" for the
newest), or RUN@HOST when two load machines have a run of that id.`,
		Example: `  kvbench history show 20261130_120000
  kvbench history show latest --format json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Format, err = parseFormat(history.ShowWriters, format); err != nil {
				return err
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			o.Location, o.Run = loc, args[0]
			return history.Show(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&format, "format", format, "output: "+history.ShowWriters.String())
	return cmd
}

// addAnalyzeFlags adds the flags trend and check share; --precision goes
// to precision, which validAnalyze parses.
func addAnalyzeFlags(f *pflag.FlagSet, o *history.AnalyzeOptions, precision *string) {
	f.StringVar(&o.Metric, "metric", history.DefaultMetric, "metric: qps, us_per_op or p99")
	f.StringSliceVar(&o.Scenarios, "scenario", nil, "only the scenarios (target/strategy/mode) matching a glob or containing the text; repeatable")
	f.IntVar(&o.Last, "last", 0, "only the newest N runs of each series (0: all)")
	f.Float64Var(&o.Alpha, "alpha", history.DefaultAlpha, "level of the U test that confirms a change point")
	f.StringVar(precision, "precision", stats.FormatPrecision(stats.DefaultPrecision), "margin of a change point's verdict: a shift whose interval lies within ± this is \"no difference larger than\" it")
}

// validAnalyze checks the shared flags (a usage error) and sets
// o.Precision from precision.
func validAnalyze(o *history.AnalyzeOptions, precision string) error {
	if o.Alpha <= 0 || o.Alpha >= 1 || o.Last < 0 {
		return &usageError{fmt.Errorf("--alpha %v, --last %d: want 0 < alpha < 1 and last >= 0", o.Alpha, o.Last)}
	}
	var err error
	if o.Precision, err = stats.ParsePrecision(precision); err != nil {
		return &usageError{fmt.Errorf("--precision: %w", err)}
	}
	switch o.Metric {
	case history.MetricQPS, history.MetricUsPerOp, history.MetricP99:
		return nil
	}
	return &usageError{fmt.Errorf("--metric %q: want qps, us_per_op or p99", o.Metric)}
}

func (h *historyCmd) trendCmd() *cobra.Command {
	var o history.TrendOptions
	var precision string
	format := string(history.TrendWriters.Default())
	cmd := &cobra.Command{
		Use:   "trend",
		Short: "A metric of every scenario over its runs, change points marked",
		Long: `trend prints, for every series (a scenario on one environment), the metric's
trimmed mean of each run, oldest first, with the change points found (see
check) on the first run after each. A scenario measured on another machine
or with other settings is another series, said so under its heading. The
html format draws a plot per series: every round, the runs' trimmed
means, the level between change points and each change point marked.`,
		Example: `  kvbench history trend
  kvbench history trend --metric p99 --scenario 'kvstore/*/set' --last 30
  kvbench history trend --format html > trend.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Format, err = parseFormat(history.TrendWriters, format); err != nil {
				return err
			}
			if err := validAnalyze(&o.AnalyzeOptions, precision); err != nil {
				return err
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			o.Location = loc
			return history.Trend(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	addAnalyzeFlags(cmd.Flags(), &o.AnalyzeOptions, &precision)
	cmd.Flags().StringVar(&format, "format", format, "output: "+history.TrendWriters.String())
	return cmd
}

func (h *historyCmd) checkCmd() *cobra.Command {
	var o history.CheckOptions
	var precision string
	format := string(history.CheckWriters.Default())
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Find the change points of every series; with --threshold, a CI gate",
		Long: `check finds where each series changed: E-Divisive means over the runs'
trimmed means proposes the changes, and each is kept only when the
Mann-Whitney U test of the rounds of the runs before and after it (up to 10
runs each side) gives p <= --alpha; the newest run is also tested alone
against the runs before it. It prints one line per change point: the
scenario, the shift of the metric with its 95% Hodges-Lehmann interval,
the last run before and the first after (by label and commit, or run id),
the p-value and the interval's verdict (faster, slower, no difference
larger than --precision, or undecided). A change of environment is said
as such: a new series, never a regression.

With --threshold PCT it is a gate: exit 3 when the newest change point of
a series is a regression of more than PCT percent, that is when the newest
runs sit in it; 0 otherwise. --format md is a compact table for a
pull-request comment.

Exit status: 0, or 3 when the gate finds a regression; 1 when the history
cannot be read; 2 for a usage error.`,
		Example: `  kvbench history check
  kvbench history check --threshold 5 --format md     # exit 3 on a regression of more than 5%
  kvbench history check --metric p99 --last 50`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.Format, err = parseFormat(history.CheckWriters, format); err != nil {
				return err
			}
			if err := validAnalyze(&o.AnalyzeOptions, precision); err != nil {
				return err
			}
			if o.Threshold < 0 {
				return &usageError{fmt.Errorf("--threshold %v: want a percentage >= 0", o.Threshold)}
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			o.Location = loc
			err = history.Check(cmd.Context(), o, cmd.OutOrStdout())
			if errors.Is(err, history.ErrRegression) {
				fmt.Fprintln(cmd.ErrOrStderr(), "kvbench:", err)
				return exitError(ExitRegression)
			}
			return err
		},
	}
	addAnalyzeFlags(cmd.Flags(), &o.AnalyzeOptions, &precision)
	cmd.Flags().Float64Var(&o.Threshold, "threshold", 0, "gate: exit 3 when the newest runs of a series sit in a regression of more than this many percent (0: no gate)")
	cmd.Flags().StringVar(&format, "format", format, "output: "+history.CheckWriters.String())
	return cmd
}

func (h *historyCmd) pruneCmd() *cobra.Command {
	var o history.PruneCmdOptions
	var olderThan string
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete old runs from the history, by age or by count",
		Long: `prune deletes runs with their rows: those that started longer ago than
--older-than, or all but the newest --keep; with both, a run goes only when
it is older and not among the newest. A run still running is kept.
--dry-run lists what would go.`,
		Example: `  kvbench history prune --older-than 180d --dry-run
  kvbench history prune --keep 500`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if olderThan != "" {
				d, err := parseAge(olderThan)
				if err != nil {
					return &usageError{fmt.Errorf("--older-than %q: %w", olderThan, err)}
				}
				o.OlderThan = d
			}
			if o.Keep < 0 || o.OlderThan <= 0 && o.Keep == 0 {
				return &usageError{errors.New("prune: give --older-than AGE or --keep N (N >= 1)")}
			}
			loc, err := h.store(cmd)
			if err != nil {
				return err
			}
			o.Location = loc
			return history.PruneRuns(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "delete the runs older than this: 90d, 2w, 36h")
	cmd.Flags().IntVar(&o.Keep, "keep", 0, "keep the newest N runs, delete the others")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list the runs that would be deleted; delete nothing")
	return cmd
}

// parseAge reads an age: a Go duration (36h), or days (90d) or weeks (2w).
func parseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	if unit > 0 {
		n, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err != nil || n <= 0 {
			return 0, errors.New("want a positive number of days (d) or weeks (w), or a duration such as 36h")
		}
		return time.Duration(n * float64(unit)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration: 90d, 2w, 36h")
	}
	return d, nil
}
