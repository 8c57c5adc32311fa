package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kvbench/kvbench/pkg/stats"
)

// WriteMarkdown writes the report as markdown: per target the raw rounds,
// the trimmed figures, the overhead against the baseline with significance
// verdicts, the spread of the rounds and (when measured) latencies; then the
// failed attempts and the warnings. Headings are in Options.Lang.
func (r *Report) WriteMarkdown(w io.Writer) error {
	m := r.mdWriter(w)
	r.mdHead(m, true)
	r.mdBody(m)
	return m.err
}

// mdWriter is a markdown writer in the report's language.
func (r *Report) mdWriter(w io.Writer) *mdWriter {
	return &mdWriter{w: w, l: langs[r.lang()]}
}

// mdHead writes the markdown's head: the title, the settings, the
// trimming rule, the chart's link (with link), the flushed note and the
// side-by-side tables.
func (r *Report) mdHead(m *mdWriter, link bool) {
	l := m.l
	m.printf("# %s\n", l.title)
	if lines := r.settingLines(l); len(lines) > 0 {
		m.printf("\n%s\n\n", l.settings)
		for _, line := range lines {
			m.printf("- %s\n", line)
		}
	}
	m.printf("\n%s\n", l.rule)
	if link && r.Options.ChartLink != "" {
		m.printf("\n![%s](%s)\n", l.chart, r.Options.ChartLink)
	}
	if len(r.Flushed) > 0 {
		m.printf("\n"+l.flushed+"\n", strings.Join(r.Flushed, ", "))
	}
	if len(r.SideBySide) > 0 {
		m.printf("\n## %s\n", l.sideTitle)
		cpu := false
		for _, tab := range r.SideBySide {
			m.sideBySide(tab)
			cpu = cpu || tab.CPU
		}
		m.printf("\n"+l.sideLegend, r.SideBySide[0].Reference, r.Options.Alpha, r.Options.Alpha)
		if cpu {
			m.printf(" %s", l.sideLegendCPU)
		}
		m.printf("\n")
	}
	m.workloadTables(r)
}

// mdBody writes the rest of the markdown: the targets' sections, the
// failed attempts and the warnings.
func (r *Report) mdBody(m *mdWriter) {
	l := m.l
	for _, t := range r.Targets {
		m.target(t, r.Options)
	}
	m.nodes(r.Nodes, r.lang())         // nodes.go
	m.stalls(r)                        // series.go
	m.curves(r)                        // curve.go
	m.telemetry(r.Telemetry, r.lang()) // telemetry.go
	m.recovery(r.Recovery, r.lang())   // recovery.go
	if len(r.Failed) > 0 {
		m.printf("\n## %s (%d)\n\n", l.failedTitle, len(r.Failed))
		rows := make([][]string, 0, len(r.Failed))
		for _, f := range r.Failed {
			mode := f.Mode
			if f.Workload != "" {
				mode = f.Workload
			}
			rows = append(rows, []string{f.Target, f.Strategy, mode, strconv.Itoa(f.Round),
				strconv.Itoa(f.Attempt), f.Status + ": " + f.Error, f.Pos.String()})
		}
		m.table([]string{l.target, l.strategy, l.mode, l.roundCol, l.attempt, l.errorCol, l.source}, "lllrrll", rows)
	}
	if len(r.Warnings) > 0 {
		m.printf("\n## %s\n\n", l.warnings)
		for _, e := range r.Warnings {
			text := e.Error()
			if w, ok := e.(*Warning); ok {
				text = w.Text(r.Options.Lang)
			}
			m.printf("- %s\n", cell(text))
		}
	}
}

// settingLines are the lines of the settings block: one per setting the
// rows record, the value, or "mixed (…)" when the rows differ.
func (r *Report) settingLines(l *labels) []string {
	s := r.Settings
	var lines []string
	line := func(format, value string) {
		if value != "" {
			lines = append(lines, fmt.Sprintf(format, value))
		}
	}
	line(l.setRequests, oneOf(l, s.Requests, itoa))
	line(l.setRounds, oneOf(l, s.Rounds, itoa))
	line(l.setPipeline, oneOf(l, s.Pipeline, itoa))
	line(l.setConnections, oneOf(l, s.Connections, itoa))
	line(l.setKeyspace, oneOf(l, s.Keyspace, itoa))
	line(l.setValueSize, oneOf(l, s.ValueSize, itoa))
	var servers []string
	for _, t := range r.Targets {
		if v := oneOf(l, t.ServerVersions, plain); v != "" {
			servers = append(servers, t.Target+" "+v)
		}
	}
	line(l.setServers, strings.Join(servers, l.partSep))
	var machine []string
	for _, part := range []struct{ format, value string }{
		{"%s", oneOf(l, s.ClientHost, plain)},
		{"%s", oneOf(l, s.CPUModel, plain)},
		{l.cores, oneOf(l, s.Cores, itoa)},
		{l.kernel, oneOf(l, s.Kernel, plain)},
	} {
		if part.value != "" {
			machine = append(machine, fmt.Sprintf(part.format, part.value))
		}
	}
	line(l.setMachine, strings.Join(machine, l.partSep))
	return lines
}

