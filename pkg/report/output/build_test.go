package output

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

func hasWarning(rep *report.Report, msg string) bool {
	return slices.ContainsFunc(rep.Warnings, func(e error) bool { return e.Error() == msg })
}

func TestBaselineRule(t *testing.T) {
	five := []float64{100, 101, 102, 103, 104}
	tests := []struct {
		name       string
		rows       [][]results.Row
		baselines  map[string]string
		want       []string // baseline per overhead table
		noBaseline []string
		warn       string
	}{
		{"persistence none",
			[][]results.Row{fixture.Rows("redis", "aof", "everysec", "set", five...), fixture.Rows("redis", "plain", "none", "set", five...)},
			nil, []string{"plain"}, nil, ""},
		{"no persistence column: named nopersist",
			[][]results.Row{fixture.Rows("kvstore", "persist_no", "", "set", five...), fixture.Rows("kvstore", "nopersist", "", "set", five...)},
			nil, []string{"nopersist"}, nil, ""},
		{"no persistence column: named none",
			[][]results.Row{fixture.Rows("redis", "none", "", "set", five...), fixture.Rows("redis", "aof_no", "", "set", five...)},
			nil, []string{"none"}, nil, ""},
		{"a persistence column overrides the names",
			[][]results.Row{fixture.Rows("x", "none", "always", "set", five...), fixture.Rows("x", "fast", "none", "set", five...)},
			nil, []string{"fast"}, nil, ""},
		{"--baseline overrides the rule",
			[][]results.Row{fixture.Rows("redis", "none", "none", "set", five...), fixture.Rows("redis", "aof_no", "no", "set", five...)},
			map[string]string{"redis": "aof_no"}, []string{"aof_no"}, nil, ""},
		{"no baseline",
			[][]results.Row{fixture.Rows("valkey", "aof", "everysec", "set", five...), fixture.Rows("valkey", "rdb", "rdb", "set", five...)},
			nil, nil, []string{""}, ""},
		{"two candidates: the first by name, with a warning",
			[][]results.Row{fixture.Rows("x", "b", "none", "set", five...), fixture.Rows("x", "a", "none", "set", five...)},
			nil, []string{"a"}, nil, "several strategies have persistence none: the first by name is the baseline (choose one with --baseline TARGET=STRATEGY): x (a, b; using a)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := report.Build(slices.Concat(tt.rows...), report.Options{Baselines: tt.baselines})
			if err != nil {
				t.Fatal(err)
			}
			tr := rep.Targets[0]
			var got []string
			for _, o := range tr.Overheads {
				got = append(got, o.Baseline)
			}
			if !slices.Equal(got, tt.want) || !slices.Equal(tr.NoBaseline, tt.noBaseline) {
				t.Errorf("baselines %q, none for %q; want %q, %q", got, tr.NoBaseline, tt.want, tt.noBaseline)
			}
			if tt.warn != "" && !hasWarning(rep, tt.warn) {
				t.Errorf("no warning %q in %v", tt.warn, rep.Warnings)
			}
		})
	}
}

