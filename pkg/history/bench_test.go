package history

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// benchRows are runs × scenarios × 5 rounds of detail rows, each with a
// histogram, each scenario's level shifting by ±5% at three places.
func benchRows(runs, scenarios int) []results.Row {
	rng := rand.New(rand.NewPCG(11, 12))
	hist := testAttempt("x", 1, 1)[0].LatencyHist
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	shifts := make([][]int, scenarios)
	for s := range shifts {
		shifts[s] = []int{rng.IntN(runs), rng.IntN(runs), rng.IntN(runs)}
	}
	var rows []results.Row
	for i := range runs {
		id := t0.Add(time.Duration(i) * time.Hour).Format("20060102_150405")
		for s := range scenarios {
			level := 100000.0
			for k, at := range shifts[s] {
				if i >= at {
					level *= 1 + 0.05*float64(1-2*(k%2))
				}
			}
			for round := 1; round <= 5; round++ {
				r := testAttempt(id, round, level*(1+0.02*rng.NormFloat64()))[0]
				r.StartedAt = t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)
				r.Strategy = fmt.Sprintf("strategy%d", s/2)
				r.Mode = []string{"set", "get"}[s%2]
				r.LatencyHist = hist
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// writeBenchCSV writes rows as a detail CSV and returns its path.
func writeBenchCSV(b *testing.B, rows []results.Row) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "kvbench_detail_bench.csv")
	w, err := results.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkImport: importing a detail CSV of 100,000 rows (2,000 runs of
// 10 scenarios × 5 rounds, each row with its histogram) into a new
// SQLite store.
func BenchmarkImport(b *testing.B) {
	path := writeBenchCSV(b, benchRows(2000, 10))
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Import(ctx, []string{path}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(100000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// benchStore is a SQLite store of 1,000 runs of 12 scenarios.
func benchStore(b *testing.B) *Store {
	b.Helper()
	path := writeBenchCSV(b, benchRows(1000, 12))
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.Import(ctx, []string{path}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkTrend and BenchmarkCheck: "history trend" (md) and "history
// check" over 1,000 runs of 12 scenarios, 5 rounds each: reading the
// store, the change points of every series, the output.
func BenchmarkTrend(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		a, err := s.Analyze(ctx, AnalyzeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := a.WriteTrend(&out, render.Markdown); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	cps := 0
	for b.Loop() {
		a, err := s.Analyze(ctx, AnalyzeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		res, _ := a.Check(5)
		var out bytes.Buffer
		if err := res.Write(&out, render.Text); err != nil {
			b.Fatal(err)
		}
		cps = len(res.Findings)
	}
	b.ReportMetric(float64(cps), "change-points")
}

// BenchmarkRecording: what recording adds to a run of kvbench run's
// defaults (60 attempts: 2 targets × 3 strategies × 2 modes × 5 rounds):
// opening a store that holds 100 runs, the run, its attempts one
// transaction each, its end, closing.
func BenchmarkRecording(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "h.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Import(ctx, []string{writeBenchCSV(b, benchRows(100, 12))}); err != nil {
		b.Fatal(err)
	}
	s.Close()
	attempts := benchRows(1, 12)[:60]
	n := 0
	for b.Loop() {
		n++
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		rec := s.NewRecorder(RunInfo{Label: "bench"})
		if err := rec.BeginRun(ctx, fmt.Sprintf("bench_%d", n), time.Now()); err != nil {
			b.Fatal(err)
		}
		for i := range attempts {
			if err := rec.Attempt(ctx, attempts[i:i+1], nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := rec.Finish(ctx, false); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
