package output

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// nodes writes the spread table of the cluster targets, if any.
func (m *md) nodes(spreads []report.NodeSpread) {
	if len(spreads) == 0 {
		return
	}
	l := m.l
	nl := &m.l.Nodes
	m.Printf("\n## %s\n\n", nl.Title)
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }
	three := func(xs []float64, f func(float64) string) string {
		return f(slices.Min(xs)) + " / " + f(stats.Median(xs)) + " / " + f(slices.Max(xs))
	}
	var rows [][]string
	for _, s := range spreads {
		rows = append(rows, []string{s.Target, s.Strategy, s.Mode, strconv.Itoa(s.Shards),
			three(s.Share, pct), three(s.P99, stats.Format2),
			fmt.Sprintf("%d: %s (%.2f×)", s.Hot, pct(s.Share[s.Hot]), s.HotRatio)})
	}
	m.Table([]string{l.Target, l.Strategy, l.Mode, nl.Shards, nl.Share, nl.P99, nl.Hottest}, "lllrrrl", rows)
	m.Printf("\n%s\n", nl.Legend)
}

// recovery writes the recovery tables, if any: one per target.
func (m *md) recovery(tabs []*report.RecoveryTable) {
	if len(tabs) == 0 {
		return
	}
	l := m.l
	rl := &m.l.Recovery
	m.Printf("\n## %s\n", rl.Title)
	for _, tab := range tabs {
		m.Printf("\n### %s\n\n", tab.Target)
		var rows [][]string
		for _, r := range tab.Rows {
			rec := r.RecoveryS.String()
			if r.Empty > 0 {
				rec = fmt.Sprintf("%s (%s: %d of %d)", rec, rl.Empty, r.Empty, r.Rounds)
				if r.Empty == r.Rounds {
					rec = rl.Empty
				}
			}
			lost := strconv.FormatInt(r.AckedLost, 10)
			if r.Broken {
				lost += " (!)"
			}
			acked, lostCell := "-", "-"
			if r.Rounds > 0 {
				acked, lostCell = strconv.FormatInt(r.AckedWrites, 10), lost
			}
			rows = append(rows, []string{r.Strategy, r.Persistence, r.Crash, strconv.Itoa(r.Rounds), rec, r.KeysPerS.String(), r.MBPerS.String(),
				acked, lostCell, r.LostWindowS.String(), r.Promise})
		}
		m.Table([]string{l.Strategy, l.Persistence, rl.Crash, rl.Rounds, rl.Recovery, rl.Keys, rl.MB, rl.Acked, rl.Lost, rl.Window, rl.Promise}, "lllrrrrrrrl", rows)
	}
	m.Printf("\n%s\n", rl.Legend)
}

// telemetry writes the server telemetry tables, if any: one per target.
func (m *md) telemetry(tabs []*report.TelemetryTable) {
	if len(tabs) == 0 {
		return
	}
	l := m.l
	tl := &m.l.Telemetry
	m.Printf("\n## %s\n", tl.Title)
	mib := func(f report.Figure) report.Figure {
		if !f.Valid() {
			return f
		}
		return report.Figure(stats.Round2(float64(f) / (1 << 20)))
	}
	for _, tab := range tabs {
		m.Printf("\n### %s\n\n", tab.Target)
		var rows [][]string
		for _, r := range tab.Rows {
			rows = append(rows, []string{r.Strategy, r.Mode, r.ClientP50Us.CSV(), r.ServerUsPerCall.CSV(),
				mib(r.UsedMemoryBytes).CSV(), mib(r.RSSBytes).CSV(), r.BytesPerKey.CSV()})
		}
		m.Table([]string{l.Strategy, l.Mode, tl.ClientP50, tl.ServerUs, tl.Used, tl.RSS, tl.PerKey}, "llrrrrr", rows)
	}
	m.Printf("\n%s\n", tl.Legend)
}

// workloadTables writes the workloads' section of the markdown.
func (m *md) workloadTables(r *report.Report) {
	if len(r.Workloads) == 0 {
		return
	}
	l := m.l
	m.Printf("\n## %s\n", l.Workloads.Title)
	for _, tab := range r.Workloads {
		if tab.Reference != "" {
			m.Printf("\n### "+l.Workloads.TableRef+"\n", tab.Workload, tab.Reference)
		} else {
			m.Printf("\n### "+l.Workloads.Table+"\n", tab.Workload)
		}
		ratios := tab.Reference != "" && tab.NoReference == ""
		switch {
		case len(tab.Rows) == 0:
		case tab.NoReference == report.NoRefNotRun:
			m.Printf("\n"+l.Side.NotRun+"\n", tab.Reference, tab.Workload)
		case tab.NoReference == report.NoRefNoRounds:
			m.Printf("\n"+l.Side.NoRounds+"\n", tab.Reference, tab.Workload)
		}
		if len(tab.Rows) > 0 {
			header := []string{l.Command, l.Target, l.Strategy, "QPS"}
			align := "lllr"
			if tab.Latency {
				header, align = append(header, l.P99), align+"r"
			}
			header, align = append(header, l.Workloads.Change), align+"r"
			if ratios {
				header, align = append(header, fmt.Sprintf(l.Workloads.Ratio, tab.Reference)), align+"r"
			}
			var rows [][]string
			for _, row := range tab.Rows {
				cmd := row.Command
				if cmd == results.CommandTotal {
					cmd = l.Workloads.Total
				}
				cells := []string{cmd, row.Target, row.Strategy, row.QPS.String()}
				if tab.Latency {
					cells = append(cells, row.P99Us.String())
				}
				change := "-"
				if row.Change != nil {
					change = row.Change.String()
				}
				cells = append(cells, change)
				if ratios {
					ratio := "-"
					if row.Target == tab.Reference && row.QPS.Valid() {
						ratio = "1.00"
					} else if row.Ratio != nil {
						ratio = row.Ratio.String()
					}
					cells = append(cells, ratio)
				}
				rows = append(rows, cells)
			}
			m.Printf("\n")
			m.Table(header, align, rows)
		}
		for _, u := range tab.Unsupported {
			m.Printf("\n"+l.Workloads.Unsupported+"\n", u.Target, render.Cell(u.Error))
		}
	}
	m.Printf("\n"+l.Workloads.Legend+"\n", r.Options.Alpha, r.Options.Alpha)
}
