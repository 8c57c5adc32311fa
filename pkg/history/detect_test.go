package history

import (
	"math/rand/v2"
	"testing"
	"time"
)

// synthetic is a series of runs of 5 rounds with 2% noise around a level
// of 100000, the level multiplied by 1+shift from run `at` on (no change
// when shift is 0).
func synthetic(rng *rand.Rand, runs, at int, shift float64) *Series {
	sr := &Series{Scenario: "kvstore/persist_no/set", Fingerprint: "synthetic"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range runs {
		level := 100000.0
		if shift != 0 && i >= at {
			level *= 1 + shift
		}
		xs := make([]float64, 5)
		for j := range xs {
			xs[j] = level * (1 + 0.02*rng.NormFloat64())
		}
		r := &Run{RunID: t0.Add(time.Duration(i) * time.Hour).Format("20060102_150405"), Started: t0.Add(time.Duration(i) * time.Hour), id: int64(i + 1)}
		sr.Points = append(sr.Points, Point{Run: r, Rounds: xs, Value: trimmedMean(xs)})
	}
	return sr
}

// TestRecall: a 5% shift (up or down) at any place of a 30-run series is
// found at least 90% of the time, right to within one run, with the
// shift's interval holding the true shift.
func TestRecall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	o, _ := AnalyzeOptions{}.normalize()
	const trials = 200
	found, right, covered, extra := 0, 0, 0, 0
	for i := range trials {
		at := 1 + rng.IntN(29) // the first run after the change: 1 … 29
		shift := 0.05
		if i%2 == 1 {
			shift = -0.05
		}
		sr := synthetic(rng, 30, at, shift)
		sr.detect(o)
		hit := false
		for _, cp := range sr.ChangePoints {
			if d := cp.Index - at; d >= -1 && d <= 1 && !hit {
				hit = true
				right++
				if want := shift * 100; cp.Lo <= want && want <= cp.Hi {
					covered++
				}
				continue
			}
			extra++
		}
		if hit {
			found++
		} else {
			t.Logf("missed: shift %+.0f%% at run %d: found %+v", shift*100, at, sr.ChangePoints)
		}
	}
	recall := float64(found) / trials
	t.Logf("recall %.1f%% (%d of %d), intervals holding the shift %d of %d, other change points %d", 100*recall, found, trials, covered, right, extra)
	if recall < 0.9 {
		t.Errorf("recall %.1f%%, want at least 90%%", 100*recall)
	}
	if extra > trials/100 {
		t.Errorf("%d change points besides the shifts in %d series", extra, trials)
	}
}

// TestFlatSeries: at most one change point in 100 series of 30 runs that
// do not change.
func TestFlatSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	o, _ := AnalyzeOptions{}.normalize()
	total := 0
	for range 100 {
		sr := synthetic(rng, 30, 0, 0)
		sr.detect(o)
		for _, cp := range sr.ChangePoints {
			t.Logf("false change point at run %d: %+.2f%% [%.2f%%, %.2f%%] p %.2g", cp.Index, cp.Pct, cp.Lo, cp.Hi, cp.P)
		}
		total += len(sr.ChangePoints)
	}
	if total > 1 {
		t.Errorf("%d change points in 100 flat series, want at most 1", total)
	}
}

// TestShortSeries: in a 12-run series, a 5% shift with 2 to 10 runs
// before it and 2 to 10 after is found at least 90% of the time.
func TestShortSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	o, _ := AnalyzeOptions{}.normalize()
	found := 0
	const trials = 100
	for i := range trials {
		at := 2 + i%9
		sr := synthetic(rng, 12, at, -0.05)
		sr.detect(o)
		for _, cp := range sr.ChangePoints {
			if d := cp.Index - at; d >= -1 && d <= 1 {
				found++
				break
			}
		}
	}
	t.Logf("found %d of %d", found, trials)
	if found < trials*9/10 {
		t.Errorf("found %d of %d shifts in 12-run series, want at least 90%%", found, trials)
	}
}
