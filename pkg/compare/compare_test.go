package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// side writes a detail CSV of rounds drawn from a normal distribution
// (mean, 1% spread) for two scenarios, and returns its path.
func side(t *testing.T, name string, seed uint64, mean float64, rounds int, edit func(*results.Row)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+"_detail_1.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, sc := range []struct{ strategy, mode string }{{"nopersist", "set"}, {"persist_everysec", "get"}} {
		for r := 1; r <= rounds; r++ {
			qps := mean * (1 + 0.01*rng.NormFloat64())
			row := results.Row{Target: "kvstore", Strategy: sc.strategy, Mode: sc.mode, Round: r, Status: results.StatusOK,
				QPS: qps, UsPerOp: 1e6 / qps, LatP99Us: 1e7 / qps, Requests: 100000, Pipeline: 128,
				Keyspace: 100000, ValueSize: 32, Connections: 1, Label: name}
			if edit != nil {
				edit(&row)
			}
			if err := w.Write(&row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func rowOf(t *testing.T, res *Result, strategy, metric string) Row {
	t.Helper()
	for _, r := range res.Rows {
		if r.Strategy == strategy && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s %s in %+v", strategy, metric, res.Rows)
	return Row{}
}

// TestShiftAndNull: a 10% drop is significant, negative, and inside its
// interval, which excludes zero; the same distribution twice is "~".
func TestShiftAndNull(t *testing.T) {
	old := side(t, "old", 1, 100000, 10, nil)
	shifted := side(t, "new", 2, 90000, 10, nil)
	same := side(t, "same", 3, 100000, 10, nil)

	res, err := Compare(Options{Old: []string{old}, New: []string{shifted}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"nopersist", "persist_everysec"} {
		r := rowOf(t, res, st, MetricQPS)
		if !r.Significant || r.Pct > -8 || r.Pct < -12 || r.Lo > -10 || r.Hi < -10 || r.Hi >= 0 || r.Confidence < 0.95 {
			t.Errorf("%s: 10%% drop: %+v", st, r)
		}
		if u := rowOf(t, res, st, MetricUsPerOp); !u.Significant || u.Pct < 8 {
			t.Errorf("%s: us/op should rise about 11%%: %+v", st, u)
		}
	}
	if g := res.Geomean[MetricQPS]; g > -8 || g < -12 {
		t.Errorf("geomean %v, want about -10%%", g)
	}

	res, err = Compare(Options{Old: []string{old}, New: []string{same}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"nopersist", "persist_everysec"} {
		if r := rowOf(t, res, st, MetricQPS); r.Significant || r.Lo > 0 || r.Hi < 0 {
			t.Errorf("%s: no shift, yet %+v", st, r)
		}
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), " ~ |") {
		t.Errorf("markdown without ~ (%v):\n%s", err, md.String())
	}
}

// TestGate: the gate fails on a significant regression beyond the
// threshold (exit 3 in the command) and passes on an improvement.
func TestGate(t *testing.T) {
	old := side(t, "old", 1, 100000, 8, nil)
	slow := side(t, "new", 2, 90000, 8, nil)
	res, err := Compare(Options{Old: []string{old}, New: []string{slow}, Threshold: 5})
	if !errors.Is(err, ErrRegression) || len(res.Regressions()) != 2 {
		t.Fatalf("regression: err %v, %d rows", err, len(res.Regressions()))
	}
	if _, err := Compare(Options{Old: []string{slow}, New: []string{old}, Threshold: 5}); err != nil {
		t.Errorf("improvement: %v", err)
	}
	// p99 gates on a rise.
	if _, err := Compare(Options{Old: []string{old}, New: []string{slow}, Threshold: 5, Metric: MetricP99}); !errors.Is(err, ErrRegression) {
		t.Errorf("p99 up 11%%: %v", err)
	}
	if _, err := Compare(Options{Old: []string{old}, New: []string{slow}, Threshold: 15}); err != nil {
		t.Errorf("a 10%% drop under a 15%% threshold: %v", err)
	}
}

// TestSettingsDiffer: a scenario measured with another pipeline, against
// a cluster of another number of masters, or in another protocol, is
// refused, naming the
// setting and where, unless told to ignore it.
func TestSettingsDiffer(t *testing.T) {
	for _, tt := range []struct {
		edit func(*results.Row)
		want []string
	}{
		{func(r *results.Row) { r.Pipeline = 16 }, []string{"column pipeline", "pipeline is 16 here but 128"}},
		{func(r *results.Row) { r.Shards = 3 }, []string{"column shards", "shards is 3 here but 0"}},
		{func(r *results.Row) { r.RESP3 = true }, []string{"column resp3 (1: RESP3)", "resp3 (1: RESP3) is 1 here but 0"}},
	} {
		old := side(t, "old", 1, 100000, 5, nil)
		other := side(t, "new", 2, 100000, 5, tt.edit)
		_, err := Compare(Options{Old: []string{old}, New: []string{other}})
		if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tt.want[0]) || !strings.Contains(err.Error(), tt.want[1]) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
		if _, err := Compare(Options{Old: []string{old}, New: []string{other}, IgnoreSettings: true}); err != nil {
			t.Errorf("--ignore-settings: %v", err)
		}
	}
}

// TestByLabel: the rows of several files split by their label column.
func TestByLabel(t *testing.T) {
	a := side(t, "main", 1, 100000, 6, nil)
	b := side(t, "patched", 2, 120000, 6, nil)
	res, err := Compare(Options{Old: []string{a, b}, Label: true, OldLabel: "main", NewLabel: "patched"})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, res, "nopersist", MetricQPS); !r.Significant || r.Pct < 15 {
		t.Errorf("+20%%: %+v", r)
	}
	if _, err := Compare(Options{Old: []string{a}, Label: true, OldLabel: "main", NewLabel: "nope"}); !errors.Is(err, ErrNothing) {
		t.Errorf("unknown label: %v", err)
	}
}

// TestTooFewRounds: two rounds a side cannot bound the change at 95%:
// the interval is the widest, at its exact 66.67%; one round a side gives
// none. No format prints inf or NaN.
func TestTooFewRounds(t *testing.T) {
	res, err := Compare(Options{Old: []string{side(t, "old", 1, 100000, 2, nil)}, New: []string{side(t, "new", 2, 50000, 2, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(t, res, "nopersist", MetricQPS)
	if r.Significant || math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) || !(r.Lo <= r.Pct && r.Pct <= r.Hi) ||
		stats.Format2(r.Confidence*100) != "66.67" {
		t.Errorf("2 v 2 rounds: %+v", r)
	}
	noInf(t, res, "at 66.67%")
	// The column's header claims no level its cells do not have.
	for _, tc := range []struct {
		rounds int
		header string
	}{{3, "| CI |"}, {2, "| CI |"}, {5, "| 95% CI |"}} {
		res, err := Compare(Options{Old: []string{side(t, "old", 1, 100000, tc.rounds, nil)}, New: []string{side(t, "new", 2, 50000, tc.rounds, nil)}})
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		if err := res.Write(&md, render.Markdown); err != nil {
			t.Fatal(err)
		}
		header := regexp.MustCompile(`\| +`).ReplaceAllString(regexp.MustCompile(` +\|`).ReplaceAllString(md.String(), " |"), "| ")
		if !strings.Contains(header, "| p | "+strings.TrimPrefix(tc.header, "| ")) || tc.rounds < 5 && strings.Contains(md.String(), "95% CI |") {
			t.Errorf("%d v %d rounds: the interval column is not headed %q:\n%s", tc.rounds, tc.rounds, tc.header, md.String())
		}
	}
	one, err := Compare(Options{Old: []string{side(t, "old1", 1, 100000, 1, nil)}, New: []string{side(t, "new1", 2, 50000, 1, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, one, "nopersist", MetricQPS); !math.IsNaN(r.Lo) || !math.IsNaN(r.Hi) || r.Confidence != 0 {
		t.Errorf("1 v 1 round: %+v", r)
	}
	noInf(t, one, "")
	var buf bytes.Buffer
	if err := one.Write(&buf, render.JSON); err != nil || !json.Valid(buf.Bytes()) || !strings.Contains(buf.String(), `"ci_lo_pct": null`) {
		t.Errorf("JSON (%v):\n%s", err, buf.String())
	}
}

// noInf checks that no format of res prints inf or NaN, and that the
// markdown holds want.
func noInf(t *testing.T, res *Result, want string) {
	t.Helper()
	for _, f := range []render.Format{render.Markdown, render.CSV, render.JSON, render.HTML} {
		var buf bytes.Buffer
		if err := res.Write(&buf, f); err != nil {
			t.Fatal(err)
		}
		if low := strings.ToLower(buf.String()); strings.Contains(low, "inf") || strings.Contains(low, "nan") {
			t.Errorf("%s prints inf or NaN:\n%s", f, buf.String())
		}
		if f == render.Markdown && !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestHTML: the html format is the markdown's tables as one page that
// loads nothing, and it renders in a real browser with every table; a
// label with markup stays text.
func TestHTML(t *testing.T) {
	old := side(t, "old", 1, 100000, 6, nil)
	shifted := side(t, "new", 2, 90000, 6, func(r *results.Row) { r.Target = "<b>kv&store</b>" })
	oldMarked := side(t, "old2", 1, 100000, 6, func(r *results.Row) { r.Target = "<b>kv&store</b>" })
	res, err := Compare(Options{Old: []string{old, oldMarked}, New: []string{shifted}})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := res.Write(&page, render.HTML); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if !strings.HasPrefix(html, "<!DOCTYPE html>\n<html lang=\"en\">") || !strings.HasSuffix(html, "</html>\n") {
		t.Fatalf("not a page:\n%.300s", html)
	}
	if strings.Contains(html, "<b>") || !strings.Contains(html, "&lt;b&gt;kv&amp;store") {
		t.Errorf("the target's markup is not escaped")
	}
	for _, bad := range []string{"<script", "<link", "src=", "http://", "https://"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page holds %q: it would load something", bad)
		}
	}
	// The text is as the markdown has it: rounds "6/6", not a typographic
	// fraction; straight quotes and double hyphens.
	if !strings.Contains(html, ">6/6</td>") || strings.Contains(html, "&frasl;") || strings.Contains(html, "<sup>") ||
		strings.ContainsAny(html, "“”–—") {
		t.Errorf("the page's text is not the markdown's:\n%s", html)
	}
	tables := strings.Count(html, "<table>")
	if tables != len(Metrics) {
		t.Errorf("%d tables, want one per metric (%d)", tables, len(Metrics))
	}

	chromium := testutil.RequireChromium(t)
	file := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(file, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := testutil.Headless(t, chromium, file, "--dump-dom")
	if n := strings.Count(dom, "<table"); n != tables {
		t.Errorf("the rendered page has %d tables, want %d", n, tables)
	}
	if !strings.Contains(dom, "geomean") || !strings.Contains(dom, "&lt;b&gt;kv&amp;store&lt;/b&gt;") {
		t.Errorf("the rendered page lacks the geomean or the target's name as text:\n%.2000s", dom)
	}
}

// TestReportOrder: the rows come in the report's order (targets by name,
// the baseline first, then by persistence; set before get), whatever the
// order of the CSV's rows, as a run's shuffled rounds write them; the
// scenarios of one side only too.
func TestReportOrder(t *testing.T) {
	write := func(name string, scs [][3]string) string {
		path := filepath.Join(t.TempDir(), name+"_detail_1.csv")
		w, err := results.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		for r := 1; r <= 3; r++ {
			for _, sc := range scs { // round by round, as run writes them
				row := results.Row{Target: sc[0], Strategy: sc[1], Persistence: sc[2], Mode: "get", Round: r, Status: results.StatusOK,
					QPS: 1000 + float64(r), Requests: 1000, Pipeline: 1, Keyspace: 1000, ValueSize: 8, Connections: 1}
				if strings.HasSuffix(sc[1], "!set") {
					row.Strategy, row.Mode = strings.TrimSuffix(sc[1], "!set"), "set"
				}
				if err := w.Write(&row); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	shuffled := [][3]string{
		{"redis", "aof_always", "always"}, {"kvstore", "persist_everysec!set", "everysec"}, {"kvstore", "nopersist", "none"},
		{"redis", "none!set", "none"}, {"kvstore", "persist_everysec", "everysec"}, {"kvstore", "persist_no", "no"},
		{"kvstore", "nopersist!set", "none"}, {"redis", "none", "none"},
	}
	old := write("old", shuffled)
	nw := write("new", append(shuffled[1:], [3]string{"kvstore", "only_new", "always"}))
	res, err := Compare(Options{Old: []string{old}, New: []string{nw}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Rows {
		if r.Metric == MetricQPS {
			got = append(got, r.ScenarioKey.String())
		}
	}
	want := []string{"kvstore/nopersist/set", "kvstore/nopersist/get", "kvstore/persist_no/get",
		"kvstore/persist_everysec/set", "kvstore/persist_everysec/get", "redis/none/set", "redis/none/get"}
	if !slices.Equal(got, want) {
		t.Errorf("rows in order\n%v\nwant\n%v", got, want)
	}
	// The report of the old side lists them in that order too.
	rows, err := results.ReadFiles([]string{old})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fromReport []string
	for _, tr := range rep.Targets {
		for _, sc := range tr.Scenarios {
			if name := sc.Name(); slices.Contains(want, name) {
				fromReport = append(fromReport, name)
			}
		}
	}
	if !slices.Equal(fromReport, want) {
		t.Errorf("the report's order %v, compare's %v", fromReport, want)
	}
	if !slices.Equal(res.OnlyOld, []string{"redis/aof_always/get"}) || !slices.Equal(res.OnlyNew, []string{"kvstore/only_new/get"}) {
		t.Errorf("only old %v, only new %v", res.OnlyOld, res.OnlyNew)
	}
}
