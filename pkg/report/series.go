package report

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The series part of a report: with the series CSV that "kvbench run"
// writes beside the detail CSV, a plot per scenario of its kept rounds'
// QPS and p99 over time, their stalls and the server's events marked, and
// a stalls table per target. Without one the report is what it was.

// roundRef is what a round keeps of its detail row for the series part:
// the attempt to find its intervals, its stall columns.
type roundRef struct {
	runID     string
	attempt   int
	stalls    *int64
	longestMs *float64
}

func refOf(r *results.Row) roundRef {
	return roundRef{runID: r.RunID, attempt: r.Attempt, stalls: r.Stalls, longestMs: r.LongestStallMs}
}

// seriesKey names one attempt's intervals of one scenario.
type seriesKey struct {
	runID string
	results.ScenarioKey
	round, attempt int
}

// seriesSet is a series CSV's whole rows (no node's), by attempt and
// scenario, in file order.
type seriesSet map[seriesKey][]results.SeriesRow

func (s seriesSet) add(rows []results.SeriesRow) {
	for _, r := range rows {
		if r.Node != "" {
			continue
		}
		mode := r.Mode
		if r.Workload != "" {
			mode = r.Workload + " " + r.Command
		}
		k := seriesKey{r.RunID, results.ScenarioKey{Target: r.Target, Strategy: r.Strategy, Mode: mode}, r.Round, r.Attempt}
		s[k] = append(s[k], r)
	}
}

// AddSeriesFile reads the series CSV at path into the report: its plots
// and stalls table. A file that does not exist leaves the report as it is.
func (r *Report) AddSeriesFile(path string) error {
	rows, err := results.ReadSeriesFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.series == nil {
		r.series = seriesSet{}
	}
	r.series.add(rows)
	return nil
}

