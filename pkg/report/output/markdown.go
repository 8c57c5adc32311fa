package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Markdown writes the report as markdown: the settings, the targets side
// by side and the workloads' tables; per target the raw rounds, the
// trimmed figures, the overhead against the baseline with significance
// verdicts, the spread of the rounds and (when measured) latencies; the
// other tables the rows hold; then the failed attempts and the warnings.
// Headings are in the report's language (Options.Lang).
func Markdown(r *report.Report, w io.Writer) error {
	m := newMD(r, w)
	mdHead(r, m, true)
	mdBody(r, m)
	return m.Err()
}

// newMD is a markdown writer in the report's language.
func newMD(r *report.Report, w io.Writer) *md {
	return &md{Doc: render.NewDoc(w), l: render.LabelsOf(r.Options.Lang)}
}

// mdHead writes the markdown's head: the title, the settings, the
// trimming rule, the chart's link (with link), the flushed note and the
// side-by-side tables.
func mdHead(r *report.Report, m *md, link bool) {
	l := m.l
	m.Printf("# %s\n", l.Title)
	if lines := settingLines(r, l); len(lines) > 0 {
		m.Printf("\n%s\n\n", l.Settings.Intro)
		for _, line := range lines {
			m.Printf("- %s\n", line)
		}
	}
	if r.Adaptive {
		m.Printf("\n%s\n", l.Compare.Rule)
	} else {
		m.Printf("\n%s\n", l.Rule)
	}
	if link && r.Options.ChartLink != "" {
		m.Printf("\n![%s](%s)\n", l.Chart, r.Options.ChartLink)
	}
	if len(r.Flushed) > 0 {
		m.Printf("\n"+l.Flushed+"\n", strings.Join(r.Flushed, ", "))
	}
	if r.Adaptive {
		// The comparisons carry the overheads and the ratios to the
		// reference, paired: the side-by-side and workload tables'
		// unpaired verdicts are not printed beside them.
		m.comparisons(r) // comparisons.go
		return
	}
	if len(r.SideBySide) > 0 {
		m.Printf("\n## %s\n", l.Side.Title)
		cpu := false
		for _, tab := range r.SideBySide {
			m.sideBySide(tab)
			cpu = cpu || tab.CPU
		}
		m.Printf("\n"+l.Side.Legend, r.SideBySide[0].Reference, r.Options.Alpha, r.Options.Alpha)
		if cpu {
			m.Printf(" %s", l.Side.LegendCPU)
		}
		m.Printf("\n")
	}
	m.workloadTables(r)
}

// mdBody writes the rest of the markdown: the targets' sections, the
// failed attempts and the warnings.
func mdBody(r *report.Report, m *md) {
	l := m.l
	for _, t := range r.Targets {
		if r.Adaptive {
			m.slices(t) // comparisons.go
		} else {
			m.target(t, r.Options)
		}
	}
	m.nodes(r.Nodes)         // sections.go
	m.stalls(r)              // series.go
	m.curves(r)              // curve.go
	m.telemetry(r.Telemetry) // sections.go
	m.recovery(r.Recovery)   // sections.go
	m.persistJobs(r)         // persistjob.go
	m.serverEvents(r)        // persistjob.go
	if len(r.Failed) > 0 {
		m.Printf("\n## %s (%d)\n\n", l.FailedTitle, len(r.Failed))
		rows := make([][]string, 0, len(r.Failed))
		for _, f := range r.Failed {
			mode := f.Mode
			if f.Workload != "" {
				mode = f.Workload
			}
			rows = append(rows, []string{f.Target, f.Strategy, mode, strconv.Itoa(f.Round),
				strconv.Itoa(f.Attempt), f.Status + ": " + f.Error, f.Pos.String()})
		}
		m.Table([]string{l.Target, l.Strategy, l.Mode, l.RoundCol, l.Attempt, l.Error, l.Source}, "lllrrll", rows)
	}
	if len(r.Warnings) > 0 {
		m.Printf("\n## %s\n\n", l.WarningsTitle)
		for _, e := range r.Warnings {
			text := e.Error()
			if w, ok := e.(*report.Warning); ok {
				text = w.Text(r.Options.Lang)
			}
			m.Printf("- %s\n", render.Cell(text))
		}
	}
}

