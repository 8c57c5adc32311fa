package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// curveRows groups the ok rows of a run by target/strategy/round: the
// closed-loop row and the curve's rows, in the order written.
func curveRows(rows []results.Row) map[string][]results.Row {
	out := make(map[string][]results.Row)
	for _, r := range rows {
		if r.OK() {
			k := fmt.Sprintf("%s/%s/%s/%d", r.Target, r.Strategy, r.Mode, r.Round)
			out[k] = append(out[k], r)
		}
	}
	return out
}

// TestRunRates: each attempt measures its closed loop, then an open-loop
// phase at each rate on the same server, one row per rate with its rate
// (resolved against that attempt's QPS when relative), and with --slo
// the capacity on the closed-loop row.
func TestRunRates(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Modes, o.Rounds = []string{"kvstore", "redis"}, []string{"get"}, 2
	o.Strategies = []string{"nopersist", "none"}
	o.Requests, o.Keyspace = 20_000, 5_000
	o.Rates, o.SLO = "50%,100000", "p99<50ms"
	res, stdout, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	groups := curveRows(readDetail(t, res))
	if len(groups) != 4 {
		t.Fatalf("%d (target, strategy, round) groups of ok rows, want 4: %v", len(groups), groups)
	}
	for k, rows := range groups {
		if len(rows) != 3 {
			t.Errorf("%s: %d ok rows, want the closed loop and 2 rates", k, len(rows))
			continue
		}
		closed, half, abs := rows[0], rows[1], rows[2]
		if closed.Rate != nil || closed.RateSpec != "" || closed.SendLagP99Us != nil {
			t.Errorf("%s: the closed-loop row has a rate %v %q", k, closed.Rate, closed.RateSpec)
		}
		// A machine busy enough that the schedule slips gets no figure, and
		// the reason instead: never a capacity it did not hold.
		if closed.CapacityQPS == nil && strings.Contains(closed.CapacityWhy, "machine could not hold the schedule") {
			t.Logf("%s: no capacity on this busy machine: %s", k, closed.CapacityWhy)
		} else if closed.SLO != "p99<50ms" || closed.CapacityQPS == nil || !(*closed.CapacityQPS > 0) || *closed.CapacityQPS > closed.QPS*1.0001 {
			t.Errorf("%s: capacity %v at %q, want a positive figure at most the closed loop's %v at p99<50ms", k, closed.CapacityQPS, closed.SLO, closed.QPS)
		}
		if half.RateSpec != "50%" || half.Rate == nil || *half.Rate != closed.QPS/2 {
			t.Errorf("%s: first rate %v %q, want 50%% of %v", k, half.Rate, half.RateSpec, closed.QPS)
		}
		if abs.RateSpec != "100000" || abs.Rate == nil || *abs.Rate != 100000 {
			t.Errorf("%s: second rate %v %q, want 100000", k, abs.Rate, abs.RateSpec)
		}
		for _, r := range rows[1:] {
			if r.CapacityQPS != nil || r.SendLagP99Us == nil || r.StartS != 0 || r.PrefillS != 0 || !(r.LatP99Us > 0) || r.Requests <= 0 || r.Attempt != closed.Attempt {
				t.Errorf("%s at %s: capacity %v, start %v, prefill %v, p99 %v, requests %d, attempt %d", k, r.RateSpec, r.CapacityQPS, r.StartS, r.PrefillS, r.LatP99Us, r.Requests, r.Attempt)
			}
		}
	}
	// The report's latency–throughput and capacity tables, and the plot in
	// the HTML page.
	for _, s := range []string{"## Latency–throughput", "### kvstore: get", "### redis: get", "| 50% ", "| 100000 ", "| closed loop ",
		"## Capacity at p99<50ms"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the report lacks %q:\n%s", s, stdout)
		}
	}
	page, err := os.ReadFile(res.Files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "get: p99 against throughput at each rate") {
		t.Error("the HTML report has no latency-throughput plot")
	}
	// The closed loop's tables are the closed loop's alone.
	for _, s := range []string{"get at 50%", "get at 100000"} {
		if strings.Contains(stdout, "| "+s+" ") {
			t.Errorf("the report's scenario tables list %q:\n%s", s, stdout)
		}
	}
}

// TestRunRatesRefusals: bad lists are option errors naming the flag, and
// insert-only writes cannot run a curve of the set mode.
func TestRunRatesRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Rates = "0" }, "--rates"},
		{func(o *Options) { o.Rates = "-5" }, "--rates"},
		{func(o *Options) { o.Rates = "120%" }, "--rates"},
		{func(o *Options) { o.Rates = "10000," }, "--rates"},
		{func(o *Options) { o.SLO = "p99<" }, "--slo"},
		{func(o *Options) { o.SLO = "p99<1ms"; o.SLOPrecision = "0" }, "--slo-precision"},
		{func(o *Options) { o.SLOPrecision = "10%" }, "give --slo too"},
		{func(o *Options) { o.SLOMaxSteps = 4 }, "--slo-max-steps: give --slo too"},
		{func(o *Options) { o.SLO = "p99<1ms"; o.SLOMaxSteps = -1 }, "--slo-max-steps"},
		{func(o *Options) { o.Rates = "50%"; o.Workloads = []string{"ycsb-a"} }, "not workloads"},
		{func(o *Options) { o.Rates = "50%"; o.Modes = []string{"set"} }, "RSET only inserts"},
	} {
		o := planOptions()
		c.edit(&o)
		_, err := NewPlan(o)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rates %q slo %q precision %q modes %v: error %v, want ErrOptions naming %q", o.Rates, o.SLO, o.SLOPrecision, o.Modes, err, c.want)
		}
	}
	// A write command that overwrites runs the set mode's curve.
	o := planOptions()
	o.Rates, o.Modes, o.SetCmd = "50%", []string{"set"}, "SET"
	if _, err := NewPlan(o); err != nil {
		t.Errorf("--rates with --set-cmd SET: %v", err)
	}
}

// TestPlanEstimateCurve: the dry run's estimate counts the curve's phases:
// each as long as the closed loop, and the capacity search's steps.
func TestPlanEstimateCurve(t *testing.T) {
	o := planOptions()
	o.Rounds, o.Requests, o.Keyspace = 1, 400_000, 600_000
	o.Strategies, o.Modes = []string{"nopersist"}, []string{"get"}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	plain := p.Estimate()
	o.Rates = "50%,100%"
	p, err = NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	// The closed loop takes 1 s at EstimateQPS: 50% lasts 1 s (half its
	// requests), 100% 1 s.
	if got, want := p.Estimate()-plain, 2*time.Second; got != want {
		t.Errorf("the curve adds %v to the estimate, want %v", got, want)
	}
	o.Rates, o.SLO = "", "p99<1ms"
	p, err = NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Estimate()-plain, 5*time.Second; got != want {
		t.Errorf("the capacity search adds %v to the estimate, want %v (half the peak, then 4 bisections to 5%%)", got, want)
	}
	o.SLOMaxSteps = 3
	p, err = NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Estimate()-plain, 3*time.Second; got != want {
		t.Errorf("the capacity search in 3 steps adds %v to the estimate, want %v", got, want)
	}
}
