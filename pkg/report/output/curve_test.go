package output

import (
	"bytes"
	"encoding/csv"
	"errors"
	"html"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// curveFiles are a "run --targets kvstore,redis --modes get --rounds 3
// --rates 25%,50%,100000 --slo p99<2ms" of two strategies each (the
// latency histograms left out).
var curveFiles = []string{"../testdata/curve.csv"}

func curveReport(t *testing.T) *report.Report {
	t.Helper()
	return reportOf(t, report.Options{}, curveFiles...)
}

// TestLoadCurves: the rows with a rate make a latency–throughput table per
// target and mode, a point per strategy and rate trimmed over its rounds
// and compared with the baseline's at the same rate; the closed-loop
// rows' capacities a capacity table; the scenario tables keep the closed
// loop alone.
func TestLoadCurves(t *testing.T) {
	rep := curveReport(t)
	if len(rep.LoadCurves) != 2 {
		t.Fatalf("%d load curves, want kvstore get and redis get", len(rep.LoadCurves))
	}
	for _, c := range rep.LoadCurves {
		if c.Mode != "get" || len(c.Points) != 6 {
			t.Errorf("%s %s: %d points, want 2 strategies x 3 rates", c.Target, c.Mode, len(c.Points))
		}
		for _, p := range c.Points {
			if len(p.Rounds) != 3 || !p.TrimmedP99Us.Valid() || !p.TrimmedRate.Valid() || p.DroppedRound == 0 || p.LagRounds != 3 {
				t.Errorf("%s %s at %s: %d rounds, p99 %v, rate %v, dropped round %d, send lag in %d rounds", c.Target, p.Strategy, p.Rate, len(p.Rounds), p.TrimmedP99Us, p.TrimmedRate, p.DroppedRound, p.LagRounds)
			}
			isBase := p.Strategy == "nopersist" || p.Strategy == "none"
			if isBase != (p.P99 == nil) || p.P99 != nil && (!p.P99.Pct.Valid() || p.P99.P != p.P99.P) {
				t.Errorf("%s %s at %s: p99 change %+v (baseline %v)", c.Target, p.Strategy, p.Rate, p.P99, isBase)
			}
		}
	}
	t0 := rep.Targets[0]
	if len(t0.Modes) != 1 || t0.Modes[0] != "get" {
		t.Errorf("%s modes %v: the curve's rates became scenarios", t0.Target, t0.Modes)
	}
	if len(rep.Capacities) != 2 || rep.Capacities[0].SLO != "p99<2ms" {
		t.Fatalf("capacity tables %+v, want one per target at p99<2ms", rep.Capacities)
	}
	for _, tab := range rep.Capacities {
		for _, row := range tab.Rows {
			if row.Searched != 3 || row.Held == 0 || !row.Capacity.Valid() {
				t.Errorf("%s %s: capacity %v held %d/%d", tab.Target, row.Strategy, row.Capacity, row.Held, row.Searched)
			}
			if (row.Baseline == "") != (row.Lost == nil) {
				t.Errorf("%s %s: baseline %q, lost %+v", tab.Target, row.Strategy, row.Baseline, row.Lost)
			}
		}
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Latency–throughput", "### kvstore: get", "### redis: get", "| closed loop ", "| 25% ", "| 100000 ",
		"## Capacity at p99<2ms", "capacity lost vs baseline"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md.String())
		}
	}
	if strings.Contains(md.String(), "| get at ") {
		t.Errorf("a rate is listed as a scenario:\n%s", md.String())
	}
	var trimmed bytes.Buffer
	if err := TrimmedCSV(rep, &trimmed); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&trimmed).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "capacity_qps")
	for _, rec := range recs[1:] {
		if col < 0 || rec[col] == "" {
			t.Errorf("trimmed CSV row %v: no capacity_qps", rec)
		}
	}
}

// TestLoadCurvesOldCSV: a detail CSV written before the curves has none:
// no curve or capacity table, and an empty capacity_qps in the trimmed CSV.
func TestLoadCurvesOldCSV(t *testing.T) {
	rows, err := results.ReadFiles(mixedFiles)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.LoadCurves) > 0 || len(rep.Capacities) > 0 {
		t.Errorf("curves %v capacities %v from a CSV without rates", rep.LoadCurves, rep.Capacities)
	}
	pics, err := curvePictures(rep)
	if err != nil || len(pics) > 0 {
		t.Errorf("%d latency-throughput plots, %v", len(pics), err)
	}
	var trimmed bytes.Buffer
	if err := TrimmedCSV(rep, &trimmed); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&trimmed).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		if rec[len(rec)-1] != "" {
			t.Errorf("capacity_qps %q without a capacity search", rec[len(rec)-1])
		}
	}
}

// TestLoadCurveDuplicateRound: two ok rows of one rate and round are
// refused, naming where.
func TestLoadCurveDuplicateRound(t *testing.T) {
	rows, err := results.ReadFiles(curveFiles)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r results.Row) bool { return r.RateSpec == "50%" })
	dup := rows[i]
	dup.Pos.Line = 999
	_, err = report.Build(append(rows, dup), report.Options{})
	if !errors.Is(err, report.ErrDuplicate) || !strings.Contains(err.Error(), "at 50%") || !strings.Contains(err.Error(), ":999") {
		t.Errorf("error %v, want a duplicate round of the 50%% point at line 999", err)
	}
}

