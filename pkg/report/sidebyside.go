package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/stats"
)

// SideBySide is the table of one mode with the targets as columns: the
// rows are the durability classes (the persistence column), so each row
// sets a strategy of one target beside the strategy of the same class in
// the others, with its ratio to the reference target.
//
// Rows: one per class, in the tables' order (none, no, everysec, always,
// then the others by name). The columns that have exactly one strategy of
// a class share its row; a column with several strategies of one class
// cannot be matched, so each of them gets a row of its own, the other
// cells empty; so does a strategy without a persistence class, unless the
// other columns have a strategy of the same name. No strategy is dropped.
type SideBySide struct {
	// Mode is the workload of the table.
	Mode string `json:"mode"`
	// Reference is the name of the reference column.
	Reference string `json:"reference"`
	// Columns are the targets, by name; a target whose strategies span
	// several allocs has one column per alloc, by alloc.
	Columns []SideColumn `json:"columns"`
	// Rows are the matched strategies.
	Rows []SideRow `json:"rows"`
	// NoReference says why the table compares nothing: the reference
	// did not run the mode (NoRefNotRun) or has no ok round of it
	// (NoRefNoRounds); its column is then left out, and the table holds
	// the other targets' figures without ratios. "" when it compares.
	NoReference string `json:"no_reference,omitempty"`
	// Latency is true when some cell has a p99; CPU when some cell has a
	// QPS per server CPU-second.
	Latency bool `json:"-"`
	CPU     bool `json:"-"`
}

// SideColumn is one column of a SideBySide: a target, or one alloc of it.
type SideColumn struct {
	// Name is the target's name, or "target(alloc)".
	Name   string `json:"name"`
	Target string `json:"target"`
	Alloc  string `json:"alloc,omitempty"`
}

// SideRow is one row of a SideBySide.
type SideRow struct {
	// Persistence is the durability class ("" for a strategy that has
	// none).
	Persistence string `json:"persistence"`
	// Cells has one cell per column.
	Cells []SideCell `json:"cells"`
}

// SideCell is one strategy in a SideBySide.
type SideCell struct {
	// Strategy is the strategy; "" when the column has none in this row.
	Strategy string `json:"strategy,omitempty"`
	// QPS, P99Us and QPSPerCPU are the scenario's trimmed figures.
	QPS       Figure `json:"trimmed_qps"`
	P99Us     Figure `json:"trimmed_p99_us"`
	QPSPerCPU Figure `json:"trimmed_qps_per_server_cpu_s"`
	// QPSRatio and P99Ratio compare the cell with the row's reference
	// cell; nil for the reference column, or when the row has no
	// reference cell.
	QPSRatio *Ratio `json:"qps_ratio,omitempty"`
	P99Ratio *Ratio `json:"p99_ratio,omitempty"`
}

// The reasons of SideBySide.NoReference.
const (
	// NoRefNotRun: the reference has no scenario of the mode.
	NoRefNotRun = "not_run"
	// NoRefNoRounds: the reference's scenarios of the mode have no ok
	// round (every attempt failed).
	NoRefNoRounds = "no_ok_round"
)

// reference is the reference target: Options.Reference, else redis when
// present, else the first target by name.
func (b *builder) reference() (string, error) {
	var names []string
	for _, t := range b.rep.Targets {
		names = append(names, t.Target)
	}
	if ref := b.opts.Reference; ref != "" {
		if !slices.Contains(names, ref) {
			return "", fmt.Errorf("%w: reference %q: no such target (the rows have %s)", ErrFormat, ref, strings.Join(names, ", "))
		}
		return ref, nil
	}
	if slices.Contains(names, DefaultReference) {
		return DefaultReference, nil
	}
	return names[0], nil
}

// DefaultReference is the reference target when it is present and none is
// chosen.
const DefaultReference = "redis"

