package persistjob

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/figure"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestRows: a scenario's rounds give a row per job, their medians, the
// rounds whose p99 did not come back counted; a round without the figure
// leaves it out of its median, and one without a job is no row's.
func TestRows(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	round := func(job string, before, during float64, recovery *float64) Round {
		return Of(&results.Row{PersistJob: job, P99BeforeUs: f(before), P99DuringUs: f(during), P99RecoveryS: recovery, JobS: f(2)})
	}
	rounds := []Round{round("bgsave", 100, 200, f(0.5)), round("bgsave", 100, 300, nil), round("bgsave", 100, 400, f(1.5)), Of(&results.Row{})}
	rows := Rows("nopersist", "none", rounds)
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Job != "bgsave" || r.Rounds != 3 || r.P99Ratio != 3 || r.RecoveryS != 1 || r.NotRecovered != 1 || r.JobS != 2 {
		t.Errorf("row %+v", r)
	}
	if r.ForkMs.Valid() || !math.IsNaN(float64(r.P)) {
		t.Errorf("fork %v, p %v: want none", r.ForkMs, r.P)
	}
	base := Rows("nopersist", "none", []Round{round("bgsave", 100, 100, f(0))})[0]
	r.Against(base, "kvstore/x/mixed bgsave", func(subject, metric string, x, y []float64) (figure.Prob, bool) {
		if subject != "kvstore/x/mixed bgsave" || metric != "p99 during/before" || len(x) != 3 || x[0] != 2 || len(y) != 1 {
			t.Errorf("test of %s %s: %v against %v", subject, metric, x, y)
		}
		return 0.01, true
	})
	if r.Baseline != "nopersist" || r.P != 0.01 || !r.Significant {
		t.Errorf("against the baseline: %+v", r)
	}
}
