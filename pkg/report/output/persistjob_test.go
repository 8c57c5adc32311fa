package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// persistJobRun writes the files of a run with a BGSAVE in every
// attempt: kvstore's nopersist and persist_everysec, redis's none and
// aof_everysec, mixed, 3 rounds of 20 intervals of half a second, the
// job over intervals 8 to 11. Before and after it every request takes
// 100 µs; during it, 150 µs on the kvstore and 1000 µs on redis (1200 µs
// under aof_everysec), whose p99 is back one interval after the job. It
// returns the detail CSV's path.
func persistJobRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	detail := filepath.Join(dir, "kvbench_detail_20260101_000000.csv")
	dw, err := results.Create(detail)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := results.CreateSeries(results.SeriesPath(detail))
	if err != nil {
		t.Fatal(err)
	}
	f := func(x float64) *float64 { return &x }
	n := func(x int64) *int64 { return &x }
	for _, tg := range []struct {
		target string
		during []int64 // µs, per strategy
	}{{"kvstore", []int64{150, 150}}, {"redis", []int64{1000, 1200}}} {
		strategies := [][2]string{{"nopersist", "none"}, {"persist_everysec", "everysec"}}
		if tg.target == "redis" {
			strategies = [][2]string{{"none", "none"}, {"aof_everysec", "everysec"}}
		}
		for si, st := range strategies {
			for round := 1; round <= 3; round++ {
				var rows []results.SeriesRow
				for i := range 20 {
					us, events := int64(100), ""
					if i >= 8 && i <= 11 {
						us, events = tg.during[si]+int64(10*round), results.EventRDBSave+results.EventSep+results.EventPersistJob
					}
					if tg.target == "redis" && i == 12 {
						us = 300 // one interval back
					}
					h := measure.NewIntervalHistogram()
					for k := range int64(1000) {
						if err := h.RecordValue(us*1000 + k*us); err != nil { // us to 2·us, a spread
							t.Fatal(err)
						}
					}
					rows = append(rows, results.SeriesRow{RunID: "run", Target: tg.target, Strategy: st[0], Mode: "mixed", Round: round, Attempt: 1,
						Command: "total", TS: 0.5 * float64(i), Requests: 1000, QPS: f(2000), P99Us: f(float64(us)), Events: events,
						LatencyHist: measure.EncodeHistogram(h)})
				}
				recovery := 0.5
				if tg.target == "kvstore" {
					recovery = 0
				}
				row := results.Row{RunID: "run", Target: tg.target, Strategy: st[0], Persistence: st[1], Mode: "mixed", Round: round, Attempt: 1,
					Status: results.StatusOK, Requests: 20000, ElapsedS: 10, QPS: 2000, LatP99Us: 180,
					PersistJob: "bgsave", JobS: f(2), ForkMs: f(float64(5 * (si + 1))), CowBytes: n(50_000_000), RSSBeforeBytes: n(100 << 20), RSSPeakBytes: n(150 << 20),
					P99BeforeUs: f(199), P99DuringUs: f(float64(2*(tg.during[si]+int64(10*round))) - 1), P99RecoveryS: f(recovery), LongestStallMs: f(0)}
				if err := dw.Write(&row); err != nil {
					t.Fatal(err)
				}
				if err := sw.Write(rows); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := dw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	return detail
}

// TestPersistJobReport: the markdown's persistence job tables (a row per
// strategy, the U test against the baseline), the targets side by side
// and the server events; the HTML's heatmap per round.
func TestPersistJobReport(t *testing.T) {
	detail := persistJobRun(t)
	md := runReport(t, render.Markdown, detail)
	for _, want := range []string{
		"## Persistence jobs", "### kvstore, mixed", "### redis, mixed",
		"| strategy         | job    | rounds | job s | fork ms | COW MB | RSS peak/before | p99 during/before | p99 before us | longest stall ms | p99 recovery s | vs baseline (p) |",
		"| nopersist        | bgsave |      3 |  2.00 |    5.00 |  50.00 |            1.50 |              1.70 |        199.00 |             0.00 |           0.00 | -               |",
		"| persist_everysec | bgsave |      3 |  2.00 |   10.00 |  50.00 |            1.50 |              1.70 |        199.00 |             0.00 |           0.00 | ~ (1.000)       |",
		"| aof_everysec | bgsave |      3 |  2.00 |   10.00 |  50.00 |            1.50 |             12.26 |        199.00 |             0.00 |           0.50 | ~ (0.100)       |",
		"### bgsave, mixed: the targets side by side (reference redis)",
		"| none        | nopersist 1.70        |             0.17 ~ | none 10.25         |",
		"## Server events",
		"| kvstore | nopersist        | mixed |     1 |       1 | persist_job |         4 |   4.00 | 6.00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown without %q:\n%s", want, md)
		}
	}
	page := runReport(t, render.HTML, detail)
	if n := strings.Count(page, "latency over time, each interval"); n != 12 {
		t.Errorf("%d heatmaps, want one per round: 12", n)
	}
}

// TestHeatmapInBrowser: a heatmap renders in headless Chromium, its
// cells in the viridis colours and its job's span in red.
func TestHeatmapInBrowser(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	detail := persistJobRun(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(runReport(t, render.HTML, detail)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := testutil.Headless(t, chromium, file, "--dump-dom")
	if n := strings.Count(dom, "<svg"); n < 12 {
		t.Errorf("the rendered page has %d SVGs", n)
	}
	img := screenshot(t, chromium, file, 1280, 30000, "") // chart_test.go
	var red, dark, yellow int
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			switch {
			case r > 0xc8 && g < 0x40 && b < 0x48:
				red++ // the span
			case r < 0x50 && g < 0x40 && b > 0x48 && b < 0x90:
				dark++ // viridis's few
			case r > 0xe0 && g > 0xd0 && b < 0x50:
				yellow++ // viridis's most
			}
		}
	}
	if red < 500 || dark < 500 || yellow < 500 {
		t.Errorf("pixels: %d of the span's red, %d and %d of the heatmap's ends: the heatmaps do not show", red, dark, yellow)
	}
}
