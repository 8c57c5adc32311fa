package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestEstimateCalibrated: the dry run's estimate of a small run of the
// kvstore and a 3-master Redis Cluster, made by a probe of this machine,
// is within a factor of 2 of the run's wall time, forming the cluster
// counted per shard; made from that run's detail CSV, within a factor of
// 1.5. A last run with another load calibrates nothing.
func TestEstimateCalibrated(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Rounds = []string{"kvstore", "redis-cluster"}, 1
	dry := func(o Options) (*Plan, string) {
		t.Helper()
		o.DryRun = true
		res, stdout, _, err := runQuiet(t, context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		checkClean(t, o)
		return res.Plan, stdout
	}
	clusterStep := func(p *Plan) *Scenario {
		for _, sc := range p.Scenarios {
			if sc.Desc.Kind == target.KindRedisCluster {
				return sc
			}
		}
		t.Fatal("no redis-cluster scenario")
		return nil
	}

	probed, out := dry(o)
	for _, want := range []string{"calibration kvstore (probe): set ", "calibration redis-cluster (probe): set ",
		"(forming the cluster: ", " a shard × 3)", "from a probe of this machine; retries not counted"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}

	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	var clusterStart time.Duration
	n := 0
	for _, r := range readDetail(t, res) {
		if r.StartS <= 0 || r.StopS <= 0 {
			t.Errorf("row %v: start_s %v, stop_s %v", r.Pos, r.StartS, r.StopS)
		}
		if r.Target == "redis-cluster" {
			clusterStart += seconds(r.StartS)
			n++
		}
	}
	clusterStart /= time.Duration(n)
	wall := res.Wall
	within := func(what string, est time.Duration, factor float64) {
		t.Helper()
		if float64(est) < float64(wall)/factor || float64(est) > float64(wall)*factor {
			t.Errorf("%s estimate %v, the run took %v: more than a factor of %v apart", what, est, wall, factor)
		}
	}
	fixed := o
	fixed.Estimate = EstimateFixed
	fixedPlan, _ := dry(fixed)
	t.Logf("run %v; estimates: probe %v, fixed figures %v; redis-cluster start %v", wall, probed.Estimate(), fixedPlan.Estimate(), clusterStart)
	// The probe and the run each measure what the machine gives them at
	// the time: on a busy machine they differ as much as its load does
	// (make bench-estimate sets the estimate against runs); a factor of 4
	// catches a wrong model, not noise.
	within("the probe's", probed.Estimate(), 4)
	// Forming the cluster is counted: the fixed figures' 100 ms is far
	// below what a cluster's start takes.
	if est := probed.cal["redis-cluster"].StartOf(clusterStep(probed).Target); est < clusterStart/4 {
		t.Errorf("the probe estimates a redis-cluster start of %v, the run's took %v", est, clusterStart)
	}

	last, out := dry(o)
	if !strings.Contains(out, "calibration redis-cluster (last run)") || !strings.Contains(out, "from the last run, "+res.Files.Detail) {
		t.Errorf("the plan does not say it took the last run's figures:\n%s", out)
	}
	// From the last run, the estimate is that run's own figures summed:
	// its attempts' start, prefill, measurement and stop, whatever the
	// machine's load was.
	var attempts time.Duration
	for _, r := range readDetail(t, res) {
		attempts += seconds(r.StartS + r.PrefillS + r.ElapsedS + r.StopS)
	}
	t.Logf("estimate from the last run %v, its attempts %v", last.Estimate(), attempts)
	if est := last.Estimate(); est < attempts*9/10 || est > attempts*11/10 {
		t.Errorf("the last run's estimate %v, its attempts' sum %v", est, attempts)
	}
	if est := last.cal["redis-cluster"].StartOf(clusterStep(last).Target); est < clusterStart*9/10 || est > clusterStart*11/10 {
		t.Errorf("the last run's redis-cluster start %v, its mean %v", est, clusterStart)
	}

	// Another pipeline: the last run's rates do not apply.
	o.Pipeline, o.Estimate = 16, EstimateLastRun
	_, out = dry(o)
	if strings.Contains(out, "calibration ") || !strings.Contains(out, "(assuming 400000 req/s") {
		t.Errorf("a last run at another pipeline calibrated the plan:\n%s", out)
	}
}
