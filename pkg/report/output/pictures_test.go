package output

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// latencyCSV writes a detail CSV of kvstore and redis, two strategies
// each, set and get, 5 rounds, whose rows carry real HdrHistograms of
// made-up latencies (log-normal, a slower tail for the always strategy)
// and the percentiles read from them; valkey's rows are an older CSV's:
// percentiles only. It returns the file and the rows.
func latencyCSV(t testing.TB) (string, []results.Row) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kvbench_detail_1.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var rows []results.Row
	for ti, target := range []string{"kvstore", "redis", "valkey"} {
		for si, s := range []struct{ strategy, persistence string }{{"none", "none"}, {"always", "always"}} {
			for _, mode := range []string{"set", "get"} {
				for round := 1; round <= 5; round++ {
					h := hdrhistogram.New(1, 60e9, 3)
					median := 200e3 * (1 + 0.3*float64(ti)) // ns
					if round == 5 {
						median *= 10 // the outlying round, dropped
					}
					for range 20000 {
						v := median * math.Exp(0.35*rng.NormFloat64())
						if si == 1 && rng.Float64() < 0.02 {
							v *= 8 // fsync stalls
						}
						if err := h.RecordValue(int64(v)); err != nil {
							t.Fatal(err)
						}
					}
					row := results.Row{Target: target, Strategy: s.strategy, Persistence: s.persistence, Mode: mode,
						Round: round, Attempt: 1, Status: results.StatusOK, Requests: 20000,
						QPS:      100000 * (1 + 0.1*float64(ti)) * (1 - 0.3*float64(si)) * (1 + 0.01*float64(round)) * (1 + 0.5*float64(round/5)),
						LatP50Us: float64(h.ValueAtQuantile(50)) / 1e3, LatP99Us: float64(h.ValueAtQuantile(99)) / 1e3,
						LatP999Us: float64(h.ValueAtQuantile(99.9)) / 1e3, LatMaxUs: float64(h.Max()) / 1e3,
						QPSPerServerCPUS: results.Opt(90000 * (1 + 0.2*float64(ti))),
					}
					if target != "valkey" {
						b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
						if err != nil {
							t.Fatal(err)
						}
						row.LatencyHist = string(b)
					}
					if err := w.Write(&row); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, row)
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// TestLatencyCurves: a scenario's curve is the merged histogram of the
// rounds the trimming keeps, the dropped round left out; a scenario
// without histograms falls back to its trimmed p50, p99, p99.9 and max.
func TestLatencyCurves(t *testing.T) {
	path, rows := latencyCSV(t)
	read, err := results.ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(read, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	curves, err := rep.LatencyCurves("set")
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]report.LatencyCurve)
	for _, c := range curves {
		byName[c.Target+"/"+c.Strategy] = c
	}
	if len(curves) != 6 {
		t.Fatalf("%d curves, want 6", len(curves))
	}
	// kvstore/always/set: merge its rows' histograms here, kept and all.
	var kept, all *hdrhistogram.Histogram
	dropped := scenario(t, rep, "kvstore", "always", "set").DroppedRound
	if dropped != 5 {
		t.Fatalf("dropped round %d, want 5", dropped)
	}
	for _, r := range rows {
		if r.Target != "kvstore" || r.Strategy != "always" || r.Mode != "set" {
			continue
		}
		for _, into := range []**hdrhistogram.Histogram{&all, &kept} {
			if into == &kept && r.Round == dropped {
				continue
			}
			h, err := hdrhistogram.Decode([]byte(r.LatencyHist))
			if err != nil {
				t.Fatal(err)
			}
			if *into == nil {
				*into = h
			} else {
				(*into).Merge(h)
			}
		}
	}
	c := byName["kvstore/always"]
	if !c.Measured {
		t.Fatal("kvstore/always: not drawn from its histograms")
	}
	at := func(x float64) float64 { // the curve's value at the point nearest x
		best := c.Points[0]
		for _, p := range c.Points {
			if math.Abs(p.Nines-x) < math.Abs(best.Nines-x) {
				best = p
			}
		}
		if math.Abs(best.Nines-x) > 1e-9 {
			t.Fatalf("no point at x=%v (nearest %v)", x, best.Nines)
		}
		return best.Us
	}
	for _, q := range []struct {
		x   float64
		pct float64
	}{{0, 0}, {1, 90}, {2, 99}, {3, 99.9}} {
		want := float64(kept.ValueAtQuantile(q.pct)) / 1e3
		if got := at(q.x); got != want {
			t.Errorf("p%v: %v us, want %v (the kept rounds' merged histogram)", q.pct, got, want)
		}
	}
	if last := c.Points[len(c.Points)-1]; last.Us != float64(kept.Max())/1e3 || last.Nines != math.Log10(float64(kept.TotalCount())) {
		t.Errorf("last point %v, want the max %v us at %v nines", last, float64(kept.Max())/1e3, math.Log10(float64(kept.TotalCount())))
	}
	// The dropped round, 10 times slower, would have moved p90 far up.
	if withDropped := float64(all.ValueAtQuantile(90)) / 1e3; withDropped < 3*at(1) {
		t.Errorf("p90 with the dropped round %v, without %v: the test cannot tell them apart", withDropped, at(1))
	}

	// valkey's rows have no histogram: the recorded percentiles.
	v := byName["valkey/always"]
	sc := scenario(t, rep, "valkey", "always", "set")
	var maxes []float64 // of the rounds the trimming keeps: all but the fifth
	for i, r := range sc.Rounds {
		if i != 4 && r.MaxUs.Valid() {
			maxes = append(maxes, float64(r.MaxUs))
		}
	}
	maxUs := stats.Round2(stats.Mean(maxes))
	want := []struct{ x, y float64 }{
		{math.Log10(2), float64(sc.TrimmedP50Us)}, {2, float64(sc.TrimmedP99Us)}, {3, float64(sc.TrimmedP999Us)},
		{math.Log10(4 * 20000), float64(maxUs)},
	}
	if v.Measured || len(v.Points) != len(want) {
		t.Fatalf("valkey/always: %+v", v)
	}
	for i, w := range want {
		if v.Points[i].Nines != w.x || v.Points[i].Us != w.y {
			t.Errorf("valkey/always point %d: %v, want %v", i, v.Points[i], w)
		}
	}

	// A latency_hist that is no histogram is an error naming its place.
	bad := slices.Clone(read)
	bad[3].LatencyHist = "bm90IGEgaGlzdG9ncmFt"
	if _, err := report.Build(bad, report.Options{}); err == nil || !strings.Contains(err.Error(), "latency_hist") ||
		!strings.Contains(err.Error(), bad[3].Pos.String()) {
		t.Errorf("a bad histogram: %v", err)
	}
}

// noURL matches whatever could make a page fetch something: a URL, a
// reference to a resource, a script.
var noURL = regexp.MustCompile(`(?i)[a-z]+://|\bsrc=|\bhref=|url\(|@import|<script|<link|<img|<iframe|<object`)

// TestHTMLSelfContained: the page has the tables and one inline SVG per
// picture, names no URL at all, escapes the data, and is what Run prints
// and WriteFiles writes.
func TestHTMLSelfContained(t *testing.T) {
	path, _ := latencyCSV(t)
	for _, tt := range []struct {
		name   string
		files  []string
		lang   string
		svgs   int
		plots  bool // latency plots
		tables []string
	}{
		{"histograms", []string{path}, render.LangEN, 1 + 2 + 2, true, []string{"kvstore/redis QPS", "trimmed mean QPS/CPU-s"}},
		{"seed000", seedFiles, render.LangZH, 1 + 2, false, []string{"kvstore/redis QPS", "去异常均值QPS"}},
		{"mixed", mixedFiles, render.LangEN, 1 + 2 + 1, true, []string{"valkey QPS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := RunOptions{Inputs: tt.files, Format: render.HTML, Report: report.Options{Lang: tt.lang}}
			if err := Run(context.Background(), opts, &out); err != nil {
				t.Fatal(err)
			}
			page := out.String()
			if m := noURL.FindString(page); m != "" {
				i := strings.Index(page, m)
				t.Errorf("the page names %q: …%s…", m, page[max(i-80, 0):min(i+80, len(page))])
			}
			if n := strings.Count(page, "<svg "); n != tt.svgs {
				t.Errorf("%d inline SVGs, want %d", n, tt.svgs)
			}
			if strings.Contains(page, "<text") || strings.Contains(page, "<?xml") {
				t.Error("an SVG keeps a text element or its XML declaration")
			}
			if got := strings.Contains(page, "latency by percentile"); got != tt.plots {
				t.Errorf("latency plots: %v, want %v", got, tt.plots)
			}
			for _, h := range tt.tables {
				if !strings.Contains(page, "<th") || !strings.Contains(page, h+"</th>") {
					t.Errorf("no table heading %q", h)
				}
			}
			if !strings.HasPrefix(page, "<!DOCTYPE html>\n<html lang=\""+tt.lang+"\">") || !strings.HasSuffix(page, "</html>\n") {
				t.Errorf("not a whole page: %.80q … %q", page, page[max(len(page)-20, 0):])
			}
		})
	}

	// The data is text: a failed attempt's error cannot become markup.
	rows := append(fixture.Rows("a", "none", "none", "set", 1, 2, 3), fixture.Rows("b", "none", "none", "set", 1, 2, 3)...)
	rows = append(rows, results.Row{Target: "a", Strategy: "none", Persistence: "none", Mode: "set", Round: 4,
		Status: results.StatusFailed, Error: `<script>alert(1)</script> & <img src=x>`})
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "r.html")
	if err := WriteFiles(rep, Files{HTML: file}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("<script")) || bytes.Contains(page, []byte("<img")) {
		t.Error("an error message became markup")
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x&gt;")) &&
		!bytes.Contains(page, []byte("&lt;script>alert(1)&lt;/script> &amp; &lt;img src=x>")) {
		t.Errorf("the error message is not shown as text:\n%s", page)
	}
}

// TestHTMLInBrowser opens the page in headless Chromium: it renders (the
// DOM holds the tables and the pictures), it makes the browser fetch
// nothing (no request beyond those the browser makes for itself on a
// blank page; a control page with an image on the network shows the
// check sees requests), and a screenshot shows the plots' colours.
// Without Chromium it is skipped, unless KVBENCH_REQUIRE_CHROMIUM is set.
func TestHTMLInBrowser(t *testing.T) {
	chromium := testutil.RequireChromium(t)
	path, _ := latencyCSV(t)
	var page bytes.Buffer
	if err := Run(context.Background(), RunOptions{Inputs: []string{path}, Format: render.HTML}, &page); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	report := write("report.html", page.String())
	blank := write("blank.html", "<!DOCTYPE html><html><body><p>blank</p></body></html>")
	control := write("control.html", `<!DOCTYPE html><html><body><img src="http://127.0.0.1:1/kvbench-control.png"></body></html>`)

	dom, log := testutil.Headless(t, chromium, report, "--dump-dom")
	if n := strings.Count(dom, "<svg"); n != 5 {
		t.Errorf("the rendered page has %d SVGs, want 5", n)
	}
	if n := strings.Count(dom, "<table"); n < 10 {
		t.Errorf("the rendered page has %d tables", n)
	}
	_, blankLog := testutil.Headless(t, chromium, blank, "--dump-dom")
	_, controlLog := testutil.Headless(t, chromium, control, "--dump-dom")
	own := requests(blankLog)
	if got := pageRequests(controlLog, own); !slices.Contains(got, "http://127.0.0.1:1/kvbench-control.png") {
		t.Fatalf("the control page's request is not seen (%q): the check would see nothing", got)
	}
	if got := pageRequests(log, own); len(got) > 0 {
		t.Errorf("the page made the browser fetch %q", got)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "Failed to load") || strings.Contains(line, "CONSOLE") {
			t.Errorf("chromium: %s", line)
		}
	}

	shot := filepath.Join(dir, "report.png")
	testutil.Headless(t, chromium, report, "--screenshot="+shot, "--window-size=1280,4200", "--hide-scrollbars", "--force-device-scale-factor=1")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The tables are black and grey on white: the colours are the plots'.
	counts := make([]int, 3)
	total := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			total++
			for i := range counts {
				if nearColor(img.At(x, y), render.Palette[i]) {
					counts[i]++
				}
			}
		}
	}
	for i, n := range counts {
		if n < total/200 {
			t.Errorf("colour %d: %d of %d pixels: the plots do not show (%s)", i, n, total, shot)
		}
	}
	if t.Failed() {
		t.Logf("screenshot kept in %s", shot)
	}
}

