package report

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

func TestStrategyOrder(t *testing.T) {
	five := []float64{100, 101, 102, 103, 104}
	var rows []results.Row
	for _, s := range []struct{ name, persistence string }{
		{"z_rdb", "rdb"}, {"aof_always", "always"}, {"b_everysec", "everysec"}, {"a_everysec", "everysec"},
		{"aof_no", "no"}, {"plain", "none"}, {"a_aof", "aof-rewrite"}, {"zz_none", "none"},
	} {
		rows = append(rows, fixture.Rows("t", s.name, s.persistence, "set", five...)...)
	}
	rows = append(rows, fixture.Rows("t", "plain", "none", "zscan", five...)...)
	rows = append(rows, fixture.Rows("t", "plain", "none", "get", five...)...)
	rows = append(rows, fixture.Rows("t", "plain", "none", "append", five...)...)
	for _, tt := range []struct {
		baselines map[string]string
		want      []string
	}{
		// The baseline (the first "none" by name), then none, no, everysec,
		// always, the others by persistence, then by name.
		{nil, []string{"plain", "zz_none", "aof_no", "a_everysec", "b_everysec", "aof_always", "a_aof", "z_rdb"}},
		// --baseline puts its choice first.
		{map[string]string{"t": "aof_no"}, []string{"aof_no", "plain", "zz_none", "a_everysec", "b_everysec", "aof_always", "a_aof", "z_rdb"}},
	} {
		rep, err := Build(rows, Options{Baselines: tt.baselines})
		if err != nil {
			t.Fatal(err)
		}
		tr := rep.Targets[0]
		if !slices.Equal(tr.Strategies, tt.want) {
			t.Errorf("baselines %v: strategies %q, want %q", tt.baselines, tr.Strategies, tt.want)
		}
		if want := []string{"set", "get", "append", "zscan"}; !slices.Equal(tr.Modes, want) {
			t.Errorf("modes %q, want %q", tr.Modes, want)
		}
		if got := tr.Overheads[0].Strategies; !slices.Equal(got, tt.want[1:]) {
			t.Errorf("overhead rows %q, want %q", got, tt.want[1:])
		}
	}
}

// TestFailedOrder: failed attempts are listed as the tables list their
// scenarios, then by round and attempt.
func TestFailedOrder(t *testing.T) {
	fail := func(target, strategy, persistence string, round, attempt int) results.Row {
		return results.Row{Target: target, Strategy: strategy, Persistence: persistence, Mode: "set",
			Round: round, Attempt: attempt, Status: results.StatusFailed}
	}
	rows := slices.Concat(fixture.Rows("b", "x", "no", "set", 1, 2, 3), fixture.Rows("b", "base", "none", "set", 1, 2, 3),
		fixture.Rows("a", "y", "always", "set", 1, 2, 3),
		[]results.Row{fail("b", "x", "no", 2, 2), fail("b", "x", "no", 2, 1), fail("a", "y", "always", 3, 1), fail("b", "base", "none", 1, 1)})
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Failed {
		got = append(got, f.Target+"/"+f.Strategy+" "+string(rune('0'+f.Round))+"."+string(rune('0'+f.Attempt)))
	}
	if want := []string{"a/y 3.1", "b/base 1.1", "b/x 2.1", "b/x 2.2"}; !slices.Equal(got, want) {
		t.Errorf("failed attempts %q, want %q", got, want)
	}
}