// sideBySide builds the side-by-side tables, one per mode, when the report
// has two targets or more; the workloads' commands are compared in their
// own tables (workloads).
func (b *builder) sideBySide() error {
	if len(b.rep.Targets) < 2 {
		return nil
	}
	ref, err := b.reference()
	if err != nil {
		return err
	}
	b.rep.Reference = ref

	var cols []SideColumn
	var all []string
	for _, t := range b.rep.Targets { // by name
		for _, m := range t.Modes {
			if !b.wlModes[m] { // the workloads have tables of their own
				all = append(all, m)
			}
		}
		var allocs []string
		for _, st := range t.Strategies {
			if a := t.info[st].alloc; !slices.Contains(allocs, a) {
				allocs = append(allocs, a)
			}
		}
		slices.Sort(allocs)
		for _, a := range allocs {
			c := SideColumn{Name: t.Target, Target: t.Target}
			if t.MultiAlloc {
				c.Alloc = a
				if a != "" {
					c.Name += "(" + a + ")"
				}
			}
			cols = append(cols, c)
		}
	}
	refName := cols[slices.IndexFunc(cols, func(c SideColumn) bool { return c.Target == ref })].Name
	targets := make(map[string]*TargetReport)
	for _, t := range b.rep.Targets {
		targets[t.Target] = t
	}
	// has reports whether a column has a scenario of a mode.
	has := func(c SideColumn, mode string) bool {
		t := targets[c.Target]
		return slices.ContainsFunc(t.Strategies, func(st string) bool {
			return t.Scenario(st, mode) != nil && (!t.MultiAlloc || t.info[st].alloc == c.Alloc)
		})
	}

	for _, mode := range OrderModes(slices.Compact(slices.Sorted(slices.Values(all)))) {
		// The columns of the mode: the reference's, and those with a
		// scenario of the mode.
		tab := &SideBySide{Mode: mode, Reference: refName}
		for _, c := range cols {
			if c.Name == refName || has(c, mode) {
				tab.Columns = append(tab.Columns, c)
			}
		}
		cols := tab.Columns
		refCol := slices.IndexFunc(cols, func(c SideColumn) bool { return c.Name == refName })
		// The strategies of each column by key: the class, or the
		// strategy's name when it has none.
		type key struct{ persistence, name string }
		byKey := make(map[key][][]string) // key → per column, strategies
		for i, c := range cols {
			t := targets[c.Target]
			for _, st := range t.Strategies {
				info := t.info[st]
				if t.Scenario(st, mode) == nil || t.MultiAlloc && info.alloc != c.Alloc {
					continue
				}
				k := key{persistence: info.persistence}
				if k.persistence == "" {
					k.name = st
				}
				if byKey[k] == nil {
					byKey[k] = make([][]string, len(cols))
				}
				byKey[k][i] = append(byKey[k][i], st)
			}
		}
		keys := make([]key, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		rank := func(p string) int {
			if p == "" {
				return len(persistenceOrder) + 1
			}
			if i := slices.Index(persistenceOrder, p); i >= 0 {
				return i
			}
			return len(persistenceOrder)
		}
		slices.SortFunc(keys, func(x, y key) int {
			return cmp.Or(cmp.Compare(rank(x.persistence), rank(y.persistence)),
				cmp.Compare(x.persistence, y.persistence), cmp.Compare(x.name, y.name))
		})
		for _, k := range keys {
			shared := SideRow{Persistence: k.persistence, Cells: make([]SideCell, len(cols))}
			var own []SideRow
			for i, sts := range byKey[k] {
				switch len(sts) {
				case 0:
				case 1:
					shared.Cells[i].Strategy = sts[0]
				default:
					for _, st := range sts {
						r := SideRow{Persistence: k.persistence, Cells: make([]SideCell, len(cols))}
						r.Cells[i].Strategy = st
						own = append(own, r)
					}
				}
			}
			if slices.ContainsFunc(shared.Cells, func(c SideCell) bool { return c.Strategy != "" }) {
				tab.Rows = append(tab.Rows, shared)
			}
			tab.Rows = append(tab.Rows, own...)
		}
		for ri := range tab.Rows {
			b.sideRow(tab, &tab.Rows[ri], refCol, targets)
		}
		noReference(tab, refCol, targets)
		b.rep.SideBySide = append(b.rep.SideBySide, tab)
	}
	return nil
}

// noReference finds a table whose reference column has nothing to compare
// with, not a single ok round of the mode, and then leaves that column
// out (and its rows, and the ratios), saying why: a column of "-" would
// read as figures missing without a reason.
func noReference(tab *SideBySide, refCol int, targets map[string]*TargetReport) {
	ran := false
	for _, row := range tab.Rows {
		c := row.Cells[refCol]
		if c.Strategy == "" {
			continue
		}
		ran = true
		if sc := targets[tab.Columns[refCol].Target].Scenario(c.Strategy, tab.Mode); len(sc.Rounds) > 0 {
			return
		}
	}
	tab.NoReference = NoRefNotRun
	if ran {
		tab.NoReference = NoRefNoRounds
	}
	tab.Columns = slices.Delete(tab.Columns, refCol, refCol+1)
	rows := tab.Rows[:0]
	for _, row := range tab.Rows {
		row.Cells = slices.Delete(row.Cells, refCol, refCol+1)
		if !slices.ContainsFunc(row.Cells, func(c SideCell) bool { return c.Strategy != "" }) {
			continue
		}
		for i := range row.Cells {
			row.Cells[i].QPSRatio, row.Cells[i].P99Ratio = nil, nil
		}
		rows = append(rows, row)
	}
	tab.Rows = rows
}

// sideRow fills a row's figures and its ratios to the reference cell.
func (b *builder) sideRow(tab *SideBySide, row *SideRow, refCol int, targets map[string]*TargetReport) {
	scenarios := make([]*Scenario, len(row.Cells))
	for i := range row.Cells {
		c := &row.Cells[i]
		c.QPS, c.P99Us, c.QPSPerCPU = missing, missing, missing
		if c.Strategy == "" {
			continue
		}
		sc := targets[tab.Columns[i].Target].Scenario(c.Strategy, tab.Mode)
		scenarios[i] = sc
		c.QPS, c.P99Us, c.QPSPerCPU = sc.TrimmedQPS, sc.TrimmedP99Us, sc.TrimmedQPSPerCPU
		tab.Latency = tab.Latency || c.P99Us.Valid()
		tab.CPU = tab.CPU || c.QPSPerCPU.Valid()
	}
	ref := scenarios[refCol]
	if ref == nil {
		return
	}
	for i := range row.Cells {
		sc := scenarios[i]
		if sc == nil || i == refCol {
			continue
		}
		subject := sc.Name() + " vs " + ref.Name()
		row.Cells[i].QPSRatio = b.ratio(subject, MetricQPS, sc, ref,
			func(s *Scenario) Figure { return s.TrimmedQPS }, func(r Round) Figure { return r.QPS })
		row.Cells[i].P99Ratio = b.ratio(subject, MetricP99, sc, ref,
			func(s *Scenario) Figure { return s.TrimmedP99Us }, func(r Round) Figure { return r.P99Us })
	}
}

// ratio compares one metric of a scenario with the reference's: the ratio
// of the trimmed figures as displayed, the verdict from all ok rounds.
func (b *builder) ratio(subject, metric string, sc, ref *Scenario, trimmed func(*Scenario) Figure, round func(Round) Figure) *Ratio {
	r := &Ratio{Ratio: missing, P: Prob(math.NaN())}
	if sc.RefusedRounds > 0 || ref.RefusedRounds > 0 {
		r.Refused = true
		return r
	}
	x, y := trimmed(sc), trimmed(ref)
	if !x.Valid() || !y.Valid() || y == 0 {
		return r
	}
	r.Ratio = fig(float64(x) / float64(y))
	if sc.Slices != nil || ref.Slices != nil {
		return r // slices are compared in pairs (comparisons.go), not by the U test of rounds
	}
	r.P, r.Significant = b.test(subject, metric, b.sorted(sc, metric, round), b.sorted(ref, metric, round))
	return r
}

// test is the two-sided Mann–Whitney U test of two sorted samples at the
// report's α: the p-value (NaN when a sample is empty) and whether it is
// significant. What keeps the test from deciding is filed as a warning
// about subject.
func (b *builder) test(subject, metric string, x, y []float64) (Prob, bool) {
	if len(x) == 0 || len(y) == 0 {
		return Prob(math.NaN()), false
	}
	v := stats.Compare(x, y, b.opts.Alpha)
	significant := v.Significant()
	if len(v.Warnings) == 0 {
		return Prob(v.P), significant
	}
	switch need := stats.SignificanceRounds(b.opts.Alpha); {
	case x[0] == x[len(x)-1] && y[0] == y[len(y)-1] && x[0] == y[0]:
		// The U test cannot rank samples that are all one value.
		b.warn(WarnTestTies, Subject{Name: subject, Value: metric})
	case !significant && len(x) < need && len(y) < need:
		b.warn(WarnTestPower, Subject{Name: subject})
	default:
		for _, w := range v.Warnings {
			b.warnOther("significance test: "+w.Error(), subject)
		}
	}
	return Prob(v.P), significant
}
