package output

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// mdTable is one markdown table: its header and rows, cells trimmed.
type mdTable struct {
	header []string
	rows   [][]string
}

// col is the index of a header, or -1.
func (t mdTable) col(name string) int { return slices.Index(t.header, name) }

// tableAfter parses the first markdown table after the line that starts
// with heading.
func tableAfter(t *testing.T, md, heading string) mdTable {
	t.Helper()
	i := strings.Index(md, "\n"+heading)
	if i < 0 {
		t.Fatalf("no heading %q in:\n%s", heading, md)
	}
	var tab mdTable
	for _, line := range strings.Split(md[i+1:], "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			if tab.header != nil {
				break
			}
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		switch {
		case tab.header == nil:
			tab.header = cells
		case strings.HasPrefix(cells[0], ":-") || strings.HasPrefix(cells[0], "--"):
		default:
			tab.rows = append(tab.rows, cells)
		}
	}
	return tab
}

// TestSideBySideRatios: on seed 000 (kvstore and Redis), every ratio of
// the side-by-side tables is the ratio of the two trimmed QPS as the table
// displays them, and its verdict is the U test of the two scenarios' ok
// rounds, read from the CSVs.
func TestSideBySideRatios(t *testing.T) {
	rows, err := results.ReadFiles(seedFiles)
	if err != nil {
		t.Fatal(err)
	}
	qps := make(map[string][]float64) // target/strategy/mode → ok rounds' QPS
	for _, r := range rows {
		if r.OK() {
			k := r.Target + "/" + r.Strategy + "/" + r.Mode
			qps[k] = append(qps[k], r.QPS)
		}
	}
	for _, lang := range []string{render.LangEN, render.LangZH} {
		rep, err := report.Build(rows, report.Options{Lang: lang})
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		if err := Markdown(rep, &md); err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, mode := range []string{"set", "get"} {
			heading := "### " + mode + ": targets side by side"
			if lang == render.LangZH {
				heading = "### " + mode + "：目标对比"
			}
			tab := tableAfter(t, md.String(), heading)
			stK, stR := tab.col("kvstore strategy"), tab.col("redis strategy")
			if lang == render.LangZH {
				stK, stR = tab.col("kvstore 策略"), tab.col("redis 策略")
			}
			qK, qR, ratio := tab.col("kvstore QPS"), tab.col("redis QPS"), tab.col("kvstore/redis QPS")
			if min(stK, stR, qK, qR, ratio) < 0 || tab.col("redis/kvstore QPS") >= 0 {
				t.Fatalf("%s: header %q", mode, tab.header)
			}
			want := [][2]string{{"nopersist", "none"}, {"persist_no", "aof_no"}, {"persist_everysec", "aof_everysec"}}
			if len(tab.rows) != len(want) {
				t.Fatalf("%s: %d rows, want %d: %q", mode, len(tab.rows), len(want), tab.rows)
			}
			for i, row := range tab.rows {
				if row[stK] != want[i][0] || row[stR] != want[i][1] {
					t.Errorf("%s row %d matches %s with %s, want %s", mode, i, row[stK], row[stR], want[i])
				}
				k, err1 := strconv.ParseFloat(row[qK], 64)
				r, err2 := strconv.ParseFloat(row[qR], 64)
				if err := errors.Join(err1, err2); err != nil {
					t.Fatal(err)
				}
				v := stats.Compare(qps["kvstore/"+row[stK]+"/"+mode], qps["redis/"+row[stR]+"/"+mode], stats.DefaultAlpha)
				mark := " ~"
				if v.Significant() {
					mark = " (p=" + strconv.FormatFloat(v.P, 'f', 3, 64) + ")"
				}
				if got, want := row[ratio], stats.Format2(k/r)+mark; got != want {
					t.Errorf("%s %s: ratio %q, want %q (%s / %s)", mode, row[0], got, want, row[qK], row[qR])
				}
				checked++
			}
		}
		if checked != 6 {
			t.Errorf("%s: %d ratios checked", lang, checked)
		}
	}
}

