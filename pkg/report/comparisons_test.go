package report

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// adaptiveRows are an adaptive run of set over 12 blocks: the kvstore's
// nopersist (100,000 QPS, p99 200 µs), persist_no (0.5% faster),
// persist_everysec (0.93 of nopersist, p99 1.15 times) and Redis's none
// (120,000 QPS, p99 150 µs), on a machine whose drift (±30% over the
// blocks) is ten times the differences. Both slices of persist_everysec
// in block 3 were disturbed, one by steal and other processes.
func adaptiveRows() []results.Row {
	rows := fixture.Adaptive("set", 12, []fixture.Scenario{
		{Target: "kvstore", Strategy: "nopersist", Persistence: "none", QPS: 100000, P99: 200},
		{Target: "kvstore", Strategy: "persist_no", Persistence: "no", QPS: 100500, P99: 200},
		{Target: "kvstore", Strategy: "persist_everysec", Persistence: "everysec", QPS: 93000, P99: 230},
		{Target: "redis", Strategy: "none", Persistence: "none", QPS: 120000, P99: 150},
	})
	reasons := []string{"other processes 0.85 CPUs > 0.20", "steal 0.35 CPUs > 0.10, other processes 0.40 CPUs > 0.20"}
	for i := range rows {
		if r := &rows[i]; r.Strategy == "persist_everysec" && r.Block == 3 {
			r.Disturbed, r.QPS = reasons[0], r.QPS*0.6
			reasons = reasons[1:]
		}
	}
	return rows
}