// maxListed is how many values "mixed (…)" lists.
const maxListed = 4

// oneOf formats a setting's values: "" for none, the value, or
// "mixed (a, b, …)".
func oneOf[T any](l *labels, values []T, format func(T) string) string {
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
	return fmt.Sprintf(l.mixed, strings.Join(parts, ", "))
}

func plain(s string) string { return s }

// DisableWidthCache turns off tablewriter's process-wide cache of string
// display widths. The cache, an LRU of 8,192 entries behind a mutex, only
// thrashes on report tables, where nearly every cell is a number never seen
// before: without it the markdown of a 100,000-row report renders about 40%
// faster, and measuring a width directly costs less than the cache
// bookkeeping. It changes state shared by the whole process, so programs
// call it once from the command layer ("kvbench report" does), never from
// library code.
func DisableWidthCache() { twwidth.SetCacheCapacity(0) }

// mdWriter writes markdown, keeping the first error.
type mdWriter struct {
	w   io.Writer
	l   *labels
	err error
}

func (m *mdWriter) printf(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// table renders one markdown table with tablewriter's markdown renderer.
// Cells hold ASCII and CJK text only, never characters of ambiguous
// width ("…", "∞"), so the padding does not depend on tablewriter's
// locale-driven East Asian width setting.
// align has one letter per column, 'l' for left (text) or 'r' for right
// (figures); columns beyond it are right-aligned.
func (m *mdWriter) table(header []string, align string, rows [][]string) {
	if m.err != nil {
		return
	}
	alignment := make(tw.Alignment, len(header))
	for i := range alignment {
		alignment[i] = tw.AlignRight
		if i < len(align) && align[i] == 'l' {
			alignment[i] = tw.AlignLeft
		}
	}
	tb := tablewriter.NewTable(m.w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithAlignment(alignment),
	)
	tb.Header(header)
	for _, row := range rows {
		for i := range row {
			row[i] = cell(row[i])
		}
		if m.err = tb.Append(row); m.err != nil {
			return
		}
	}
	m.err = tb.Render()
}

// cell makes text safe inside a markdown table cell: pipes escaped,
// whitespace runs (newlines included) folded into one space.
func cell(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = c != '|' && (c > ' ' || c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ')
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// target writes the section of one target.
func (m *mdWriter) target(t *TargetReport, opts Options) {
	l := m.l
	m.printf("\n## %s\n", t.Target)

	// 1. Raw rounds.
	if len(t.Rounds) > 0 {
		m.printf("\n### "+l.rawN+"\n\n", t.Target, len(t.Rounds))
	} else {
		m.printf("\n### "+l.raw+"\n\n", t.Target)
	}
	header := []string{l.strategy, l.mode}
	for _, n := range t.Rounds {
		header = append(header, fmt.Sprintf(l.round, n))
	}
	header = append(header, l.meanQPS, l.meanUs)
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
	m.table(header, "ll", rows)

	// 2. Trimmed.
	if k := keptRounds(t); k > 0 {
		m.printf("\n### "+l.trimmedN+"\n\n", t.Target, k)
	} else {
		m.printf("\n### "+l.trimmed+"\n\n", t.Target)
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
	header = []string{l.strategy, l.mode, l.dropped, l.droppedQPS, l.trimmedQPS, l.trimmedUs}
	if t.CPU {
		header = append(header, l.trimmedCPU)
	}
	m.table(header, "ll", rows)
	if len(untrimmed) > 0 {
		m.printf("\n"+l.untrimmed+"\n", strings.Join(untrimmed, ", "))
	}

	// 3. Overhead against the baseline.
	for _, a := range t.NoBaseline {
		if t.MultiAlloc {
			m.printf("\n"+l.noBaselineAlloc+"\n", t.Target, a, t.Target)
		} else {
			m.printf("\n"+l.noBaseline+"\n", t.Target, t.Target)
		}
	}
	for _, o := range t.Overheads {
		m.overhead(t, o, opts)
	}

	// 4. Spread.
	m.printf("\n### "+l.spread+"\n\n", t.Target)
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
	m.table([]string{l.strategy, l.mode, l.rounds, l.failed, l.cv, l.minQPS, l.maxQPS, l.median, l.ci, l.ciLevel}, "ll", rows)
	if below {
		conf := opts.Confidence * 100
		if need := stats.MedianCIRounds(opts.Confidence); need > 0 {
			m.printf("\n"+l.ciLegend+"\n", conf, need, conf)
		} else {
			m.printf("\n"+l.ciLegendMany+"\n", conf, conf)
		}
	}

	// 5. Latency.
	if t.Latency {
		m.printf("\n### "+l.latency+"\n\n", t.Target)
		rows = rows[:0]
		for _, sc := range t.Scenarios {
			rows = append(rows, []string{sc.Strategy, sc.Mode, sc.TrimmedP50Us.String(), sc.TrimmedP99Us.String(), sc.TrimmedP999Us.String()})
		}
		m.table([]string{l.strategy, l.mode, l.p50, l.p99, l.p999}, "ll", rows)
	}
}

// keptRounds is the number of rounds every trimmed mean of the target
// averages, or 0 if that differs between scenarios.
func keptRounds(t *TargetReport) int {
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
func (m *mdWriter) overhead(t *TargetReport, o *OverheadTable, opts Options) {
	l := m.l
	if t.MultiAlloc && o.Alloc != "" {
		m.printf("\n### "+l.overheadAlloc+"\n\n", t.Target, o.Baseline, o.Alloc)
	} else {
		m.printf("\n### "+l.overhead+"\n\n", t.Target, o.Baseline)
	}
	metrics := []string{MetricQPS, MetricUsPerOp}
	if t.Latency {
		metrics = append(metrics, MetricP99)
	}
	header := []string{l.strategy}
	for _, mode := range t.Modes {
		for _, metric := range metrics {
			header = append(header, fmt.Sprintf(l.change, mode, metric))
		}
	}
	var rows [][]string
	for _, st := range o.Strategies {
		row := []string{st}
		for _, mode := range t.Modes {
			sc := t.Scenario(st, mode)
			for _, metric := range metrics {
				var c *Change
				if sc != nil {
					c = sc.Change(metric)
				}
				row = append(row, c.String())
			}
		}
		rows = append(rows, row)
	}
	m.table(header, "l", rows)
	m.printf("\n"+l.legend+"\n", opts.Alpha, opts.Alpha)
}

// String is the overhead cell: the change and its verdict,
// "-6.58% (p=0.008)" or "+0.48% ~"; "-" when there is nothing to compare.
func (c *Change) String() string {
	switch {
	case c != nil && c.Refused:
		return refusedCell
	case c == nil || !c.Pct.Valid():
		return "-"
	case c.P != c.P: // NaN: no test
		return c.Pct.Change()
	case c.Significant:
		p := c.P.String()
		if !strings.HasPrefix(p, "<") {
			p = "=" + p
		}
		return c.Pct.Change() + " (p" + p + ")"
	}
	return c.Pct.Change() + " ~"
}

// sideBySide writes the side-by-side table of one mode.
func (m *mdWriter) sideBySide(tab *SideBySide) {
	l := m.l
	m.printf("\n### "+l.sideMode+"\n\n", tab.Mode, tab.Reference)
	switch tab.NoReference {
	case NoRefNotRun:
		m.printf(l.sideNotRun+"\n\n", tab.Reference, tab.Mode)
	case NoRefNoRounds:
		m.printf(l.sideNoRounds+"\n\n", tab.Reference, tab.Mode)
	}
	header := []string{l.persistence}
	align := "l"
	ref := tab.Reference
	if tab.NoReference != "" {
		ref = "" // no column is the reference's, and none has a ratio
	}
	for _, c := range tab.Columns {
		header = append(header, fmt.Sprintf(l.sideStrategy, c.Name), fmt.Sprintf(l.sideQPS, c.Name))
		align += "lr"
		if tab.Latency {
			header = append(header, fmt.Sprintf(l.sideP99, c.Name))
			align += "r"
		}
		if tab.CPU {
			header = append(header, fmt.Sprintf(l.sideCPU, c.Name))
			align += "r"
		}
		if c.Name != ref && ref != "" {
			header = append(header, fmt.Sprintf(l.sideRatio, c.Name, ref, MetricQPS))
			align += "r"
			if tab.Latency {
				header = append(header, fmt.Sprintf(l.sideRatio, c.Name, ref, MetricP99))
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
	m.table(header, align, rows)
}
