package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/curve"
)

// TestBenchCurve: --rates and --slo against redis-server: the JSON keeps
// the run's fields and gains the curve, one point per rate with the
// relative ones resolved against the peak, and the capacity; a rate one
// connection at pipeline 1 cannot send is flagged, not held.
func TestBenchCurve(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--mode", "get", "--prefill", "--keyspace", "2000",
		"--requests", "4000", "--connections", "4", "--pipeline", "1", "--threads", "1", "--seed", "1",
		"--rates", "25%,50%,10000000", "--slo", "p99<50ms", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct {
		Requests int64   `json:"requests"`
		QPS      float64 `json:"qps"`
		Curve    []struct {
			Rate, QPS    float64
			Latency      map[string]float64 `json:"latency_us"`
			SendLagP99Us *float64           `json:"send_lag_p99_us"`
			Kept, Held   bool
		} `json:"curve"`
		Capacity *struct {
			QPS        *float64   `json:"qps"`
			SLO        string     `json:"slo"`
			Bracket    [2]float64 `json:"bracket"`
			Steps      int        `json:"steps"`
			ClosedLoop bool       `json:"closed_loop"`
			Why        string     `json:"why"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if doc.QPS <= 0 || doc.Requests != 4000 || len(doc.Curve) != 3 {
		t.Fatalf("peak %.0f req/s over %d requests, %d points:\n%s", doc.QPS, doc.Requests, len(doc.Curve), stdout)
	}
	for i, frac := range []float64{0.25, 0.5} {
		p := doc.Curve[i]
		if p.Rate != frac*doc.QPS || p.SendLagP99Us == nil || p.Latency["p99"] <= 0 || p.Latency["p999"] < p.Latency["p99"] {
			t.Errorf("point %d: %+v; want rate %.0f with its latencies", i, p, frac*doc.QPS)
		}
	}
	if p := doc.Curve[2]; p.Rate != 1e7 || p.Held || p.Kept {
		t.Errorf("10,000,000 req/s over 4 connections at pipeline 1: %+v; want flagged neither held nor kept", p)
	}
	// The closed loop meets so loose an objective: the capacity is its
	// rate, found without an open-loop step; else a search of at most the
	// default steps, ending with a figure or saying why not.
	c := doc.Capacity
	switch {
	case c == nil || c.SLO != "p99<50ms" || c.Steps > curve.DefaultMaxSteps:
		t.Errorf("capacity %+v (peak %.0f)", c, doc.QPS)
	case c.ClosedLoop:
		if c.Steps != 0 || c.QPS == nil || *c.QPS != doc.QPS || c.Why != "" {
			t.Errorf("capacity %+v from the closed loop: want the peak %.0f and no step", c, doc.QPS)
		}
	case c.QPS == nil:
		if c.Why == "" || c.Steps < 1 {
			t.Errorf("no capacity and no why: %+v", c)
		}
	default:
		if c.Steps < 1 || *c.QPS <= 0 || *c.QPS > doc.QPS || *c.QPS != c.Bracket[0] {
			t.Errorf("capacity %+v (peak %.0f)", c, doc.QPS)
		}
	}
}

// TestBenchCurveUsageErrors: bad lists and objectives, and what --rates
// cannot run with, are usage errors naming the flag.
func TestBenchCurveUsageErrors(t *testing.T) {
	for _, tc := range slices.Concat(curveFlagErrors, []curveFlagError{
		{[]string{"--rates", "50%", "--rate", "1000"}, "--rate and --rates"},
		{[]string{"--rates", "50%", "--tests", "get"}, "--tests"},
		{[]string{"--rates", "50%", "--mode", "set", "--set-cmd", "RSET"}, "RSET only inserts"},
		{[]string{"--slo", "p99<1ms", "--segment", "0/2"}, "--segment"},
	}) {
		code, _, stderr := execute(t, append([]string{"bench", "--port", "1"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// curveFlagError is a curve flag's bad value and what its error names.
type curveFlagError struct {
	args []string
	want string
}

// curveFlagErrors are the bad rate lists and objectives that bench and
// run refuse alike.
var curveFlagErrors = []curveFlagError{
	{[]string{"--rates", "0"}, "--rates"},
	{[]string{"--rates", "-5"}, "--rates"},
	{[]string{"--rates", "120%"}, "above the closed-loop peak"},
	{[]string{"--rates", "1,,2"}, "--rates"},
	{[]string{"--slo", "p99<"}, "--slo"},
	{[]string{"--slo", "p97<1ms"}, "unknown statistic"},
	{[]string{"--slo", "p99<1ms", "--slo-precision", "0"}, "--slo-precision"},
	{[]string{"--slo-precision", "10%"}, "give --slo too"},
	{[]string{"--slo-max-steps", "4"}, "--slo-max-steps: give --slo too"},
	{[]string{"--slo", "p99<1ms", "--slo-max-steps", "-1"}, "--slo-max-steps -1"},
	{[]string{"--slo", "p99<1ms", "--slo-max-steps", "65"}, "--slo-max-steps 65"},
}