// addSeriesBeside reads the series CSVs that "kvbench run" wrote beside
// the detail CSVs, where there are some.
func (r *Report) addSeriesBeside(details []string) error {
	for _, d := range details {
		if p := results.SeriesPath(d); p != "" {
			if err := r.AddSeriesFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundSeries is a kept round's intervals; nil when the series CSV has
// none.
func (r *Report) roundSeries(sc *Scenario, rd *Round) []results.SeriesRow {
	return r.series[seriesKey{rd.ref.runID, sc.Key(), rd.Round, rd.ref.attempt}]
}

// stallLabels are the stalls table's words, by language.
var stallLabels = map[string]struct {
	title, perMin, longest, total, vs, legend string
}{
	LangEN: {"Stalls", "stalls/min", "longest ms", "stalls", "vs baseline (p)",
		"stalls/min: the kept rounds' mean of stalls per minute measured; longest: the longest stall of the kept rounds; stalls: their count in all the kept rounds (the stalls and longest_stall_ms columns: runs of intervals below --stall-below of the median interval's QPS, or with a request over --stall-latency). vs baseline: the Mann–Whitney U p-value of the ok rounds' stalls per minute against the baseline strategy's, ~ when not significant at α = %g."},
	LangZH: {"停顿", "停顿/分钟", "最长 ms", "停顿次数", "对比基线 (p)",
		"停顿/分钟：保留轮次每分钟停顿数的平均值；最长：保留轮次中最长的一次停顿；停顿次数：保留轮次的停顿总数（stalls 与 longest_stall_ms 列：QPS 低于区间中位数 --stall-below 倍，或有请求超过 --stall-latency 的连续区间）。对比基线：各 ok 轮次每分钟停顿数与基线策略的 Mann–Whitney U 检验 p 值，α = %g 下不显著记为 ~。"},
}

// perMinute is a round's stalls per minute; NaN when it has no stall
// columns or no elapsed time.
func (rd *Round) perMinute() float64 {
	if rd.ref.stalls == nil || !rd.ElapsedS.Valid() || rd.ElapsedS <= 0 {
		return math.NaN()
	}
	return float64(*rd.ref.stalls) / (float64(rd.ElapsedS) / 60)
}

// stallsRows are a target's rows of the stalls table: one per scenario
// whose kept rounds have stall columns.
func (r *Report) stallsRows(t *TargetReport) [][]string {
	alpha := r.Options.Alpha
	if alpha <= 0 {
		alpha = stats.DefaultAlpha
	}
	all := func(sc *Scenario) []float64 {
		var xs []float64
		for i := range sc.Rounds {
			if x := sc.Rounds[i].perMinute(); !math.IsNaN(x) {
				xs = append(xs, x)
			}
		}
		return xs
	}
	var rows [][]string
	for _, sc := range t.Scenarios {
		var perMin []float64
		longest, total, has := 0.0, int64(0), false
		for i := range sc.Rounds {
			rd := &sc.Rounds[i]
			if rd.Dropped || rd.ref.stalls == nil {
				continue
			}
			has = true
			total += *rd.ref.stalls
			if rd.ref.longestMs != nil {
				longest = max(longest, *rd.ref.longestMs)
			}
			if x := rd.perMinute(); !math.IsNaN(x) {
				perMin = append(perMin, x)
			}
		}
		if !has {
			continue
		}
		mean := missing
		if len(perMin) > 0 {
			mean = fig(stats.Mean(perMin))
		}
		vs := "-"
		if base := t.Scenario(sc.Baseline, sc.Mode); base != nil && base != sc {
			if a, b := all(sc), all(base); len(a) > 0 && len(b) > 0 {
				c := stats.Compare(a, b, alpha)
				vs = Prob(c.P).String()
				if !c.Significant() {
					vs = "~ (" + vs + ")"
				}
			}
		}
		rows = append(rows, []string{sc.Strategy, sc.Mode, mean.String(), fig(longest).String(), strconv.FormatInt(total, 10), vs})
	}
	return rows
}

// stalls writes the stalls table of each target, with a series CSV.
func (m *mdWriter) stalls(r *Report) {
	if r.series == nil {
		return
	}
	sl := stallLabels[r.lang()]
	l := m.l
	title := false
	for _, t := range r.Targets {
		rows := r.stallsRows(t)
		if len(rows) == 0 {
			continue
		}
		if !title {
			m.printf("\n## %s\n", sl.title)
			title = true
		}
		m.printf("\n### %s\n\n", t.Target)
		m.table([]string{l.strategy, l.mode, sl.perMin, sl.longest, sl.total, sl.vs}, "llrrrl", rows)
	}
	if title {
		alpha := r.Options.Alpha
		if alpha <= 0 {
			alpha = stats.DefaultAlpha
		}
		m.printf("\n"+sl.legend+"\n", alpha)
	}
}

// The series plot's marks: stalls in gray behind the curves, the server's
// events as bands along the top of the QPS panel.
var (
	stallColor  = color.NRGBA{R: 0xbb, G: 0xbb, B: 0xbb, A: 0x90}
	eventColors = map[string]color.Color{
		results.EventAOFRewrite:   color.NRGBA{R: 0xff, G: 0x99, B: 0x00, A: 0xc0},
		results.EventRDBSave:      color.NRGBA{R: 0x99, G: 0x33, B: 0xcc, A: 0xc0},
		results.EventDelayedFsync: color.RGBA{R: 0xdd, A: 0xff},
	}
	eventOrder = []string{results.EventAOFRewrite, results.EventRDBSave, results.EventDelayedFsync}
)

// seriesPictures draws a plot per scenario whose kept rounds have
// intervals in the series CSV.
func (r *Report) seriesPictures() ([]Picture, error) {
	if r.series == nil {
		return nil, nil
	}
	var pics []Picture
	for _, t := range r.Targets {
		for _, sc := range t.Scenarios {
			svg, ok, err := r.seriesPlot(sc)
			if err != nil {
				return nil, fmt.Errorf("series plot of %s: %w", sc.Name(), err)
			}
			if ok {
				pics = append(pics, Picture{Title: fmt.Sprintf(seriesPlotTitle[r.lang()], sc.Target, sc.Strategy, sc.Mode,
					100*measure.DefaultStallBelow, measure.DefaultStallLatency), SVG: svg})
			}
		}
	}
	return pics, nil
}

// seriesPlotTitle is a series plot's caption, by language.
var seriesPlotTitle = map[string]string{
	LangEN: "%s/%s %s: QPS and p99 latency per interval of the kept rounds; shaded: stalls by the default rule (QPS under %g%% of the round's median, or a request over %v); bands along the top: the server's events",
	LangZH: "%s/%s %s：保留轮次每个区间的 QPS 与 p99 延迟；阴影：按默认规则的停顿（QPS 低于该轮中位数的 %g%%，或有请求超过 %v）；顶部色带：服务器事件",
}

// span is a marked stretch of time, drawn across a fraction of a panel's
// height (lo to hi, from the bottom).
type span struct {
	x0, x1, lo, hi float64
	color          color.Color
}

// spans draw marked stretches of time.
type spans []span

// Plot implements plot.Plotter.
func (ss spans) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, s := range ss {
		x0, x1 := trX(s.x0), trX(s.x1)
		if x1-x0 < vg.Points(1) {
			x1 = x0 + vg.Points(1)
		}
		h := c.Max.Y - c.Min.Y
		c.FillPolygon(s.color, c.ClipPolygonXY([]vg.Point{
			{X: x0, Y: c.Min.Y + h*vg.Length(s.lo)}, {X: x1, Y: c.Min.Y + h*vg.Length(s.lo)},
			{X: x1, Y: c.Min.Y + h*vg.Length(s.hi)}, {X: x0, Y: c.Min.Y + h*vg.Length(s.hi)},
		}))
	}
}

// intervalEnds are each row's end: the next row's start, the last one's
// start plus the median length.
func intervalEnds(rows []results.SeriesRow) []float64 {
	var steps []float64
	for i := 1; i < len(rows); i++ {
		if d := rows[i].TS - rows[i-1].TS; d > 0 {
			steps = append(steps, d)
		}
	}
	step := 0.0
	if len(steps) > 0 {
		step = stats.Median(steps)
	}
	ends := make([]float64, len(rows))
	for i := range rows {
		ends[i] = rows[i].TS + step
		if i+1 < len(rows) {
			ends[i] = rows[i+1].TS
		}
	}
	return ends
}

// stalled marks the intervals of a round that the default stall rule
// finds (measure.DefaultStallBelow of the median QPS of the full
// intervals, measure.DefaultStallLatency): the series CSV does not keep
// the thresholds the run used.
func stalled(rows []results.SeriesRow, ends []float64) []bool {
	var rates []float64
	for i, s := range rows {
		if s.QPS != nil && i > 0 && i < len(rows)-1 {
			rates = append(rates, *s.QPS)
		}
	}
	if len(rates) == 0 {
		for _, s := range rows {
			if s.QPS != nil {
				rates = append(rates, *s.QPS)
			}
		}
	}
	out := make([]bool, len(rows))
	if len(rates) == 0 {
		return out
	}
	median := stats.Median(rates)
	limitUs := float64(measure.DefaultStallLatency.Microseconds())
	for i, s := range rows {
		out[i] = s.QPS != nil && ends[i] > s.TS && (*s.QPS < measure.DefaultStallBelow*median || s.MaxUs != nil && *s.MaxUs > limitUs)
	}
	return out
}

// seriesPlot draws one scenario's kept rounds over time: QPS above, p99
// below, one colour per round, the stalls shaded and the
// server's events as bands along the QPS panel's top. ok is false when no
// kept round has intervals.
func (r *Report) seriesPlot(sc *Scenario) (svg []byte, ok bool, err error) {
	qp, lp := plot.New(), plot.New()
	qp.Title.Text = sc.Target + "/" + sc.Strategy + " " + sc.Mode + ": QPS and p99 per interval"
	qp.Y.Label.Text = "QPS"
	qp.Y.Tick.Marker = wholeTicks{}
	lp.X.Label.Text = "time from the start of the measurement (s)"
	lp.Y.Label.Text = "p99 (us)"
	lp.Y.Tick.Marker = wholeTicks{}
	var marks, stallMarks spans
	seen := map[string]bool{}
	top, xmax, hi := 0.0, 0.0, 0.0
	var lines []*plotter.Line
	var names []string
	for i := range sc.Rounds {
		rd := &sc.Rounds[i]
		rows := r.roundSeries(sc, rd)
		if rd.Dropped || len(rows) == 0 {
			continue
		}
		ends := intervalEnds(rows)
		st := stalled(rows, ends)
		var qs, ls plotter.XYs
		for j, s := range rows {
			mid := (s.TS + ends[j]) / 2
			if s.QPS != nil {
				qs = append(qs, plotter.XY{X: mid, Y: *s.QPS})
				top = max(top, *s.QPS)
			}
			if s.P99Us != nil && *s.P99Us > 0 {
				ls = append(ls, plotter.XY{X: mid, Y: *s.P99Us})
				hi = max(hi, *s.P99Us)
			}
			xmax = max(xmax, ends[j])
			if st[j] {
				stallMarks = append(stallMarks, span{s.TS, ends[j], 0, 1, stallColor})
				seen["stall"] = true
			}
			for k, e := range eventOrder {
				if slices.Contains(results.SplitEvents(s.Events), e) {
					band := 0.97 - 0.04*float64(k)
					marks = append(marks, span{s.TS, ends[j], band, band + 0.03, eventColors[e]})
					seen[e] = true
				}
			}
		}
		f := seriesFill(len(names))
		for _, part := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{qp, qs}, {lp, ls}} {
			if len(part.xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(part.xys)
			if err != nil {
				return nil, false, err
			}
			l.LineStyle = draw.LineStyle{Color: f.color, Width: vg.Points(1.2)}
			part.p.Add(l)
			if part.p == qp {
				lines = append(lines, l)
			}
		}
		names = append(names, "round "+strconv.Itoa(rd.Round))
	}
	if len(names) == 0 || len(lines) == 0 {
		return nil, false, nil
	}
	qp.Add(stallMarks, marks)
	lp.Add(stallMarks)
	for i, l := range lines {
		qp.Legend.Add(names[i], l)
	}
	if seen["stall"] {
		qp.Legend.Add("stall (default rule)", swatch{fill{color: stallColor}})
	}
	for _, e := range eventOrder {
		if seen[e] {
			qp.Legend.Add(e, swatch{fill{color: eventColors[e]}})
		}
	}
	qp.Legend.Top = true
	qp.Legend.TextStyle.Font.Size = vg.Points(8)
	qp.X.Min, qp.X.Max, lp.X.Min, lp.X.Max = 0, xmax, 0, xmax
	qp.Y.Min, qp.Y.Max = 0, max(top, 1)*1.25 // room for the bands
	if hi > 0 {
		lp.Y.Min, lp.Y.Max = 0, hi*1.1
	} else {
		lp.HideY()
	}
	const w, h = 16 * vg.Centimeter, 12 * vg.Centimeter
	c := &outlineText{Canvas: vgsvg.New(w, h)}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Centimeter / 3, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := plot.Align([][]*plot.Plot{{qp}, {lp}}, tiles, draw.New(c))
	qp.Draw(canvases[0][0])
	lp.Draw(canvases[1][0])
	var buf strings.Builder
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, false, err
	}
	return []byte(buf.String()), true, nil
}
