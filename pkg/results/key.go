package results

// ScenarioKey names one scenario, the unit every table and comparison is
// per: a target, a strategy and the scenario's mode as Row.Scenario gives
// it (set, get, mixed; a workload's command "ycsb-a READ"; a load curve's
// phase "get at 75%"). A strategy's name is unique within its target, so
// its alloc and persistence are properties of the strategy, not parts of
// the key. The report orders scenarios by it, compare pairs the two
// sides' by it, and the history groups its series by it; the runner's
// scenarios name themselves in the same three parts.
type ScenarioKey struct {
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
}

// String is "target/strategy/mode", as tables and warnings name a
// scenario.
func (k ScenarioKey) String() string { return k.Target + "/" + k.Strategy + "/" + k.Mode }

// ScenarioKey is the key of the scenario the row measured.
func (r *Row) ScenarioKey() ScenarioKey {
	return ScenarioKey{Target: r.Target, Strategy: r.Strategy, Mode: r.Scenario()}
}
