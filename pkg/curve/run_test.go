package curve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
)

// TestRun: Run measures the closed-loop peak itself when a rate is
// relative (and not when the caller gives it), each rate's phase as long
// as the peak lasted, then the capacity search; each phase's config is
// PhaseConfig's.
func TestRun(t *testing.T) {
	addr := slowServer(t, 20*time.Microsecond)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.SetCmd = addr, loadgen.ModeSet, "SET"
	cfg.Connections, cfg.Threads, cfg.Pipeline, cfg.Requests, cfg.Keyspace, cfg.Interval = 4, 1, 4, 3000, 3000, 0
	spec, err := ParseSpec("50%", "p99<1s", "25%", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ran []loadgen.Config
	run := func(ctx context.Context, c loadgen.Config) (loadgen.Result, error) {
		ran = append(ran, c)
		return loadgen.Run(ctx, c)
	}
	c, err := Run(context.Background(), spec, cfg, nil, run)
	if err != nil {
		t.Fatal(err)
	}
	if c.Peak == nil || len(c.Points) != 1 || c.Capacity == nil || len(ran) != 2+len(c.Capacity.Steps) {
		t.Fatalf("curve %+v after %d phases", c, len(ran))
	}
	if ran[0].Rate != 0 || ran[0].Requests != cfg.Requests {
		t.Errorf("the peak ran at rate %g with %d requests, want a closed loop of %d", ran[0].Rate, ran[0].Requests, cfg.Requests)
	}
	want := PhaseConfig(cfg, c.Peak.QPS/2, c.Peak.Elapsed)
	if p := c.Points[0]; p.Rate != want.Rate || ran[1].Requests != want.Requests || p.Result.Requests != want.Requests {
		t.Errorf("point %+v, phase of %d requests, want %g req/s for %d", p.Rate, ran[1].Requests, want.Rate, want.Requests)
	}
	if c.Capacity.SLO.String() != "p99<1s" || c.Capacity.QPS <= 0 {
		t.Errorf("capacity %+v", c.Capacity)
	}

	// Given the peak (kvbench run's closed loop), Run does not measure it.
	ran = nil
	peak := *c.Peak
	spec.SLO = nil
	c, err = Run(context.Background(), spec, cfg, &peak, run)
	if err != nil || c.Peak != nil || len(ran) != 1 || ran[0].Rate != peak.QPS/2 {
		t.Errorf("with the peak given: %v, %+v after %d phases", err, c, len(ran))
	}
}

// TestCapacityOfRedis: against redis-server, the capacity at an objective
// its closed loop meets is at least the closed loop's rate, found
// without an open-loop phase; a search asked for more steps than allowed
// is refused by its flag.
func TestCapacityOfRedis(t *testing.T) {
	srv := testutil.StartRedis(t, "--save", "", "--appendonly", "no")
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode = srv.Addr, loadgen.ModeSet
	cfg.Connections, cfg.Threads, cfg.Pipeline, cfg.Requests, cfg.Keyspace, cfg.Interval = 4, 1, 4, 20_000, 20_000, 0
	spec, err := ParseSpec("", "p99<5s", "", 3)
	if err != nil || spec.MaxSteps != 3 {
		t.Fatalf("spec %+v: %v", spec, err)
	}
	var phases []float64
	run := func(ctx context.Context, c loadgen.Config) (loadgen.Result, error) {
		phases = append(phases, c.Rate)
		return loadgen.Run(ctx, c)
	}
	c, err := Run(context.Background(), spec, cfg, nil, run)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.SLO.Met(c.Peak.Latency) {
		t.Fatalf("closed loop p99 %.0f us: the objective %s is not loose enough", c.Peak.Latency.P99, spec.SLO)
	}
	if k := c.Capacity; k == nil || k.QPS < c.Peak.QPS || !k.ClosedLoop || len(k.Steps) != 0 || len(phases) != 1 {
		t.Errorf("capacity %+v after phases at %v; want at least the closed loop's %.0f req/s, from it alone", k, phases, c.Peak.QPS)
	}
	for _, n := range []int{-1, MostSteps + 1} {
		if _, err := ParseSpec("", "p99<1ms", "", n); err == nil || !strings.Contains(err.Error(), "--slo-max-steps") {
			t.Errorf("--slo-max-steps %d: %v", n, err)
		}
	}
}