// settingLines are the lines of the settings block: one per setting the
// rows record, the value, or "mixed (…)" when the rows differ.
func settingLines(r *report.Report, l *render.Labels) []string {
	s := r.Settings
	var lines []string
	line := func(format, value string) {
		if value != "" {
			lines = append(lines, fmt.Sprintf(format, value))
		}
	}
	if r.Adaptive {
		line(l.Settings.SliceRequests, oneOf(l, s.Requests, itoa))
		line(l.Settings.Slices, oneOf(l, s.Rounds, itoa))
	} else {
		line(l.Settings.Requests, oneOf(l, s.Requests, itoa))
		line(l.Settings.Rounds, oneOf(l, s.Rounds, itoa))
	}
	line(l.Settings.Pipeline, oneOf(l, s.Pipeline, itoa))
	line(l.Settings.Connections, oneOf(l, s.Connections, itoa))
	line(l.Settings.Keyspace, oneOf(l, s.Keyspace, itoa))
	line(l.Settings.ValueSize, oneOf(l, s.ValueSize, itoa))
	var servers []string
	for _, t := range r.Targets {
		if v := oneOf(l, t.ServerVersions, plain); v != "" {
			servers = append(servers, t.Target+" "+v)
		}
	}
	line(l.Settings.Servers, strings.Join(servers, l.Settings.PartSep))
	var machine []string
	for _, part := range []struct{ format, value string }{
		{"%s", oneOf(l, s.ClientHost, plain)},
		{"%s", oneOf(l, s.CPUModel, plain)},
		{l.Settings.Cores, oneOf(l, s.Cores, itoa)},
		{l.Settings.Kernel, oneOf(l, s.Kernel, plain)},
	} {
		if part.value != "" {
			machine = append(machine, fmt.Sprintf(part.format, part.value))
		}
	}
	line(l.Settings.Machine, strings.Join(machine, l.Settings.PartSep))
	line(l.Settings.Placement, oneOf(l, s.Placement, plain))
	return lines
}

// maxListed is how many values "mixed (…)" lists.
const maxListed = 4

// oneOf formats a setting's values: "" for none, the value, or
// "mixed (a, b, …)".
func oneOf[T any](l *render.Labels, values []T, format func(T) string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return format(values[0])
	}
	var parts []string
	for i, v := range values {
		if i == maxListed {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, format(v))
	}
	return fmt.Sprintf(l.Settings.Mixed, strings.Join(parts, ", "))
}

func plain(s string) string { return s }