// TestLoadCurvePlotInBrowser renders the latency–throughput plot of the
// HTML report in headless Chromium: the curves of both strategies show,
// and the page embeds the plot.
func TestLoadCurvePlotInBrowser(t *testing.T) {
	rep := curveReport(t)
	pics, err := curvePictures(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(pics) != 1 || !strings.Contains(pics[0].Title, "get: p99 against throughput") {
		t.Fatalf("%d plots %v, want the get mode's", len(pics), pics)
	}
	svg := pics[0].SVG
	var page bytes.Buffer
	if err := HTML(rep, &page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), html.EscapeString(pics[0].Title)) || !bytes.Contains(page.Bytes(), render.InlineSVG(svg)) {
		t.Error("the HTML report lacks the latency-throughput plot")
	}
	chromium := testutil.RequireChromium(t)
	file := filepath.Join(t.TempDir(), "curve.svg")
	if err := os.WriteFile(file, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	w, h := svgSize(t, svg)
	img := screenshot(t, chromium, file, w, h, "")
	counts := make(map[int]int)
	near := func(c, want color.Color) bool {
		r1, g1, b1, _ := c.RGBA()
		r2, g2, b2, _ := want.RGBA()
		d := func(x, y uint32) bool { return max(x, y)-min(x, y) < 0x0800 }
		return d(r1, r2) && d(g1, g2) && d(b1, b2)
	}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			for i, c := range render.Palette[:2] {
				if near(img.At(x, y), c) {
					counts[i]++
				}
			}
		}
	}
	// A curve through three points is a line a few pixels wide across a
	// good part of the plot.
	for i := range 2 {
		if counts[i] < 100 {
			t.Errorf("strategy %d's colour: %d pixels; its curve is not drawn", i, counts[i])
		}
	}
}

// TestCapacityLostWhy: the capacity lost shows whenever a strategy and
// its baseline both have a capacity, also when the QPS trimming dropped
// the only round that found one; when one has none, its cell and the
// loss say why in the search's words, cut at their details.
func TestCapacityLostWhy(t *testing.T) {
	rows, err := results.ReadFiles(curveFiles)
	if err != nil {
		t.Fatal(err)
	}
	const why = "machine could not hold the schedule at 9000/s (not held twice: 4500 req/s, send lag p99 169000 us; then 4400 req/s, send lag p99 150000 us): the latencies there would include its delays"
	for i := range rows {
		r := &rows[i]
		if r.Rate != nil || r.SLO == "" {
			continue
		}
		switch {
		case r.Target == "redis" && r.Strategy == "aof_always":
			r.CapacityQPS, r.CapacityWhy = nil, why // no round found one
		case r.Target == "kvstore" && r.Strategy == "nopersist" && r.Round != 2:
			r.CapacityQPS, r.CapacityWhy = nil, "the objective held at no rate tried: down to 12000/s in 8 steps (--slo-max-steps)"
		}
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byStrategy := map[string]*report.CapacityRow{}
	for _, tab := range rep.Capacities {
		for _, row := range tab.Rows {
			byStrategy[row.Strategy] = row
		}
	}
	if r := byStrategy["aof_always"]; r == nil || r.Capacity.Valid() || r.Held != 0 || r.Why != "machine could not hold the schedule at 9000/s" ||
		r.Lost == nil || r.Lost.Pct.Valid() || r.Lost.Why != "no capacity: "+r.Why {
		t.Errorf("aof_always: %+v, lost %+v", r, r.Lost)
	}
	if r := byStrategy["none"]; r == nil || !r.Capacity.Valid() || r.Lost != nil {
		t.Errorf("none, the baseline: %+v", r)
	}
	// kvstore's baseline found a capacity in round 2 alone: both have
	// one, so the loss shows, whatever round the trimming dropped.
	if r := byStrategy["nopersist"]; r == nil || !r.Capacity.Valid() || r.Held != 1 {
		t.Errorf("nopersist: %+v", r)
	}
	if r := byStrategy["persist_always"]; r == nil || r.Lost == nil || !r.Lost.Pct.Valid() || r.Lost.Why != "" {
		t.Errorf("persist_always: %+v, lost %+v", r, r.Lost)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"- (machine could not hold the schedule at 9000/s)", "- (no capacity: machine could not hold the schedule at 9000/s)"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the markdown lacks %q:\n%s", s, md.String())
		}
	}

	// The baseline without a capacity: its strategies' losses say so.
	for i := range rows {
		if r := &rows[i]; r.Rate == nil && r.SLO != "" && r.Target == "kvstore" && r.Strategy == "nopersist" {
			r.CapacityQPS, r.CapacityWhy = nil, "the objective held at no rate tried: down to 12000/s in 8 steps (--slo-max-steps)"
		}
	}
	if rep, err = report.Build(rows, report.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tab := range rep.Capacities {
		for _, row := range tab.Rows {
			if row.Strategy == "persist_always" && (row.Lost == nil || row.Lost.Pct.Valid() || row.Lost.Why != "baseline nopersist has no capacity: the objective held at no rate tried") {
				t.Errorf("persist_always against a baseline without capacity: lost %+v", row.Lost)
			}
		}
	}
}
