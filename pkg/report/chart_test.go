package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
	"gonum.org/v1/plot/vg"
)

// longNamesReport has the strategy names no chart layout expects: long
// ones, a one-letter one, seven of them and three modes, in two targets.
func longNamesReport(t testing.TB) *Report {
	t.Helper()
	strategies := []struct{ name, persistence string }{
		{"nopersist", "none"}, {"aof_everysec_with_background_rewrite", "everysec"},
		{"aof_always_fsync_every_write", "always"}, {"rdb_snapshot_every_60s", "rdb"},
		{"aof_no", "no"}, {"persist_everysec_and_a_long_tail", "everysec"}, {"x", "no"},
	}
	var rows []results.Row
	for ti, target := range []string{"kvstore", "redis-with-a-long-name"} {
		for si, s := range strategies {
			for mi, m := range []string{"set", "get", "mixed"} {
				q := 100000 + float64(ti*7000+si*9000+mi*11000)
				rows = append(rows, rowsOf(target, s.name, s.persistence, m, q, q*1.02, q*0.97, q*1.01, q*1.3)...)
			}
		}
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// workloadsReport is the report of testdata/workloads.csv: two
// workloads, one of which the kvstore does not support, beside a mode.
func workloadsReport(t testing.TB) *Report {
	t.Helper()
	rows, err := results.ReadFiles(workloadFiles)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// chartCases are the reports the chart tests draw.
func chartCases(t *testing.T) map[string]*Report {
	return map[string]*Report{"seed000": seedReport(t, Options{}), "long-names": longNamesReport(t), "workloads": workloadsReport(t)}
}

// TestChartWorkloads: a workload's commands are drawn in a panel of the
// workload's own, not as series of the targets' panels; every series of a
// panel has a look of its own (and a strategy the same one in every
// workload's panel), every bar carries its figure, and each legend lists
// only what its panel draws: not the workload a target does not support.
func TestChartWorkloads(t *testing.T) {
	rep := workloadsReport(t)
	_, d, err := rep.drawChart(ChartSVG)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range d.panels {
		titles = append(titles, p.title)
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
	for _, b := range d.boxes {
		texts[b.text]++
	}
	looks := make(map[string]fill) // a workload series' look, across panels
	for _, p := range d.panels {
		name, _, _ := strings.Cut(p.title, ":")
		if !slices.Equal(p.legend, legends[name]) {
			t.Errorf("%s: legend %q, want %q", name, p.legend, legends[name])
		}
		byLook := make(map[fill]bool)
		for _, b := range p.bars {
			if b.label != valueLabel(b.y) || texts[b.label] == 0 {
				t.Errorf("%s: a bar of %v is labelled %q, drawn %d times", name, b.y, b.label, texts[b.label])
			}
			byLook[fill{b.color, b.striped}] = true
		}
		if len(byLook) != len(legends[name]) && strings.HasSuffix(p.title, "per command") {
			t.Errorf("%s: %d looks for %d series", name, len(byLook), len(legends[name]))
		}
		if strings.HasSuffix(p.title, "per command") {
			for _, series := range p.legend {
				f := seriesFill(slices.Index(workloadSeries(rep), series))
				if old, ok := looks[series]; ok && old != f {
					t.Errorf("%s has two looks", series)
				}
				looks[series] = f
			}
		}
	}
	if len(looks) != 4 {
		t.Errorf("workload series %v", looks)
	}
	// Past the palette, the colours come again striped: still distinct.
	seen := make(map[fill]int)
	for i := range 2 * len(modeColors) {
		if j, dup := seen[seriesFill(i)]; dup {
			t.Errorf("series %d and %d look the same", j, i)
		}
		seen[seriesFill(i)] = i
	}
}

func TestValueLabel(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 950: "950", 999.6: "1000", 9_540: "9.5k", 9_996: "10k",
		287_954.47: "288k", 999_499: "999k", 999_500: "1.00M", 1_105_339.76: "1.11M"} {
		if got := valueLabel(in); got != want {
			t.Errorf("valueLabel(%v) = %q, want %q", in, got, want)
		}
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
			if err := rep.WriteChart(&svg, ChartSVG); err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"<text", "font-family", "@font-face"} {
				if bytes.Contains(svg.Bytes(), []byte(bad)) {
					t.Errorf("the SVG holds %q", bad)
				}
			}
			_, d, err := rep.drawChart(ChartSVG)
			if err != nil {
				t.Fatal(err)
			}
			if d.turned != (name == "long-names") {
				t.Errorf("labels turned: %v", d.turned)
			}
			texts := make(map[string]bool)
			for i, b := range d.boxes {
				texts[b.text] = true
				for _, p := range b.corners {
					if p.X < 0 || p.Y < 0 || p.X > d.width || p.Y > d.height {
						t.Errorf("%q reaches %v, off the %v × %v canvas", b.text, p, d.width, d.height)
						break
					}
				}
				for _, o := range d.boxes[i+1:] {
					if overlap(b.corners, o.corners) {
						t.Errorf("%q and %q overlap: %v, %v", b.text, o.text, b.corners, o.corners)
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
			if !texts[baselineLabel] || !texts["set"] || !texts["round"] {
				t.Errorf("texts %v lack the baseline's mark or the legend", texts)
			}
			right := vg.Length(0)
			for _, b := range d.boxes[:d.legend] {
				for _, p := range b.corners {
					right = max(right, p.X)
				}
			}
			for _, b := range d.boxes[d.legend:] {
				if b.corners[0].X < right {
					t.Errorf("legend entry %q at x=%v, left of the panels' right edge %v", b.text, b.corners[0].X, right)
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

// TestChartInBrowser renders the SVG in headless Chromium twice, once
// with the machine's fonts and once with no font at all, and requires the
// same pixels, neither screenshot blank: the chart does not depend on the
// fonts of whoever opens it. Without Chromium it is skipped, unless
// KVBENCH_REQUIRE_CHROMIUM is set (make chart-check sets it).
func TestChartInBrowser(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	dir := t.TempDir()
	noFonts := filepath.Join(dir, "fonts.conf")
	conf := `<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig><cachedir>` + dir + `/fc</cachedir></fontconfig>`
	if err := os.WriteFile(noFonts, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, rep := range chartCases(t) {
		t.Run(name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := rep.WriteChart(&svg, ChartSVG); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, name+".svg")
			if err := os.WriteFile(file, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			w, h := svgSize(t, svg.Bytes())
			withFonts := screenshot(t, chromium, file, w, h, "")
			without := screenshot(t, chromium, file, w, h, noFonts)
			if diff := differentPixels(withFonts, without); diff > 0 {
				t.Errorf("%d pixels differ between the screenshots with and without the machine's fonts (%s)", diff, dir)
			}
			checkNotBlank(t, withFonts)
		})
	}
}

// svgSize is the SVG's size in CSS pixels, rounded up.
func svgSize(t *testing.T, svg []byte) (int, int) {
	m := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("no size in %.200s", svg)
	}
	px := func(b []byte) int {
		v, _ := strconv.ParseFloat(string(b), 64)
		return int(math.Ceil(v * 96 / 72))
	}
	return px(m[1]), px(m[2])
}

// screenshot renders file in headless Chromium, with fontconfig's
// configuration from fontsConf when set.
func screenshot(t *testing.T, chromium, file string, w, h int, fontsConf string) image.Image {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var outErr bytes.Buffer
	err := testutil.RunBrowser(t, func() *exec.Cmd {
		outErr.Reset()
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--hide-scrollbars", "--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
			"--screenshot="+out, fmt.Sprintf("--window-size=%d,%d", w, h), "file://"+file)
		cmd.Env = os.Environ()
		if fontsConf != "" {
			cmd.Env = append(cmd.Env, "FONTCONFIG_FILE="+fontsConf)
		}
		cmd.Stdout, cmd.Stderr = &outErr, &outErr
		return cmd
	})
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, outErr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// differentPixels counts the pixels that differ (all of them when the
// sizes differ).
func differentPixels(a, b image.Image) int {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy()
	}
	n := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

// checkNotBlank requires a drawing: the bars' colours and dark text.
func checkNotBlank(t *testing.T, img image.Image) {
	t.Helper()
	counts := make(map[string]int)
	near := func(c color.Color, want color.Color) bool {
		r1, g1, b1, _ := c.RGBA()
		r2, g2, b2, _ := want.RGBA()
		d := func(x, y uint32) bool { return max(x, y)-min(x, y) < 0x0800 }
		return d(r1, r2) && d(g1, g2) && d(b1, b2)
	}
	total := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			c := img.At(x, y)
			total++
			switch {
			case near(c, modeColors[0]):
				counts["set bars"]++
			case near(c, modeColors[1]):
				counts["get bars"]++
			case near(c, color.Black):
				counts["black"]++
			}
		}
	}
	// Bars cover far more of the canvas than the letters do: a bar colour
	// must fill a 500th of it, the black of the text and marks a 2000th.
	for what, least := range map[string]int{"set bars": total / 500, "get bars": total / 500, "black": total / 2000} {
		if counts[what] < least {
			t.Errorf("%s: %d of %d pixels; the screenshot looks blank: %v", what, counts[what], total, counts)
		}
	}
	if !strings.Contains(fmt.Sprint(img.Bounds()), "(0,0)") {
		t.Errorf("bounds %v", img.Bounds())
	}
}
