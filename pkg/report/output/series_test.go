package output

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// seriesRun writes the files of a run with series: kvstore's nopersist
// (the baseline) and persist_everysec, set, 3 rounds of 60 s in 10
// intervals; persist_everysec stalls in round r's interval 5 (and r-1
// more), an AOF rewrite over intervals 4 to 6. It returns the detail
// CSV's path.
func seriesRun(t *testing.T) string {
	t.Helper()
	return seriesRunOf(t, 10)
}

// seriesRunOf is seriesRun with n intervals a round.
func seriesRunOf(t *testing.T, n int) string {
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
	for _, st := range []struct{ name, persistence string }{{"nopersist", "none"}, {"persist_everysec", "everysec"}} {
		for round := 1; round <= 3; round++ {
			stalls := int64(0)
			var rows []results.SeriesRow
			var total int64
			for i := range n {
				q, events := 1000.0, ""
				if st.name == "persist_everysec" {
					if i >= 5 && i < 5+round {
						q = 10
					}
					if i >= 4 && i <= 6 {
						events = results.EventAOFRewrite
					}
				}
				n := int64(q * 6)
				total += n
				rows = append(rows, results.SeriesRow{RunID: "run", Target: "kvstore", Strategy: st.name, Mode: "set", Round: round, Attempt: 1,
					Command: "SET", TS: float64(6 * i), Requests: n, QPS: f(q), P50Us: f(50), P99Us: f(100 + 10*float64(i)), P999Us: f(200), MaxUs: f(300), Events: events})
			}
			longest := 0.0
			if st.name == "persist_everysec" {
				stalls, longest = 1, 6000*float64(round)
			}
			row := results.Row{RunID: "run", Target: "kvstore", Strategy: st.name, Persistence: st.persistence, Mode: "set", Round: round, Attempt: 1,
				Status: results.StatusOK, Requests: total, ElapsedS: 60, QPS: float64(total) / 60, Stalls: &stalls, LongestStallMs: &longest}
			if err := dw.Write(&row); err != nil {
				t.Fatal(err)
			}
			if err := sw.Write(rows); err != nil {
				t.Fatal(err)
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

func runReport(t *testing.T, format render.Format, inputs ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := Run(context.Background(), RunOptions{Inputs: inputs, Format: format}, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestSeriesReport: with the series CSV beside the detail CSV, the
// markdown has a stalls table per target and the HTML a series plot per
// scenario.
func TestSeriesReport(t *testing.T) {
	detail := seriesRun(t)
	md := runReport(t, render.Markdown, detail)
	for _, want := range []string{
		"## Stalls", "### kvstore",
		"| nopersist        | set  |       0.00 |       0.00 |      0 | -               |",
		// One stall per 60 s round, the longest 18 s (round 1, the farthest
		// from the median, is dropped),
		// two in the kept rounds.
		"| persist_everysec | set  |       1.00 |   18000.00 |      2 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown without %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "only --stall-latency could find a stall") {
		t.Error("rounds of 10 intervals said to be judged by latency only")
	}
	page := runReport(t, render.HTML, detail)
	if n := strings.Count(page, "QPS and p99 latency per interval of the kept rounds"); n != 2 {
		t.Errorf("%d series plots, want 2", n)
	}
	if strings.Contains(page, "<text") {
		t.Error("a series plot keeps a text element")
	}
}

// TestStallsOfSlices: rounds of a single interval each, as an adaptive
// run's slices, have their stalls table say that only the latency rule
// could find a stall in them.
func TestStallsOfSlices(t *testing.T) {
	md := runReport(t, render.Markdown, seriesRunOf(t, 1))
	if !strings.Contains(md, "## Stalls") || !strings.Contains(md, "No round here had two full intervals") {
		t.Errorf("a stalls table of one-interval rounds without its note:\n%s", md)
	}
}

// TestReportWithoutSeries: the same detail CSV without its series CSV
// reports as a detail CSV without the stall columns does: no stalls
// table, no series plot.
func TestReportWithoutSeries(t *testing.T) {
	detail := seriesRun(t)
	if err := os.Remove(results.SeriesPath(detail)); err != nil {
		t.Fatal(err)
	}
	rows, err := results.ReadFiles([]string{detail})
	if err != nil {
		t.Fatal(err)
	}
	// The same rows as an earlier kvbench wrote them: without the stall
	// columns.
	old := filepath.Join(t.TempDir(), filepath.Base(detail))
	w, err := results.Create(old)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].Stalls, rows[i].LongestStallMs = nil, nil
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, format := range []render.Format{render.Markdown, render.HTML} {
		got, want := runReport(t, format, detail), runReport(t, format, old)
		if got != want {
			t.Errorf("%s: the report of the detail CSV without its series CSV differs from the one without stall columns", format)
		}
		if strings.Contains(got, "Stalls") || strings.Contains(got, "per interval") {
			t.Errorf("%s: a stalls table or series plot without a series CSV", format)
		}
	}
}

// TestSeriesPlotInBrowser: the series plots render in headless Chromium,
// the rewrite's band in its colour.
func TestSeriesPlotInBrowser(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	detail := seriesRun(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(runReport(t, render.HTML, detail)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := testutil.Headless(t, chromium, file, "--dump-dom")
	if n := strings.Count(dom, "<svg"); n < 3 {
		t.Errorf("the rendered page has %d SVGs", n)
	}
	img := screenshot(t, chromium, file, 1280, 6000, "") // chart_test.go
	orange := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 0xf0 && g>>8 > 0x90 && g>>8 < 0xc8 && b>>8 < 0x70 {
				orange++
			}
		}
	}
	if orange < 100 {
		t.Errorf("%d pixels of the rewrite's orange in the screenshot", orange)
	}
}
