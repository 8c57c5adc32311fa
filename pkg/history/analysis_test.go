package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// recordSynthetic records runs of two scenarios, 5 rounds each at 2%
// noise: set drops 10% from run drop on, get stays flat; from run move on
// both run on another machine.
func recordSynthetic(t testing.TB, s *Store, runs, drop, move int) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		id := t0.Add(time.Duration(i) * time.Hour).Format("20060102_150405")
		rec := s.NewRecorder(RunInfo{Label: fmt.Sprintf("build%d", i), Commit: fmt.Sprintf("c%04d", i)})
		if err := rec.BeginRun(ctx, id, t0.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		for round := 1; round <= 5; round++ {
			for _, mode := range []string{"set", "get"} {
				level := 100000.0
				if mode == "set" && i >= drop {
					level *= 0.9
				}
				row := testAttempt(id, round, level*(1+0.02*rng.NormFloat64()))[0]
				row.Mode = mode
				if i >= move {
					row.CPUModel = "Other CPU"
				}
				if err := rec.Attempt(ctx, []results.Row{row}, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := rec.Finish(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckAndTrend: on both stores, a 10% drop is found at its run and
// fails a 5% gate; a change of machine is a new series, not a change
// point; trend's formats say the same.
func TestCheckAndTrend(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		recordSynthetic(t, s, 30, 15, 5)
		a, err := s.Analyze(ctx, AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Series) != 4 {
			t.Fatalf("%d series, want 4 (2 scenarios × 2 machines)", len(a.Series))
		}
		res, err := a.Check(5)
		if !errors.Is(err, ErrRegression) {
			t.Fatalf("check with a 5%% gate: %v, want ErrRegression", err)
		}
		if len(res.Findings) != 1 {
			t.Fatalf("findings %+v, want the drop alone", res.Findings)
		}
		f := res.Findings[0]
		if f.Scenario != "kvstore/persist_everysec/set" || f.After.Label != "build15" || f.Before.Label != "build14" || !f.Gate || !f.Regression ||
			f.Pct > -8 || f.Pct < -12 || !(f.Lo < -10 && -10 < f.Hi) {
			t.Errorf("finding %+v", f)
		}
		if f.Verdict != stats.Slower {
			t.Errorf("a 10%% drop in QPS: verdict %s, want slower", f.Verdict)
		}
		if len(res.Breaks) != 2 {
			t.Errorf("environment changes %+v, want one per scenario", res.Breaks)
		}
		if len(res.Breaks) == 2 && res.Breaks[0].First.Label != "build5" {
			t.Errorf("the new machine's first run %s, want build5", res.Breaks[0].First.Label)
		}
		if _, err := a.Check(15); err != nil {
			t.Errorf("a 15%% gate fails on a 10%% drop: %v", err)
		}
		var text bytes.Buffer
		if err := res.Write(&text, render.Text); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"kvstore/persist_everysec/set: qps -", "from build14 c0014 (20261101_140000) to build15 c0015 (20261101_150000)",
			", slower, regression !", "new environment", "cpu_model: Test CPU → Other CPU", "Gate: the newest runs of 1 series"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("check's text lacks %q:\n%s", want, text.String())
			}
		}
		for format, verdict := range map[render.Format]string{render.Markdown: "| slower", render.CSV: ",slower\n", render.JSON: `"verdict": "slower"`} {
			var b bytes.Buffer
			if err := res.Write(&b, format); err != nil || !strings.Contains(b.String(), "build15") || !strings.Contains(b.String(), verdict) {
				t.Errorf("check --format %s: %v; want build15 and %q\n%s", format, err, verdict, b.String())
			}
		}
		for _, format := range []render.Format{render.Markdown, render.CSV, render.JSON, render.HTML} {
			var b bytes.Buffer
			if err := a.WriteTrend(&b, format); err != nil {
				t.Fatalf("trend --format %s: %v", format, err)
			}
			if !strings.Contains(b.String(), "build15") {
				t.Errorf("trend --format %s lacks the runs", format)
			}
			if format == render.HTML && strings.Count(b.String(), "<svg") != 4 {
				t.Errorf("trend html: %d plots, want one per series", strings.Count(b.String(), "<svg"))
			}
		}
	})
}

// TestPrune: a dry run deletes nothing; --keep and --older-than delete
// the runs they say with their rows, and the environments left unused.
func TestPrune(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		recordSynthetic(t, s, 12, 100, 6)
		now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) // runs at 0:00 … 11:00
		dry, err := s.Prune(ctx, PruneOptions{Keep: 4, DryRun: true})
		if err != nil || len(dry.Runs) != 8 {
			t.Fatalf("dry run: %v, %d runs", err, len(dry.Runs))
		}
		if n := count(t, s, "runs"); n != 12 {
			t.Fatalf("a dry run deleted runs: %d left", n)
		}
		res, err := s.Prune(ctx, PruneOptions{OlderThan: 9 * time.Hour, Keep: 8, Now: now})
		if err != nil || len(res.Runs) != 3 { // 0:00, 1:00 and 2:00 are older and not among the newest 8
			t.Fatalf("prune: %v, %d runs, want 3", err, len(res.Runs))
		}
		res, err = s.Prune(ctx, PruneOptions{Keep: 4, Now: now})
		if err != nil || len(res.Runs) != 5 {
			t.Fatalf("prune --keep 4: %v, %d runs", err, len(res.Runs))
		}
		if n := count(t, s, "runs"); n != 4 {
			t.Errorf("%d runs left, want 4", n)
		}
		if n := count(t, s, "detail"); n != 40 {
			t.Errorf("%d detail rows left, want 40", n)
		}
		if n := count(t, s, "environments"); n != 1 {
			t.Errorf("%d environments left, want the newest machine's", n)
		}
	})
}

// TestGateCurrentSeries: a regression of a machine left behind does not
// fail the gate: the newest runs are on the new machine.
func TestGateCurrentSeries(t *testing.T) {
	s := openSQLite(t)
	recordSynthetic(t, s, 30, 15, 25)
	a, err := s.Analyze(context.Background(), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Check(5)
	if err != nil || len(res.Findings) != 1 || res.Findings[0].Gate {
		t.Errorf("check: %v, findings %+v; want the drop found, the gate passed", err, res.Findings)
	}
}

// TestDisturbedSlicesLeftOut: a disturbed slice of an adaptive run is not
// among a run's rounds in the analysis, as the report leaves it out of
// its comparisons; the run's other slices are.
func TestDisturbedSlicesLeftOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx := context.Background()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rec := s.NewRecorder(RunInfo{Label: "adaptive"})
		if err := rec.BeginRun(ctx, "20261101_000000", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		for slice := 1; slice <= 6; slice++ {
			row := testAttempt("20261101_000000", slice, 100000)[0]
			row.Block, row.Slice = (slice+1)/2, 1+(slice+1)%2
			if slice == 4 {
				row.Disturbed, row.QPS = "steal 0.50 CPUs > 0.10", 50000
			}
			if err := rec.Attempt(ctx, []results.Row{row}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Finish(ctx, false); err != nil {
			t.Fatal(err)
		}
		a, err := s.Analyze(ctx, AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Series) != 1 || len(a.Series[0].Points) != 1 {
			t.Fatalf("series %+v", a.Series)
		}
		if p := a.Series[0].Points[0]; len(p.Rounds) != 5 || p.Value != 100000 {
			t.Errorf("the run's rounds %v (value %v): want the 5 undisturbed slices at 100000", p.Rounds, p.Value)
		}
	})
}
