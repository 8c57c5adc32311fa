package results

import "testing"

// TestScenarioKey: a row's key holds the scenario's mode as reports name
// it, a workload's command and a load curve's rate included.
func TestScenarioKey(t *testing.T) {
	rate := 20000.0
	for _, tt := range []struct {
		row  Row
		want string
	}{
		{Row{Target: "kvstore", Strategy: "nopersist", Mode: "set"}, "kvstore/nopersist/set"},
		{Row{Target: "redis", Strategy: "none", Mode: ModeWorkload, Workload: "ycsb-a", Command: "READ"}, "redis/none/ycsb-a READ"},
		{Row{Target: "redis", Strategy: "none", Mode: "get", RateSpec: "75%"}, "redis/none/get at 75%"},
		{Row{Target: "redis", Strategy: "none", Mode: "get", Rate: &rate}, "redis/none/get at 20000/s"},
	} {
		k := tt.row.ScenarioKey()
		if got := k.String(); got != tt.want {
			t.Errorf("%+v: key %q, want %q", tt.row, got, tt.want)
		}
		if k.Target != tt.row.Target || k.Strategy != tt.row.Strategy || k.Mode != tt.row.Scenario() {
			t.Errorf("key %+v of %+v", k, tt.row)
		}
	}
}
