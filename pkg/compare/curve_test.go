package compare

import (
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// TestCurveRates: a load curve's phases are compared rate by rate, each
// a scenario of its own beside the closed loop, though their requests
// differ (each phase lasts as long as its attempt's closed loop).
func TestCurveRates(t *testing.T) {
	edit := func(r *results.Row) {
		if r.Mode != "get" {
			return
		}
		rate := r.QPS / 2
		r.Rate, r.RateSpec, r.Requests = &rate, "50%", int64(rate)/3
	}
	closed := side(t, "old", 1, 100000, 5, nil)
	curve := side(t, "curve", 2, 100000, 5, edit)
	res, err := Compare(Options{Old: []string{closed, curve}, New: []string{closed, curve}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res.Rows {
		seen[r.ScenarioKey.String()] = true
	}
	for _, want := range []string{"kvstore/persist_everysec/get", "kvstore/persist_everysec/get at 50%"} {
		if !seen[want] {
			t.Errorf("no row of %s in %v", want, seen)
		}
	}
}