var requestLine = regexp.MustCompile(`NotifyBeforeURLRequest: (\S+)`)

// requests are the hosts ("scheme://host") Chromium's log shows requests to.
func requests(log string) []string {
	var hosts []string
	for _, m := range requestLine.FindAllStringSubmatch(log, -1) {
		if u, err := url.Parse(m[1]); err == nil && !slices.Contains(hosts, u.Scheme+"://"+u.Host) {
			hosts = append(hosts, u.Scheme+"://"+u.Host)
		}
	}
	return hosts
}

// pageRequests are the URLs the log shows requests to, but for the
// browser's own: hosts it asked on a blank page, and Google's services
// it may ask at any time.
func pageRequests(log string, own []string) []string {
	var urls []string
	for _, m := range requestLine.FindAllStringSubmatch(log, -1) {
		u, err := url.Parse(m[1])
		if err != nil {
			urls = append(urls, m[1])
			continue
		}
		h := u.Hostname()
		if slices.Contains(own, u.Scheme+"://"+u.Host) || strings.HasSuffix(h, ".google.com") ||
			strings.HasSuffix(h, ".googleapis.com") || strings.HasSuffix(h, ".gstatic.com") {
			continue
		}
		urls = append(urls, m[1])
	}
	return urls
}

// nearColor reports whether two colours are within 1/32 on each channel.
func nearColor(c, want color.Color) bool {
	r1, g1, b1, _ := c.RGBA()
	r2, g2, b2, _ := want.RGBA()
	d := func(x, y uint32) bool { return max(x, y)-min(x, y) < 0x0800 }
	return d(r1, r2) && d(g1, g2) && d(b1, b2)
}