func TestTrimmingEdges(t *testing.T) {
	tests := []struct {
		name    string
		qps     []float64
		dropped int
		trimmed string
	}{
		{"a tie drops the earliest round", []float64{100, 200, 300}, 1, "250.00"},
		{"three rounds", []float64{100, 101, 150}, 3, "100.50"},
		{"two rounds: nothing dropped", []float64{100, 200}, 0, "150.00"},
		{"one round", []float64{100}, 0, "100.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := report.Build(fixture.Rows("k", "s", "", "set", tt.qps...), report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sc := rep.Targets[0].Scenarios[0]
			if sc.DroppedRound != tt.dropped || sc.TrimmedQPS.String() != tt.trimmed {
				t.Errorf("dropped %d trimmed %s; want %d %s", sc.DroppedRound, sc.TrimmedQPS, tt.dropped, tt.trimmed)
			}
			if tt.dropped == 0 && !math.IsNaN(float64(sc.DroppedQPS)) {
				t.Errorf("dropped QPS %v with nothing dropped", sc.DroppedQPS)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	rows := slices.Concat(
		fixture.Rows("k", "noisy", "", "set", 100, 150, 100, 150, 100),
		fixture.Rows("k", "short", "", "set", 100, 101, 102),
		[]results.Row{{Target: "k", Strategy: "dead", Mode: "set", Round: 1, Status: "failed", Error: "boom"}},
	)
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"no ok round, nothing to report: k/dead/set (1 failed attempt)",
		"fewer than 5 ok rounds: one disturbed round still sways the means, and the significance test has little power: k/short/set (3 rounds)",
		"CV above 5%: the rounds disagree (a busy machine or an unstable server), so differences smaller than the spread are noise: k/noisy/set (22.82%)",
	}
	var got []string
	for _, w := range rep.Warnings {
		got = append(got, w.Error())
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| dead     | set  |      - |") {
		t.Errorf("the scenario without ok rounds is not listed:\n%s", md.String())
	}
}

// TestFlushedNote: one line says which targets were flushed, only when a
// row was.
func TestFlushedNote(t *testing.T) {
	remote := fixture.Rows("remote", "as_configured", "none", "set", 100, 101, 102)
	remote[0].Flushed = true
	for _, tt := range []struct {
		name string
		rows []results.Row
		lang string
		want string // "" for no note
	}{
		{"none flushed", slices.Concat(fixture.Rows("k", "nopersist", "none", "set", 1, 2, 3), fixture.Rows("remote", "as_configured", "none", "set", 1, 2, 3)), render.LangEN, ""},
		{"one target flushed", slices.Concat(fixture.Rows("k", "nopersist", "none", "set", 1, 2, 3), remote), render.LangEN,
			"\nFlushed: remote held keys kvbench had not written; they were deleted (FLUSHALL, allowed with --allow-flush or allow_flush) before the first attempt, as the flushed column shows.\n"},
		{"zh", remote, render.LangZH, "\n已清空：remote 原有非 kvbench 写入的键"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := report.Build(tt.rows, report.Options{Lang: tt.lang})
			if err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := Markdown(rep, &md); err != nil {
				t.Fatal(err)
			}
			got := strings.Count(md.String(), "FLUSHALL")
			switch {
			case tt.want == "" && got != 0:
				t.Errorf("a flushed note without a flushed row:\n%s", md.String())
			case tt.want != "" && (got != 1 || !strings.Contains(md.String(), tt.want)):
				t.Errorf("want one note %q in:\n%s", tt.want, md.String())
			}
		})
	}
}

// TestMarkdownEscapes: a pipe in a name cannot break a table.
func TestMarkdownEscapes(t *testing.T) {
	rep, err := report.Build(fixture.Rows("k", "a|b", "", "set", 1, 2, 3), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), `| a\|b     |`) {
		t.Errorf("unescaped:\n%s", md.String())
	}
}

// TestRefusedWrites: a scenario whose rounds had writes refused (an
// insert-only command meeting existing keys) is compared with nothing:
// its overhead cells and its side-by-side ratio say so, and the report
// warns, naming it.
func TestRefusedWrites(t *testing.T) {
	five := []float64{300, 301, 302, 303, 304}
	kv := fixture.Rows("kvstore", "persist_always", "always", "set", five...)
	for i := range kv {
		kv[i].Conflicts = 80_000
	}
	rows := slices.Concat(kv, fixture.Rows("kvstore", "nopersist", "none", "set", five...),
		fixture.Rows("redis", "aof_always", "always", "set", 90, 91, 92, 93, 94), fixture.Rows("redis", "none", "none", "set", five...))
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if n := strings.Count(out, "refused writes |"); n < 3 {
		t.Errorf("%d cells say refused writes, want the overhead's QPS, us/op and the side-by-side ratio:\n%s", n, out)
	}
	if !strings.Contains(out, "writes were refused") || !strings.Contains(out, "kvstore/persist_always/set (5 rounds)") {
		t.Errorf("no warning naming the scenario:\n%s", out)
	}
	sc := rep.Targets[0].Scenario("persist_always", "set")
	if sc == nil || sc.RefusedRounds != 5 || sc.Change(report.MetricQPS) == nil || !sc.Change(report.MetricQPS).Refused {
		t.Errorf("scenario %+v", sc)
	}
}