// itoa formats a setting's value.
func itoa[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

// md writes the report's markdown: a document in the report's language.
type md struct {
	*render.Doc
	l *render.Labels
}

// target writes the section of one target.
func (m *md) target(t *report.TargetReport, opts report.Options) {
	l := m.l
	m.Printf("\n## %s\n", t.Target)

	// 1. Raw rounds.
	if len(t.Rounds) > 0 {
		m.Printf("\n### "+l.RawN+"\n\n", t.Target, len(t.Rounds))
	} else {
		m.Printf("\n### "+l.Raw+"\n\n", t.Target)
	}
	header := []string{l.Strategy, l.Mode}
	for _, n := range t.Rounds {
		header = append(header, fmt.Sprintf(l.Round, n))
	}
	header = append(header, l.MeanQPS, l.MeanUs)
	var rows [][]string
	for _, sc := range t.Scenarios {
		row := []string{sc.Strategy, sc.Mode}
		i := 0
		for _, n := range t.Rounds {
			for i < len(sc.Rounds) && sc.Rounds[i].Round < n {
				i++
			}
			if i < len(sc.Rounds) && sc.Rounds[i].Round == n {
				row = append(row, sc.Rounds[i].QPS.String())
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, append(row, sc.MeanQPS.String(), sc.MeanUsPerOp.String()))
	}
	m.Table(header, "ll", rows)

	// 2. Trimmed.
	if k := keptRounds(t); k > 0 {
		m.Printf("\n### "+l.TrimmedN+"\n\n", t.Target, k)
	} else {
		m.Printf("\n### "+l.Trimmed+"\n\n", t.Target)
	}
	rows = rows[:0]
	var untrimmed []string
	for _, sc := range t.Scenarios {
		dropped := "-"
		if sc.DroppedRound > 0 {
			dropped = strconv.Itoa(sc.DroppedRound)
		} else if len(sc.Rounds) > 0 {
			untrimmed = append(untrimmed, sc.Strategy+" "+sc.Mode)
		}
		row := []string{sc.Strategy, sc.Mode, dropped, sc.DroppedQPS.String(),
			sc.TrimmedQPS.String(), sc.TrimmedUsPerOp.String()}
		if t.CPU {
			row = append(row, sc.TrimmedQPSPerCPU.String())
		}
		rows = append(rows, row)
	}
	header = []string{l.Strategy, l.Mode, l.Dropped, l.DroppedQPS, l.TrimmedQPS, l.TrimmedUs}
	if t.CPU {
		header = append(header, l.TrimmedCPU)
	}
	m.Table(header, "ll", rows)
	if len(untrimmed) > 0 {
		m.Printf("\n"+l.Untrimmed+"\n", strings.Join(untrimmed, ", "))
	}

	// 3. Overhead against the baseline.
	m.noBaseline(t)
	for _, o := range t.Overheads {
		m.overhead(t, o, opts)
	}

	// 4. Spread.
	m.Printf("\n### "+l.Spread+"\n\n", t.Target)
	rows = rows[:0]
	below := false // an interval below the requested level
	for _, sc := range t.Scenarios {
		ci, level := "-", "-"
		if sc.MedianLo.Valid() && sc.MedianHi.Valid() {
			ci = "[" + sc.MedianLo.String() + ", " + sc.MedianHi.String() + "]"
			level = percent(sc.CIConfidence)
			below = below || sc.CIConfidence < opts.Confidence
		}
		cv := "-"
		if sc.CV.Valid() {
			cv = sc.CV.String() + "%"
		}
		rows = append(rows, []string{sc.Strategy, sc.Mode, strconv.Itoa(len(sc.Rounds)), strconv.Itoa(sc.FailedAttempts),
			cv, sc.MinQPS.String(), sc.MaxQPS.String(), sc.MedianQPS.String(), ci, level})
	}
	m.Table([]string{l.Strategy, l.Mode, l.Rounds, l.Failed, l.CV, l.MinQPS, l.MaxQPS, l.Median, l.CI, l.CILevel}, "ll", rows)
	if below {
		conf := opts.Confidence * 100
		if need := stats.MedianCIRounds(opts.Confidence); need > 0 {
			m.Printf("\n"+l.CILegend+"\n", conf, need, conf)
		} else {
			m.Printf("\n"+l.CILegendMany+"\n", conf, conf)
		}
	}

	// 5. Latency.
	if t.Latency {
		m.Printf("\n### "+l.Latency+"\n\n", t.Target)
		rows = rows[:0]
		for _, sc := range t.Scenarios {
			rows = append(rows, []string{sc.Strategy, sc.Mode, sc.TrimmedP50Us.String(), sc.TrimmedP99Us.String(), sc.TrimmedP999Us.String()})
		}
		m.Table([]string{l.Strategy, l.Mode, l.P50, l.P99, l.P999}, "ll", rows)
	}
}

// noBaseline says which allocs of a target have no baseline.
func (m *md) noBaseline(t *report.TargetReport) {
	for _, a := range t.NoBaseline {
		if t.MultiAlloc {
			m.Printf("\n"+m.l.NoBaselineAlloc+"\n", t.Target, a, t.Target)
		} else {
			m.Printf("\n"+m.l.NoBaseline+"\n", t.Target, t.Target)
		}
	}
}

// keptRounds is the number of rounds every trimmed mean of the target
// averages, or 0 if that differs between scenarios.
func keptRounds(t *report.TargetReport) int {
	k := -1
	for _, sc := range t.Scenarios {
		n := len(sc.Rounds)
		if sc.DroppedRound > 0 {
			n--
		}
		if k >= 0 && n != k {
			return 0
		}
		k = n
	}
	return max(k, 0)
}

// overhead writes one overhead table and its legend.
func (m *md) overhead(t *report.TargetReport, o *report.OverheadTable, opts report.Options) {
	l := m.l
	if t.MultiAlloc && o.Alloc != "" {
		m.Printf("\n### "+l.OverheadAlloc+"\n\n", t.Target, o.Baseline, o.Alloc)
	} else {
		m.Printf("\n### "+l.Overhead+"\n\n", t.Target, o.Baseline)
	}
	metrics := []string{report.MetricQPS, report.MetricUsPerOp}
	if t.Latency {
		metrics = append(metrics, report.MetricP99)
	}
	header := []string{l.Strategy}
	for _, mode := range t.Modes {
		for _, metric := range metrics {
			header = append(header, fmt.Sprintf(l.Change, mode, metric))
		}
	}
	var rows [][]string
	for _, st := range o.Strategies {
		row := []string{st}
		for _, mode := range t.Modes {
			sc := t.Scenario(st, mode)
			for _, metric := range metrics {
				var c *report.Change
				if sc != nil {
					c = sc.Change(metric)
				}
				row = append(row, c.String())
			}
		}
		rows = append(rows, row)
	}
	m.Table(header, "l", rows)
	m.Printf("\n"+l.Legend+"\n", opts.Alpha, opts.Alpha)
}

// sideBySide writes the side-by-side table of one mode.
func (m *md) sideBySide(tab *report.SideBySide) {
	l := m.l
	m.Printf("\n### "+l.Side.Mode+"\n\n", tab.Mode, tab.Reference)
	switch tab.NoReference {
	case report.NoRefNotRun:
		m.Printf(l.Side.NotRun+"\n\n", tab.Reference, tab.Mode)
	case report.NoRefNoRounds:
		m.Printf(l.Side.NoRounds+"\n\n", tab.Reference, tab.Mode)
	}
	header := []string{l.Persistence}
	align := "l"
	ref := tab.Reference
	if tab.NoReference != "" {
		ref = "" // no column is the reference's, and none has a ratio
	}
	for _, c := range tab.Columns {
		header = append(header, fmt.Sprintf(l.Side.Strategy, c.Name), fmt.Sprintf(l.Side.QPS, c.Name))
		align += "lr"
		if tab.Latency {
			header = append(header, fmt.Sprintf(l.Side.P99, c.Name))
			align += "r"
		}
		if tab.CPU {
			header = append(header, fmt.Sprintf(l.Side.CPU, c.Name))
			align += "r"
		}
		if c.Name != ref && ref != "" {
			header = append(header, fmt.Sprintf(l.Side.Ratio, c.Name, ref, report.MetricQPS))
			align += "r"
			if tab.Latency {
				header = append(header, fmt.Sprintf(l.Side.Ratio, c.Name, ref, report.MetricP99))
				align += "r"
			}
		}
	}
	var rows [][]string
	for _, r := range tab.Rows {
		class := r.Persistence
		if class == "" {
			class = "-"
		}
		row := []string{class}
		for i, c := range r.Cells {
			st := c.Strategy
			if st == "" {
				st = "-"
			}
			row = append(row, st, c.QPS.String())
			if tab.Latency {
				row = append(row, c.P99Us.String())
			}
			if tab.CPU {
				row = append(row, c.QPSPerCPU.String())
			}
			if tab.Columns[i].Name != ref && ref != "" {
				row = append(row, c.QPSRatio.String())
				if tab.Latency {
					row = append(row, c.P99Ratio.String())
				}
			}
		}
		rows = append(rows, row)
	}
	m.Table(header, align, rows)
}

// percent prints a fraction as a percentage with 2 decimals: "93.75%".
func percent(x float64) string { return stats.Format2(x*100) + "%" }
