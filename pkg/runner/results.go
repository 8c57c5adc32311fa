package runner

import (
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/runner/resultfiles"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Files are the result files of a run (resultfiles.Files).
type Files = resultfiles.Files

// reportOptionsOf are the report's options of a run: its language,
// baselines, reference target, and the margin of the comparisons'
// verdicts, the run's precision (stats.DefaultPrecision for a run of
// rounds).
func reportOptionsOf(o Options) (report.Options, error) {
	baselines, err := report.ParseBaselines(o.Baselines)
	if err != nil {
		return report.Options{}, err
	}
	precision := o.Precision
	if precision == 0 {
		precision = stats.DefaultPrecision
	}
	return report.Options{Lang: o.Lang, Baselines: baselines, Reference: o.Reference, Precision: precision}, nil
}

// reportOptions are reportOptionsOf the run's options.
func (r *run) reportOptions() (report.Options, error) { return reportOptionsOf(r.o) }
