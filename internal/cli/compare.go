package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/pkg/compare"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/stats"
)

// ExitRegression is the exit status of "kvbench compare" when its gate
// (--threshold) finds a significant regression.
const ExitRegression = 3

// compareOptions is what "kvbench compare" was asked to do.
type compareOptions struct {
	compare.Options
	by        string
	format    string
	precision string
	Format    render.Format
	streams
}

// newCompareCmd is "kvbench compare": flags into compareOptions, then runF
// (runCompare when nil).
func newCompareCmd(runF func(context.Context, *compareOptions) error) *cobra.Command {
	if runF == nil {
		runF = runCompare
	}
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW | compare --by label A B DETAIL.csv...",
		Short: "Compare two sets of runs: the change per scenario, with significance",
		Long: `compare answers "did my change make it faster or slower?". Each side is a
detail CSV, a directory of them (its *_detail*.csv files) or a quoted glob;
with --by label, the rows of the given CSVs are split by their label column
("kvbench run --label NAME"), A against B.

Per scenario (target, strategy, mode) and metric (qps, us_per_op, p99) it
prints the old and new trimmed means (the report's trimming rule), the change,
the Mann-Whitney U p-value over all ok rounds (~ when not significant), the
Hodges-Lehmann interval of the change (its heading names its exact level:
96.83% for 5 rounds against 5), the verdict of that interval (faster,
slower, no difference larger than --precision, or undecided), and a geomean
row. The two sides are unpaired: an adaptive run's slices are compared as
rounds. Scenarios whose settings differ (requests, pipeline, keyspace, value
size, connections, shards, tls, resp3, placement) are refused unless
--ignore-settings is given.

With --threshold it is a gate for CI: a change of --metric beyond the
threshold in the bad direction (QPS down; us/op or p99 up) that is
significant makes it exit 3, the rows marked !.

Exit status: 0, or 3 when the gate finds a regression; 1 when the inputs
cannot be compared; 2 for a usage error.`,
		Example: `  kvbench compare results/before results/after
  kvbench compare 'old/*_detail_*.csv' new/kvbench_detail_20261130_101500.csv
  kvbench compare --by label main patched results/*_detail_*.csv
  kvbench compare --threshold 5 --metric qps before/ after/    # exit 3 on a regression
  kvbench compare --format json before/ after/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return &usageError{err}
			}
			o.streams = streamsOf(cmd)
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.by, "by", "", `compare within the given CSVs by a column: "label" (then the first two arguments are the labels)`)
	f.StringVar(&o.Metric, "metric", compare.DefaultMetric, "metric the gate watches: qps, us_per_op or p99")
	f.Float64Var(&o.Threshold, "threshold", 0, "gate: exit 3 when a significant change of --metric is worse than this many percent (0: no gate)")
	f.Float64Var(&o.Alpha, "alpha", stats.DefaultAlpha, "significance level")
	f.BoolVar(&o.IgnoreSettings, "ignore-settings", false, "compare scenarios even when their settings differ")
	f.StringVar(&o.precision, "precision", stats.FormatPrecision(stats.DefaultPrecision), "margin of the verdicts: an interval of the change within ± this is \"no difference larger than\" it")
	f.StringVar(&o.format, "format", string(compare.Writers.Default()), "output: "+compare.Writers.String())
	return cmd
}

// validate checks the arguments and flags.
func (o *compareOptions) validate(args []string) error {
	switch o.by {
	case "":
		if len(args) != 2 {
			return fmt.Errorf("compare: give two sides, OLD and NEW (got %d arguments; quote a glob)", len(args))
		}
		o.Old, o.New = args[:1], args[1:]
	case "label":
		if len(args) < 3 {
			return errors.New("compare --by label: give the two labels, then the detail CSVs")
		}
		o.Label, o.OldLabel, o.NewLabel, o.Old = true, args[0], args[1], args[2:]
	default:
		return fmt.Errorf("--by %q: want label", o.by)
	}
	var err error
	if o.Format, err = parseFormat(compare.Writers, o.format); err != nil {
		return err
	}
	switch o.Metric {
	case compare.MetricQPS, compare.MetricUsPerOp, compare.MetricP99:
	default:
		return fmt.Errorf("--metric %q: want qps, us_per_op or p99", o.Metric)
	}
	if o.Precision, err = stats.ParsePrecision(o.precision); err != nil {
		return fmt.Errorf("--precision: %w", err)
	}
	if o.Threshold < 0 || o.Alpha <= 0 || o.Alpha >= 1 {
		return fmt.Errorf("--threshold %v, --alpha %v: want a threshold >= 0 and 0 < alpha < 1", o.Threshold, o.Alpha)
	}
	return nil
}

// runCompare compares and prints; a failed gate exits 3 after the table.
func runCompare(_ context.Context, o *compareOptions) error {
	res, err := compare.Compare(o.Options)
	if res == nil {
		return err
	}
	if werr := res.Write(o.Out, o.Format); werr != nil {
		return werr
	}
	if errors.Is(err, compare.ErrRegression) {
		fmt.Fprintln(o.ErrOut, "kvbench:", err)
		return exitError(ExitRegression)
	}
	return err
}
