package render_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/output"
	"github.com/kvbench/kvbench/pkg/results"
)

// reportOf is the report of detail CSVs.
func reportOf(t *testing.T, files ...string) *report.Report {
	t.Helper()
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// chartCases are the reports whose charts the tests draw: seed 000's; the
// strategy names no chart layout expects (long ones, a one-letter one,
// seven of them and three modes, in two targets); two workloads, one of
// which the kvstore does not support, beside a mode.
func chartCases(t *testing.T) map[string]*report.Report {
	return map[string]*report.Report{
		"seed000":    reportOf(t, "../../testdata/report/seed000/kvstore_detail.csv", "../../testdata/report/seed000/redis_detail.csv"),
		"long-names": reportOf(t, "../report/testdata/long-names.csv"),
		"workloads":  reportOf(t, "../report/testdata/workloads.csv"),
	}
}

// TestChartWorkloads: a workload's commands are drawn in a panel of the
// workload's own, not as series of the targets' panels; every series of a
// panel has a look of its own (and a strategy the same one in every
// workload's panel), every bar carries its figure, and each legend lists
// only what its panel draws: not the workload a target does not support.
func TestChartWorkloads(t *testing.T) {
	chart := output.BarChart(chartCases(t)["workloads"])
	d, err := render.DrawChart(chart, render.ChartSVG)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
	}
	want := []string{"kvstore: trimmed mean QPS per scenario", "redis: trimmed mean QPS per scenario",
		"rb-six: trimmed mean QPS per command", "ycsb-a: trimmed mean QPS per command"}
	if !slices.Equal(titles, want) {
		t.Fatalf("panels %q, want %q", titles, want)
	}
	legends := map[string][]string{
		"kvstore": {"set", "ycsb-a total", "round", "dropped round", "baseline"},
		"redis":   {"set", "rb-six total", "ycsb-a total", "round", "dropped round", "baseline"},
		"rb-six":  {"redis/none", "redis/aof_no"},
		"ycsb-a":  {"kvstore/nopersist", "kvstore/persist_no", "redis/none", "redis/aof_no"},
	}
	texts := make(map[string]int)
	for _, b := range d.Boxes {
		texts[b.Text]++
	}
	type look struct {
		color   any
		striped bool
	}
	looks := make(map[string]look) // a workload series' look, across panels
	for i, p := range d.Panels {
		name, _, _ := strings.Cut(p.Title, ":")
		if !slices.Equal(p.Legend, legends[name]) {
			t.Errorf("%s: legend %q, want %q", name, p.Legend, legends[name])
		}
		byLook := make(map[look]bool)
		for _, b := range p.Bars {
			if b.Label != render.ValueLabel(b.Y) || texts[b.Label] == 0 {
				t.Errorf("%s: a bar of %v is labelled %q, drawn %d times", name, b.Y, b.Label, texts[b.Label])
			}
			byLook[look{b.Color, b.Striped}] = true
		}
		if len(byLook) != len(legends[name]) && strings.HasSuffix(p.Title, "per command") {
			t.Errorf("%s: %d looks for %d series", name, len(byLook), len(legends[name]))
		}
		if strings.HasSuffix(p.Title, "per command") {
			for _, e := range chart.Panels[i].Legend {
				c, striped := render.SeriesLook(e.Series)
				if old, ok := looks[e.Name]; ok && old != (look{c, striped}) {
					t.Errorf("%s has two looks", e.Name)
				}
				looks[e.Name] = look{c, striped}
			}
		}
	}
	if len(looks) != 4 {
		t.Errorf("workload series %v", looks)
	}
}