// TestSideBySideMatching: strategies are matched by persistence class;
// one without a counterpart, and the several of one class in one target,
// get rows of their own; nothing is dropped; the reference is redis, or
// the one chosen, or the first target by name.
func TestSideBySideMatching(t *testing.T) {
	five := []float64{100, 101, 102, 103, 104}
	var rows []results.Row
	for _, s := range []struct{ target, strategy, persistence string }{
		{"kvstore", "nopersist", "none"}, {"kvstore", "persist_always", "always"},
		{"kvstore", "persist_everysec", "everysec"},
		{"redis", "none", "none"}, {"redis", "aof_everysec", "everysec"},
		{"redis", "aof_everysec_rewrite", "everysec"}, {"redis", "rdb", "rdb"},
		{"dragonfly", "default", ""},
	} {
		rows = append(rows, fixture.Rows(s.target, s.strategy, s.persistence, "set", five...)...)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reference != "redis" || len(rep.SideBySide) != 1 {
		t.Fatalf("reference %q, %d tables", rep.Reference, len(rep.SideBySide))
	}
	tab := rep.SideBySide[0]
	var names []string
	for _, c := range tab.Columns {
		names = append(names, c.Name)
	}
	if want := []string{"dragonfly", "kvstore", "redis"}; !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
	var got []string
	for _, r := range tab.Rows {
		var cells []string
		for _, c := range r.Cells {
			cells = append(cells, cmpOr(c.Strategy, "-"))
		}
		got = append(got, r.Persistence+": "+strings.Join(cells, " "))
	}
	want := []string{
		"none: - nopersist none",
		"everysec: - persist_everysec -",
		"everysec: - - aof_everysec",
		"everysec: - - aof_everysec_rewrite",
		"always: - persist_always -",
		"rdb: - - rdb",
		": default - -",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Equal samples: ratio 1.00, the test cannot tell them apart.
	if r := tab.Rows[0].Cells[1].QPSRatio.String(); r != "1.00 ~" {
		t.Errorf("nopersist/none: %q", r)
	}
	if c := tab.Rows[1].Cells[1]; c.QPSRatio != nil || c.QPS.String() != "102.50" {
		t.Errorf("an unmatched strategy: %+v", c)
	}

	for _, tt := range []struct {
		rows      []results.Row
		reference string
		want      string
	}{
		{rows, "kvstore", "kvstore"},
		{slices.DeleteFunc(slices.Clone(rows), func(r results.Row) bool { return r.Target == "redis" }), "", "dragonfly"},
	} {
		rep, err := report.Build(tt.rows, report.Options{Reference: tt.reference})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Reference != tt.want || rep.SideBySide[0].Reference != tt.want {
			t.Errorf("--reference %q: %q, want %q", tt.reference, rep.Reference, tt.want)
		}
	}
	if _, err := report.Build(rows, report.Options{Reference: "valkey"}); !errors.Is(err, report.ErrFormat) ||
		!strings.Contains(err.Error(), "dragonfly, kvstore, redis") {
		t.Errorf("unknown reference: %v", err)
	}
	one, err := report.Build(fixture.Rows("redis", "none", "none", "set", five...), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(one, &md); err != nil {
		t.Fatal(err)
	}
	if len(one.SideBySide) != 0 || strings.Contains(md.String(), "side by side") {
		t.Errorf("one target: %d side-by-side tables", len(one.SideBySide))
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestNoReference: a reference whose every attempt of a mode (or of a
// workload) failed gives no column of "-": the table says why there is no
// ratio and keeps the other targets' figures; so does a reference that
// did not run the mode.
func TestNoReference(t *testing.T) {
	failed := func(target, strategy, persistence, mode string) results.Row {
		return results.Row{Target: target, Strategy: strategy, Persistence: persistence, Mode: mode, Round: 1,
			Status: results.StatusFailed, Error: "connection refused"}
	}
	five := []float64{100, 101, 102, 103, 104}
	var rows []results.Row
	rows = append(rows, fixture.Rows("kvstore", "nopersist", "none", "set", five...)...)
	rows = append(rows, fixture.Rows("kvstore", "nopersist", "none", "get", five...)...)
	rows = append(rows, fixture.Rows("kvstore", "nopersist", "none", "mixed", five...)...)
	rows = append(rows, failed("redis", "none", "none", "set"), failed("redis", "none", "none", "set"))
	rows = append(rows, fixture.Rows("redis", "none", "none", "get", five...)...)
	for i, q := range five {
		rows = append(rows, results.Row{Target: "kvstore", Strategy: "nopersist", Persistence: "none", Mode: results.ModeWorkload,
			Workload: "ycsb-a", Command: results.CommandTotal, Round: i + 1, Status: results.StatusOK, QPS: q})
	}
	wl := failed("redis", "none", "none", results.ModeWorkload)
	wl.Workload, wl.Command = "ycsb-a", results.CommandTotal
	rows = append(rows, wl)
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, tt := range []struct{ heading, note, why string }{
		{"### set: targets side by side", "No ratio to redis: it has no ok round of set, every attempt failed", report.NoRefNoRounds},
		{"### mixed: targets side by side", "No ratio to redis: it did not run mixed.", report.NoRefNotRun},
		{"### ycsb-a: commands", "No ratio to redis: it has no ok round of ycsb-a, every attempt failed", report.NoRefNoRounds},
	} {
		i := strings.Index(out, tt.heading)
		if i < 0 || !strings.HasPrefix(out[i+len(tt.heading):][strings.Index(out[i+len(tt.heading):], "\n\n")+2:], tt.note) {
			t.Errorf("%s: no note %q:\n%s", tt.heading, tt.note, out)
			continue
		}
		tab := tableAfter(t, out, tt.heading)
		if tab.col("redis QPS") >= 0 || tab.col("kvstore/redis QPS") >= 0 || tab.col("QPS / redis") >= 0 {
			t.Errorf("%s: the table keeps a column for redis: %v", tt.heading, tab.header)
		}
		for _, r := range tab.rows {
			if !slices.Contains(r, "102.50") && !slices.Contains(r, "redis") {
				t.Errorf("%s: the kvstore's figure is missing: %v", tt.heading, r)
			}
		}
	}
	want := map[string]string{"set": report.NoRefNoRounds, "get": "", "mixed": report.NoRefNotRun}
	for _, tab := range rep.SideBySide {
		if tab.NoReference != want[tab.Mode] {
			t.Errorf("%s: no_reference %q, want %q", tab.Mode, tab.NoReference, want[tab.Mode])
		}
	}
	if tab := tableAfter(t, out, "### get: targets side by side"); tab.col("kvstore/redis QPS") < 0 {
		t.Errorf("get, where redis has rounds, lost its ratio: %v", tab.header)
	}
	if len(rep.Workloads) != 1 || rep.Workloads[0].NoReference != report.NoRefNoRounds {
		t.Errorf("workload tables %+v", rep.Workloads)
	}
}