// find returns the comparison of a scenario against another in a metric.
func find(t *testing.T, rep *Report, target, strategy, against, metric string) Comparison {
	t.Helper()
	for _, c := range rep.Comparisons {
		if c.Target == target && c.Strategy == strategy && c.AgainstStrategy == against && c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no comparison of %s/%s against %s in %s among %d", target, strategy, against, metric, len(rep.Comparisons))
	return Comparison{}
}

// TestPairedComparisons: the blocks of an adaptive run are paired, so
// the machine's drift cancels: every ratio is found within a percent,
// with an interval within ±3%, and the verdicts follow (whether such
// intervals hold the truth 95% of the time is stats' coverage test); the
// disturbed slices are left out (a block without any of a side's slices
// with them) and counted by reason.
func TestPairedComparisons(t *testing.T) {
	rep, err := Build(adaptiveRows(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Adaptive || rep.Reference != "redis" {
		t.Fatalf("adaptive %v, reference %q", rep.Adaptive, rep.Reference)
	}
	for _, tt := range []struct {
		target, strategy, at, against, metric string
		want                                  float64
		verdict                               stats.Verdict
		pairs                                 int
	}{
		{"kvstore", "persist_everysec", "kvstore", "nopersist", CompareQPS, 0.93, stats.Slower, 11},
		{"kvstore", "persist_everysec", "kvstore", "nopersist", CompareP99, 1.15, stats.Slower, 11}, // a disturbed slice's p99 is left out too
		{"kvstore", "persist_no", "kvstore", "nopersist", CompareQPS, 1.005, stats.Equivalent, 12},
		{"kvstore", "nopersist", "redis", "none", CompareQPS, 100000.0 / 120000, stats.Slower, 12},
		{"kvstore", "nopersist", "redis", "none", CompareP99, 200.0 / 150, stats.Slower, 12},
	} {
		c := find(t, rep, tt.target, tt.strategy, tt.against, tt.metric)
		r := c.Ratio
		if !c.Paired || c.Measurements != tt.pairs || r.N != tt.pairs {
			t.Errorf("%s vs %s %s: paired %v, %d measurements; want paired over %d blocks", tt.strategy, tt.against, tt.metric, c.Paired, c.Measurements, tt.pairs)
		}
		if math.Abs(r.Est/tt.want-1) > 0.01 || !(r.Lo < r.Est && r.Est < r.Hi) || r.HalfWidth() > 0.03 {
			t.Errorf("%s vs %s %s = %v (±%.2f%%), want about %.4f, with an interval within ±3%%", tt.strategy, tt.against, tt.metric, r, r.HalfWidth()*100, tt.want)
		}
		if c.Verdict != tt.verdict || c.Margin != stats.DefaultPrecision || c.Confidence < 0.95 {
			t.Errorf("%s vs %s %s: verdict %s at ±%v, confidence %v; want %s", tt.strategy, tt.against, tt.metric, c.Verdict, c.Margin, c.Confidence, tt.verdict)
		}
		if c.AgainstTarget != tt.at {
			t.Errorf("%s vs %s: against target %q", tt.strategy, tt.against, c.AgainstTarget)
		}
	}
	// persist_everysec has no counterpart in Redis (no everysec
	// strategy): no comparison with the reference.
	for _, c := range rep.Comparisons {
		if c.Strategy == "persist_everysec" && c.Kind == AgainstReference {
			t.Errorf("unexpected comparison %+v", c)
		}
	}
	if len(rep.Disturbed) != 1 {
		t.Fatalf("disturbed %+v", rep.Disturbed)
	}
	d := rep.Disturbed[0]
	want := []DisturbedReason{
		{Reason: "other processes", Slices: 2, Worst: "other processes 0.85 CPUs > 0.20"},
		{Reason: "steal", Slices: 1, Worst: "steal 0.35 CPUs > 0.10"},
	}
	if d.Mode != "set" || d.Slices != 4*24 || d.Disturbed != 2 || len(d.Reasons) != 2 {
		t.Fatalf("disturbed %+v", d)
	}
	for i, w := range want {
		if g := d.Reasons[i]; g.Reason != w.Reason || g.Slices != w.Slices || g.Worst != w.Worst {
			t.Errorf("reason %d = %+v, want %+v", i, g, w)
		}
	}
	sc := rep.Targets[0].Scenario("persist_everysec", "set")
	if s := sc.Slices; s == nil || s.Slices != 22 || s.Disturbed != 2 || s.Blocks != 12 || math.Abs(float64(s.MedianQPS)/93000-1) > 0.3 {
		t.Errorf("slices %+v", sc.Slices)
	}
	// The unpaired U test of slices is not run: its verdict would
	// contradict the pairs'.
	if c := sc.Change(MetricQPS); c == nil || !math.IsNaN(float64(c.P)) || c.Significant {
		t.Errorf("persist_everysec's change %+v: want no U test", c)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w.Error(), "CV above") || strings.Contains(w.Error(), "significance test") {
			t.Errorf("warning about rounds in an adaptive run: %v", w)
		}
	}
}

// TestUnpairedComparisons: the same measurements as rounds (no blocks)
// are compared unpaired, as UnpairedRatio does: the drift then widens
// every interval past ±3%, and the 7% difference stays undecided.
func TestUnpairedComparisons(t *testing.T) {
	rows := adaptiveRows()
	for i := range rows {
		rows[i].Block, rows[i].Slice, rows[i].Disturbed = 0, 0, ""
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Adaptive || len(rep.Disturbed) != 0 {
		t.Fatalf("adaptive %v, disturbed %+v", rep.Adaptive, rep.Disturbed)
	}
	c := find(t, rep, "kvstore", "persist_everysec", "nopersist", CompareQPS)
	var x, y []float64
	for _, r := range rows {
		switch r.Strategy {
		case "persist_everysec":
			x = append(x, stats.Round2(r.QPS))
		case "nopersist":
			y = append(y, stats.Round2(r.QPS))
		}
	}
	want := stats.UnpairedRatio(y, x, stats.DefaultConfidence)
	if c.Paired || c.Ratio != want || c.Measurements != 24 {
		t.Errorf("unpaired %+v, want %+v over 24 rounds", c, want)
	}
	if c.Ratio.HalfWidth() < 0.03 || c.Verdict != stats.Undecided {
		t.Errorf("unpaired over a drifting machine: %v ±%.1f%%, %s; want wider than ±3%% and undecided", c.Ratio, c.Ratio.HalfWidth()*100, c.Verdict)
	}
}

// TestBlockLogRatios: a scenario with one slice per block against one
// with two: a block's log-ratio is the difference of the means of the
// logs, and a block where a side has no slice is left out.
func TestBlockLogRatios(t *testing.T) {
	a := []float64{90, 91, 92, 89, 90, 93, 91}
	var rows []results.Row
	var d []float64
	for b := 1; b <= len(a); b++ {
		rows = append(rows, results.Row{Target: "k", Strategy: "a", Persistence: "everysec", Mode: "get", Round: b, Block: b, Slice: 2, Status: results.StatusOK, QPS: a[b-1]})
		if b == 4 {
			continue // b has no slice in block 4
		}
		b1, b2 := 100+float64(b), 98+float64(b)
		rows = append(rows,
			results.Row{Target: "k", Strategy: "b", Persistence: "none", Mode: "get", Round: 2*b - 1, Block: b, Slice: 1, Status: results.StatusOK, QPS: b1},
			results.Row{Target: "k", Strategy: "b", Persistence: "none", Mode: "get", Round: 2 * b, Block: b, Slice: 3, Status: results.StatusOK, QPS: b2})
		d = append(d, math.Log(a[b-1])-(math.Log(b1)+math.Log(b2))/2)
	}
	rep, err := Build(rows, Options{Precision: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	c := find(t, rep, "k", "a", "b", CompareQPS)
	if want := stats.LogRatioInterval(d, stats.DefaultConfidence); c.Ratio != want || !c.Paired || c.Measurements != 6 || c.Margin != 0.05 {
		t.Errorf("got %+v, want %+v over 6 pairs", c, want)
	}
	// No latency recorded: no p99 comparison.
	if slices.ContainsFunc(rep.Comparisons, func(c Comparison) bool { return c.Metric == CompareP99 }) {
		t.Error("a p99 comparison without p99 figures")
	}
}

// TestComparisonJSON: a comparison without an interval has null bounds,
// never NaN, 0 or inf.
func TestComparisonJSON(t *testing.T) {
	rows := slices.Concat(
		fixture.Rows("k", "base", "none", "set", 100),
		fixture.Rows("k", "x", "everysec", "set", 90))
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := find(t, rep, "k", "x", "base", CompareQPS)
	if c.Verdict != stats.Undecided || c.Measurements != 1 || c.Confidence != 0 {
		t.Errorf("one round a side: %+v", c)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"target":"k","strategy":"x","mode":"set","against_target":"k","against_strategy":"base","kind":"baseline","metric":"qps","ratio":0.9000,"ratio_lo":null,"ratio_hi":null,"confidence":0,"verdict":"undecided","margin":0.03,"measurements":1,"paired":false}`
	if string(b) != want {
		t.Errorf("JSON\n got %s\nwant %s", b, want)
	}
	if _, err := Build(rows, Options{Precision: 0.7}); err == nil {
		t.Error("precision 70%: want an error")
	}
}
