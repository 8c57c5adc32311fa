package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
)

// A workload's rows ("kvbench run --workloads") have the mode
// results.ModeWorkload and one row per (attempt, command), plus the
// whole mix's row (results.CommandTotal). The report files each command
// as a scenario of its own, whose mode is the label "workload command"
// (workloadMode): trimming, significance, the duplicate-round check and
// the overhead tables then work per (target, strategy, workload,
// command), as for the modes. A failed attempt is listed once, by its
// total row. Rows with results.StatusUnsupported measured nothing: they
// are listed as Unsupported, neither rounds nor failed attempts.

// workloadMode is the scenario mode of a row (results.Row.Scenario).
func workloadMode(r *results.Row) string { return r.Scenario() }

// compareModes orders modes other than set, get and mixed: by name, but
// a workload's total after its commands.
func compareModes(x, y string) int {
	xw, xc, xok := cutLast(x)
	yw, yc, yok := cutLast(y)
	if xok && yok && xw == yw && (xc == results.CommandTotal) != (yc == results.CommandTotal) {
		if xc == results.CommandTotal {
			return 1
		}
		return -1
	}
	return cmp.Compare(x, y)
}

// cutLast splits s at its last space.
func cutLast(s string) (before, after string, found bool) {
	i := strings.LastIndexByte(s, ' ')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// Unsupported is a workload a target was refused: it lacks some of the
// workload's commands (the rows' status is results.StatusUnsupported).
type Unsupported struct {
	// Target and Workload name them.
	Target   string `json:"target"`
	Workload string `json:"workload"`
	// Error says which commands the target lacks (the first row's).
	Error string `json:"error"`
	// Pos is where the first such row was read.
	Pos results.Pos `json:"-"`
}

// WorkloadTable is the table of one workload: per command (and the
// mix's total), each target's strategies with their trimmed figures, the
// change from the target's baseline strategy and the ratio to the
// reference target.
type WorkloadTable struct {
	// Workload is the workload's name, as the rows give it.
	Workload string `json:"workload"`
	// Reference is the reference target of the ratios, "" when the
	// report has a single target.
	Reference string `json:"reference,omitempty"`
	// Rows are by command (the total last), then target by name, then
	// strategy in the tables' order.
	Rows []WorkloadRow `json:"rows"`
	// Unsupported lists the targets refused the workload.
	Unsupported []Unsupported `json:"unsupported,omitempty"`
	// NoReference says why there are no ratios, as in a SideBySide: the
	// reference did not run the workload (NoRefNotRun) or has no ok round
	// of it (NoRefNoRounds); "" when there are.
	NoReference string `json:"no_reference,omitempty"`
	// Latency is true when some row has a p99.
	Latency bool `json:"-"`
}

// WorkloadRow is one (command, target, strategy) of a WorkloadTable.
type WorkloadRow struct {
	// Command is the command's name in the workload, or
	// results.CommandTotal for the whole mix.
	Command string `json:"command"`
	// Target and Strategy name the scenario; Persistence is its class.
	Target      string `json:"target"`
	Strategy    string `json:"strategy"`
	Persistence string `json:"persistence,omitempty"`
	// QPS and P99Us are the scenario's trimmed figures.
	QPS   Figure `json:"trimmed_qps"`
	P99Us Figure `json:"trimmed_p99_us"`
	// Baseline is the target's baseline strategy and Change the QPS change
	// from it (the overhead tables' cell); nil for the baseline itself or
	// without one.
	Baseline string  `json:"baseline,omitempty"`
	Change   *Change `json:"qps_change,omitempty"`
	// Ratio is QPS over the reference target's, for the strategy of the
	// same persistence class (or name); nil for the reference target, or
	// when it has no such strategy.
	Ratio *Ratio `json:"qps_ratio,omitempty"`
}

// unsupported files an unsupported row, once per (target, workload).
func (b *builder) unsupported(r *results.Row, pos results.Pos) {
	if slices.ContainsFunc(b.rep.Unsupported, func(u Unsupported) bool { return u.Target == r.Target && u.Workload == r.Workload }) {
		return
	}
	b.rep.Unsupported = append(b.rep.Unsupported, Unsupported{Target: r.Target, Workload: r.Workload, Error: r.Error, Pos: pos})
}

// workloads builds one WorkloadTable per workload, by name, once the
// scenarios, overheads and the reference are known.
func (b *builder) workloads() {
	slices.SortFunc(b.rep.Unsupported, func(x, y Unsupported) int {
		return cmp.Or(cmp.Compare(x.Workload, y.Workload), cmp.Compare(x.Target, y.Target))
	})
	var names []string
	for _, t := range b.rep.Targets {
		for _, sc := range t.Scenarios {
			if sc.Workload != "" && !slices.Contains(names, sc.Workload) {
				names = append(names, sc.Workload)
			}
		}
	}
	for _, u := range b.rep.Unsupported {
		if !slices.Contains(names, u.Workload) {
			names = append(names, u.Workload)
		}
	}
	slices.Sort(names)
	targets := make(map[string]*TargetReport)
	for _, t := range b.rep.Targets {
		targets[t.Target] = t
	}
	for _, w := range names {
		tab := &WorkloadTable{Workload: w, Reference: b.rep.Reference}
		for _, u := range b.rep.Unsupported {
			if u.Workload == w {
				tab.Unsupported = append(tab.Unsupported, u)
			}
		}
		var modes []string
		for _, t := range b.rep.Targets {
			for _, m := range t.Modes {
				if sc := t.AnyScenario(m); sc != nil && sc.Workload == w && !slices.Contains(modes, m) {
					modes = append(modes, m)
				}
			}
		}
		slices.SortFunc(modes, compareModes)
		refRan, refOK := false, false
		for _, m := range modes {
			for _, t := range b.rep.Targets {
				for _, st := range t.Strategies {
					sc := t.Scenario(st, m)
					if sc == nil {
						continue
					}
					row := WorkloadRow{Command: sc.Command, Target: t.Target, Strategy: st, Persistence: sc.Persistence,
						QPS: sc.TrimmedQPS, P99Us: sc.TrimmedP99Us, Baseline: sc.Baseline, Change: sc.Change(MetricQPS)}
					tab.Latency = tab.Latency || row.P99Us.Valid()
					if t.Target == tab.Reference {
						refRan, refOK = true, refOK || len(sc.Rounds) > 0
					}
					if ref := targets[tab.Reference]; ref != nil && ref != t {
						if rs := ref.match(sc); rs != nil {
							row.Ratio = b.ratio(sc.Name()+" vs "+rs.Name(), MetricQPS, sc, rs,
								func(s *Scenario) Figure { return s.TrimmedQPS }, func(r Round) Figure { return r.QPS })
						}
					}
					tab.Rows = append(tab.Rows, row)
				}
			}
		}
		if tab.Reference != "" && !refOK {
			tab.NoReference = NoRefNotRun
			if refRan {
				tab.NoReference = NoRefNoRounds
			}
			for i := range tab.Rows {
				tab.Rows[i].Ratio = nil
			}
		}
		b.rep.Workloads = append(b.rep.Workloads, tab)
	}
}

// AnyScenario returns a scenario of the mode, of any strategy.
func (t *TargetReport) AnyScenario(mode string) *Scenario {
	for _, st := range t.Strategies {
		if sc := t.Scenario(st, mode); sc != nil {
			return sc
		}
	}
	return nil
}

// match returns t's scenario of sc's mode whose strategy has sc's
// persistence class (when exactly one has), or else sc's strategy name;
// nil when there is none.
func (t *TargetReport) match(sc *Scenario) *Scenario {
	if sc.Persistence != "" {
		var found *Scenario
		n := 0
		for _, st := range t.Strategies {
			if c := t.Scenario(st, sc.Mode); c != nil && c.Persistence == sc.Persistence {
				found, n = c, n+1
			}
		}
		if n == 1 {
			return found
		}
	}
	return t.Scenario(sc.Strategy, sc.Mode)
}
