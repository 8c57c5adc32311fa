package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/spf13/cobra"
)

// reportOptions is what "kvbench report" was asked to do.
type reportOptions struct {
	output.RunOptions
	format    string
	precision string
	streams
}

// newReportCmd is "kvbench report": flags into reportOptions, then runF
// (runReport when nil).
func newReportCmd(runF func(context.Context, *reportOptions) error) *cobra.Command {
	if runF == nil {
		runF = runReport
	}
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report DETAIL.csv|DIR...",
		Short: "Turn detail CSVs into trimmed, significance-tested tables",
		Long: `report reads one or more detail CSVs written by "kvbench run" (several files,
directories (their *_detail*.csv files, as "run --out DIR" wrote them) and
glob patterns are merged) and prints the settings the rows record
(requests, rounds, pipeline, connections, keyspace, value size, the servers'
versions, the load generator's machine), then per target:

  1. the raw rounds: Round1..RoundN, mean QPS, mean us/op;
  2. the trimmed figures: per scenario (target, strategy, mode) the round whose
     QPS deviates most from the median is dropped (the earliest on a tie) and
     the remaining rounds are averaged; with fewer than 3 ok rounds nothing is
     dropped;
  3. the overhead of each strategy against the baseline, per mode, with a
     Mann-Whitney U verdict (the p-value, or ~ when not significant);
  4. the spread of the rounds (CV, min/max, a confidence interval of the
     median at its exact level: 95% or more from 6 rounds, [min, max] at
     93.75% for 5) and, when
     measured, latencies; then failed attempts and warnings (one line per kind,
     naming the scenarios it concerns).

With two targets or more, the report opens with the targets side by side:
per mode, one table with a column group per target (per alloc where a target
has several), a row per persistence class (none, no, everysec, always, ...),
the trimmed QPS and p99, and the ratio to the --reference target (redis when
present, else the first by name) with its Mann-Whitney U verdict. A strategy
with no counterpart has a row of its own.

Those pairs are also comparisons, per mode, in QPS and p99: the ratio, its
95% interval and a verdict (faster, slower, no difference larger than
--precision, or undecided); --comparisons-csv writes them, the json format
holds them. The rows of an adaptive run ("kvbench run --precision": rows
with a block) are compared in pairs, block by block, disturbed slices left
out; its markdown prints those comparisons per mode and, per target, the
median of each scenario's slices, instead of the tables of rounds.

Every figure has 2 decimals; overheads are computed from the figures as shown.
The baseline of a target (and alloc) is the strategy whose persistence is
"none", or, without a persistence column, the strategy named none or
nopersist; --baseline overrides it. Targets come by name; within a target
the baseline first, then by persistence (none, no, everysec, always, others)
and name: the order depends on the rows' contents, not on their order.

Required columns: target, strategy, mode, round, status, qps (any order;
unknown columns are ignored). Rows whose status is not "ok" are failed
attempts: counted and listed, not used in the statistics.

Beside a detail CSV named PREFIX_detail_TS.csv, the files "kvbench run"
wrote with it are read too: PREFIX_nodes_TS.csv (the spread over a
cluster's masters) and PREFIX_series_TS.csv (run --interval): a stalls
table per target (stalls per minute, longest, count, U-test against the
baseline) and, in the html format, a plot per scenario of its kept rounds'
QPS and p99 per interval, stalls and the server's events marked.`,
		Example: `  kvbench report results/
  kvbench report results/hash_bench_detail_*.csv
  kvbench report --lang zh results/*.csv > report.md
  kvbench report --baseline kvstore=nopersist,redis=none --chart qps.svg results/*.csv
  kvbench report --format csv results/*.csv > trimmed.csv
  kvbench report --format html results/*.csv > report.html
  kvbench report --summary-csv summary.csv --trimmed-csv trimmed.csv --format json results/*.csv
  kvbench report --precision 2% --comparisons-csv comparisons.csv results/*.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{errors.New("report: give at least one detail CSV (file, directory or glob pattern)")}
			}
			o.Inputs = args
			if err := o.validate(); err != nil {
				return &usageError{err}
			}
			o.streams = streamsOf(cmd)
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", string(output.Writers.Default()), "output: md (markdown tables), csv (the trimmed CSV), json, or html (one self-contained page: the tables and the charts, inline)")
	f.StringVar(&o.Report.Lang, "lang", render.LangEN, "language of the markdown report (every line but the data): en or zh")
	f.StringVar(&o.Baselines, "baseline", "", "baseline strategy per target, e.g. kvstore=nopersist,redis=none")
	f.StringVar(&o.Report.Reference, "reference", "", "target the side-by-side tables compare the others with (default: redis when present, else the first target by name)")
	f.StringVar(&o.SummaryCSV, "summary-csv", "", "also write the summary CSV (per scenario: rounds, means) to this file")
	f.StringVar(&o.TrimmedCSV, "trimmed-csv", "", "also write the trimmed CSV (per scenario: trimming, spread, overhead) to this file")
	f.StringVar(&o.ComparisonsCSV, "comparisons-csv", "", "also write the comparisons CSV (per mode: each strategy against its baseline, each target against the reference; ratio, interval, verdict) to this file")
	f.StringVar(&o.precision, "precision", stats.FormatPrecision(stats.DefaultPrecision), "margin of the comparisons' verdicts: an interval of the ratio within 1 ± this is \"no difference larger than\" it")
	f.StringVar(&o.Chart, "chart", "", "also draw the trimmed QPS per scenario to this .svg or .png file (the markdown links to it)")
	f.Float64Var(&o.Report.Alpha, "alpha", stats.DefaultAlpha, "significance level of the overhead verdicts")
	f.Float64Var(&o.Report.Confidence, "confidence", stats.DefaultConfidence, "confidence level of the median's interval")
	return cmd
}

// validate checks the options that need no input: the output format, the
// language, the baselines and the chart's file name.
func (o *reportOptions) validate() error {
	var err error
	if o.Format, err = parseFormat(output.Writers, o.format); err != nil {
		return err
	}
	if !render.KnownLang(o.Report.Lang) {
		return fmt.Errorf("--lang %q: want %s or %s", o.Report.Lang, render.LangEN, render.LangZH)
	}
	if _, err := report.ParseBaselines(o.Baselines); err != nil {
		return err
	}
	if o.Report.Precision, err = stats.ParsePrecision(o.precision); err != nil {
		return fmt.Errorf("--precision: %w", err)
	}
	if o.Chart != "" {
		if _, err := output.ChartFormat(o.Chart); err != nil {
			return err
		}
	}
	return nil
}

// runReport reads the CSVs and prints the report.
func runReport(ctx context.Context, o *reportOptions) error {
	render.DisableWidthCache() // a process-wide setting: it belongs here
	err := output.Run(ctx, o.RunOptions, o.Out)
	if errors.Is(err, report.ErrFormat) {
		return &usageError{err}
	}
	return err
}