// TestChartTextAsPaths: the SVG names no font and holds no text element,
// so no viewer sets its letters in a font of its own; the texts' boxes,
// measured with the font the letters are drawn from, do not overlap, stay
// on the canvas, and the legend stands beside the panels.
func TestChartTextAsPaths(t *testing.T) {
	for name, rep := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := output.WriteChart(&svg, rep, render.ChartSVG); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"<text", "font-family", "@font-face"} {
				if bytes.Contains(svg.Bytes(), []byte(bad)) {
					t.Errorf("the SVG holds %q", bad)
				}
			}
			d, err := render.DrawChart(output.BarChart(rep), render.ChartSVG)
			if err != nil {
				t.Fatal(err)
			}
			if d.Turned != (name == "long-names") {
				t.Errorf("labels turned: %v", d.Turned)
			}
			texts := make(map[string]bool)
			for i, b := range d.Boxes {
				texts[b.Text] = true
				for _, p := range b.Corners {
					if p.X < 0 || p.Y < 0 || p.X > d.Width || p.Y > d.Height {
						t.Errorf("%q reaches %v, off the %v × %v canvas", b.Text, p, d.Width, d.Height)
						break
					}
				}
				for _, o := range d.Boxes[i+1:] {
					if overlap(b.Corners, o.Corners) {
						t.Errorf("%q and %q overlap: %v, %v", b.Text, o.Text, b.Corners, o.Corners)
					}
				}
			}
			// Every strategy is labelled, the baseline as such.
			for _, tr := range rep.Targets {
				for _, st := range tr.Strategies {
					if !texts[st] {
						t.Errorf("no label %q", st)
					}
				}
			}
			if !texts["(baseline)"] || !texts["set"] || !texts["round"] {
				t.Errorf("texts %v lack the baseline's mark or the legend", texts)
			}
			right := vg.Length(0)
			for _, b := range d.Boxes[:d.Legend] {
				for _, p := range b.Corners {
					right = max(right, p.X)
				}
			}
			for _, b := range d.Boxes[d.Legend:] {
				if b.Corners[0].X < right {
					t.Errorf("legend entry %q at x=%v, left of the panels' right edge %v", b.Text, b.Corners[0].X, right)
				}
			}
		})
	}
}

// overlap reports whether two convex quadrilaterals overlap by more than
// a hundredth of a point (the separating axis test).
func overlap(a, b [4]vg.Point) bool {
	for _, poly := range [][4]vg.Point{a, b} {
		for i := range poly {
			p, q := poly[i], poly[(i+1)%4]
			nx, ny := float64(q.Y-p.Y), float64(p.X-q.X) // the edge's normal
			if nx == 0 && ny == 0 {
				continue
			}
			norm := math.Hypot(nx, ny)
			lo := func(s [4]vg.Point) (float64, float64) {
				mn, mx := math.Inf(1), math.Inf(-1)
				for _, v := range s {
					d := (float64(v.X)*nx + float64(v.Y)*ny) / norm
					mn, mx = min(mn, d), max(mx, d)
				}
				return mn, mx
			}
			amin, amax := lo(a)
			bmin, bmax := lo(b)
			if amax <= bmin+0.01 || bmax <= amin+0.01 {
				return false
			}
		}
	}
	return true
}

func TestOverlap(t *testing.T) {
	sq := func(x, y, s float64) [4]vg.Point {
		return [4]vg.Point{{X: vg.Length(x), Y: vg.Length(y)}, {X: vg.Length(x + s), Y: vg.Length(y)},
			{X: vg.Length(x + s), Y: vg.Length(y + s)}, {X: vg.Length(x), Y: vg.Length(y + s)}}
	}
	if !overlap(sq(0, 0, 2), sq(1, 1, 2)) || overlap(sq(0, 0, 1), sq(1, 0, 1)) || overlap(sq(0, 0, 1), sq(3, 3, 1)) {
		t.Error("overlap is wrong on squares")
	}
	// A diamond whose bounding box meets the square's, but not itself.
	diamond := [4]vg.Point{{X: 2, Y: 1}, {X: 3, Y: 2}, {X: 2, Y: 3}, {X: 1, Y: 2}}
	if overlap(sq(0, 0, 1.4), diamond) {
		t.Error("overlap is wrong on a turned box")
	}
}

func TestValueLabel(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 950: "950", 999.6: "1000", 9_540: "9.5k", 9_996: "10k",
		287_954.47: "288k", 999_499: "999k", 999_500: "1.00M", 1_105_339.76: "1.11M"} {
		if got := render.ValueLabel(in); got != want {
			t.Errorf("ValueLabel(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestPaletteStriped: past the palette, the colours come again striped:
// still distinct.
func TestPaletteStriped(t *testing.T) {
	type look struct {
		color   any
		striped bool
	}
	seen := make(map[look]int)
	for i := range 2 * len(render.Palette) {
		c, striped := render.SeriesLook(i)
		if j, dup := seen[look{c, striped}]; dup {
			t.Errorf("series %d and %d look the same", j, i)
		}
		seen[look{c, striped}] = i
	}
}

// TestChartFormat: a format other than SVG or PNG is refused.
func TestChartFormat(t *testing.T) {
	if err := render.WriteChart(&bytes.Buffer{}, render.BarChart{}, "gif"); err == nil {
		t.Error("gif: want an error")
	}
}
