package report

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// rowsOf makes in-memory ok rows: one per QPS figure, rounds from 1.
func rowsOf(target, strategy, persistence, mode string, qps ...float64) []results.Row {
	var rows []results.Row
	for i, q := range qps {
		rows = append(rows, results.Row{Target: target, Strategy: strategy, Persistence: persistence,
			Mode: mode, Round: i + 1, Status: results.StatusOK, QPS: q})
	}
	return rows
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
			[][]results.Row{rowsOf("redis", "aof", "everysec", "set", five...), rowsOf("redis", "plain", "none", "set", five...)},
			nil, []string{"plain"}, nil, ""},
		{"no persistence column: named nopersist",
			[][]results.Row{rowsOf("kvstore", "persist_no", "", "set", five...), rowsOf("kvstore", "nopersist", "", "set", five...)},
			nil, []string{"nopersist"}, nil, ""},
		{"no persistence column: named none",
			[][]results.Row{rowsOf("redis", "none", "", "set", five...), rowsOf("redis", "aof_no", "", "set", five...)},
			nil, []string{"none"}, nil, ""},
		{"a persistence column overrides the names",
			[][]results.Row{rowsOf("x", "none", "always", "set", five...), rowsOf("x", "fast", "none", "set", five...)},
			nil, []string{"fast"}, nil, ""},
		{"--baseline overrides the rule",
			[][]results.Row{rowsOf("redis", "none", "none", "set", five...), rowsOf("redis", "aof_no", "no", "set", five...)},
			map[string]string{"redis": "aof_no"}, []string{"aof_no"}, nil, ""},
		{"no baseline",
			[][]results.Row{rowsOf("valkey", "aof", "everysec", "set", five...), rowsOf("valkey", "rdb", "rdb", "set", five...)},
			nil, nil, []string{""}, ""},
		{"two candidates: the first by name, with a warning",
			[][]results.Row{rowsOf("x", "b", "none", "set", five...), rowsOf("x", "a", "none", "set", five...)},
			nil, []string{"a"}, nil, "several strategies have persistence none: the first by name is the baseline (choose one with --baseline TARGET=STRATEGY): x (a, b; using a)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Build(slices.Concat(tt.rows...), Options{Baselines: tt.baselines})
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

func hasWarning(rep *Report, msg string) bool {
	return slices.ContainsFunc(rep.Warnings, func(e error) bool { return e.Error() == msg })
}

func TestAllocBaselines(t *testing.T) {
	rows := slices.Concat(
		rowsOf("kvstore", "nopersist_mypool", "none", "set", 200, 201, 202),
		rowsOf("kvstore", "persist_mypool", "everysec", "set", 100, 101, 102),
		rowsOf("kvstore", "nopersist_malloc", "none", "set", 150, 151, 152),
		rowsOf("kvstore", "persist_malloc", "everysec", "set", 75, 76, 77),
	)
	for i := range rows {
		rows[i].Alloc = strings.TrimPrefix(rows[i].Strategy[strings.LastIndex(rows[i].Strategy, "_"):], "_")
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Targets[0]
	if !tr.MultiAlloc || len(tr.Overheads) != 2 {
		t.Fatalf("overheads %+v", tr.Overheads)
	}
	for _, tt := range []struct{ strategy, baseline, change string }{
		{"persist_mypool", "nopersist_mypool", "-49.63%"},
		{"persist_malloc", "nopersist_malloc", "-49.50%"},
	} {
		sc := tr.Scenario(tt.strategy, "set")
		if sc.Baseline != tt.baseline || sc.Change(MetricQPS).Pct.Change() != tt.change {
			t.Errorf("%s: baseline %s change %s; want %s %s", tt.strategy, sc.Baseline, sc.Change(MetricQPS).Pct.Change(), tt.baseline, tt.change)
		}
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
			rep, err := Build(rowsOf("k", "s", "", "set", tt.qps...), Options{})
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

// TestRoundOrder: rounds arrive in any order (the orchestrator interleaves
// them); the raw table and the trimming go by round number.
func TestRoundOrder(t *testing.T) {
	rows := rowsOf("k", "s", "", "set", 139895, 138768, 138867, 143296, 144388)
	slices.Reverse(rows)
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.Targets[0].Scenarios[0]
	if sc.DroppedRound != 5 || sc.TrimmedQPS.String() != "140206.50" || sc.TrimmedUsPerOp.String() != "7.13" {
		t.Errorf("dropped %d trimmed %s %s", sc.DroppedRound, sc.TrimmedQPS, sc.TrimmedUsPerOp)
	}
	if !slices.Equal(rep.Targets[0].Rounds, []int{1, 2, 3, 4, 5}) {
		t.Errorf("rounds %v", rep.Targets[0].Rounds)
	}
}

// TestBuildKeepsRows: Build neither sorts nor changes the caller's rows.
func TestBuildKeepsRows(t *testing.T) {
	rows := rowsOf("k", "s", "", "set", 5, 3, 4, 1, 2)
	slices.Reverse(rows)
	orig := slices.Clone(rows)
	if _, err := Build(rows, Options{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows, orig) {
		t.Error("Build changed its input")
	}
}

// TestBuildInMemoryErrors: rows built in memory are named by index.
func TestBuildInMemoryErrors(t *testing.T) {
	rows := slices.Concat(rowsOf("k", "s", "", "set", 1, 2), rowsOf("k", "s", "", "set", 3))
	_, err := Build(rows, Options{})
	want := "row 3: duplicate round: k/s/set round 1 already has an ok row at row 1"
	if err == nil || err.Error() != want || !errors.Is(err, ErrDuplicate) {
		t.Errorf("error %v, want %s", err, want)
	}
	if _, err := Build(nil, Options{}); !errors.Is(err, results.ErrEmpty) {
		t.Errorf("no rows: %v", err)
	}
}

// TestBuildManyErrors: every bad row is reported, up to a limit.
func TestBuildManyErrors(t *testing.T) {
	var rows []results.Row
	for range results.MaxErrors + 5 {
		rows = append(rows, results.Row{Target: "k", Strategy: "s", Mode: "set", Round: 1, Status: results.StatusOK})
	}
	_, err := Build(rows, Options{})
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != results.MaxErrors+1 || lines[results.MaxErrors] != "and 5 more errors" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestUsPerOp(t *testing.T) {
	rows := rowsOf("k", "s", "", "set", 139895, 200000)
	rows[1].UsPerOp = 5.123 // the load generator's own figure wins
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{rep.Targets[0].Scenarios[0].Rounds[0].UsPerOp.String(), rep.Targets[0].Scenarios[0].Rounds[1].UsPerOp.String()}
	if !slices.Equal(got, []string{"7.15", "5.12"}) {
		t.Errorf("us/op %v", got)
	}
}

func TestWarnings(t *testing.T) {
	rows := slices.Concat(
		rowsOf("k", "noisy", "", "set", 100, 150, 100, 150, 100),
		rowsOf("k", "short", "", "set", 100, 101, 102),
		[]results.Row{{Target: "k", Strategy: "dead", Mode: "set", Round: 1, Status: "failed", Error: "boom"}},
	)
	rep, err := Build(rows, Options{})
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
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| dead     | set  |      - |") {
		t.Errorf("the scenario without ok rounds is not listed:\n%s", md.String())
	}
}

// TestFlushedNote: one line says which targets were flushed, only when a
// row was.
func TestFlushedNote(t *testing.T) {
	remote := rowsOf("remote", "as_configured", "none", "set", 100, 101, 102)
	remote[0].Flushed = true
	for _, tt := range []struct {
		name string
		rows []results.Row
		lang string
		want string // "" for no note
	}{
		{"none flushed", slices.Concat(rowsOf("k", "nopersist", "none", "set", 1, 2, 3), rowsOf("remote", "as_configured", "none", "set", 1, 2, 3)), render.LangEN, ""},
		{"one target flushed", slices.Concat(rowsOf("k", "nopersist", "none", "set", 1, 2, 3), remote), render.LangEN,
			"\nFlushed: remote held keys kvbench had not written; they were deleted (FLUSHALL, allowed with --allow-flush or allow_flush) before the first attempt, as the flushed column shows.\n"},
		{"zh", remote, render.LangZH, "\n已清空：remote 原有非 kvbench 写入的键"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Build(tt.rows, Options{Lang: tt.lang})
			if err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := rep.WriteMarkdown(&md); err != nil {
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
	rep, err := Build(rowsOf("k", "a|b", "", "set", 1, 2, 3), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), `| a\|b     |`) {
		t.Errorf("unescaped:\n%s", md.String())
	}
}

func TestParseBaselines(t *testing.T) {
	got, err := ParseBaselines(" kvstore=nopersist, redis = none ,")
	if err != nil || !reflect.DeepEqual(got, map[string]string{"kvstore": "nopersist", "redis": "none"}) {
		t.Errorf("got %v %v", got, err)
	}
	for _, bad := range []string{"kvstore", "=x", "x=", "a=b,a=c"} {
		if _, err := ParseBaselines(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestFigure(t *testing.T) {
	tests := []struct {
		f          Figure
		str, json_ string
	}{
		{7.13, "7.13", "7.13"},
		{140206.5, "140206.50", "140206.50"},
		{missing, "-", "null"},
		{Figure(math.Inf(1)), "-", "null"},
		{Figure(math.Inf(-1)), "-", "null"},
	}
	for _, tt := range tests {
		j, _ := tt.f.MarshalJSON()
		if tt.f.String() != tt.str || string(j) != tt.json_ {
			t.Errorf("%v: %s %s", float64(tt.f), tt.f.String(), j)
		}
	}
	for p, want := range map[Prob]string{0.0079365: "0.008", 0.0004: "<0.001", Prob(math.NaN()): "-"} {
		if p.String() != want {
			t.Errorf("Prob(%v) = %s, want %s", float64(p), p, want)
		}
	}
	c := &Change{Pct: -6.58, P: 0.0004, Significant: true}
	if got := fmt.Sprint(c); got != "-6.58% (p<0.001)" {
		t.Errorf("cell %s", got)
	}
}

// TestReadRetry: a failed attempt then an ok retry of the same round is
// fine, and the failure is counted and listed.
func TestReadRetry(t *testing.T) {
	in := "target,strategy,mode,round,attempt,status,error,qps\n" +
		"kvstore,nopersist,set,1,1,failed,server died,\n" +
		"kvstore,nopersist,set,1,2,ok,,100\n" +
		"kvstore,nopersist,set,2,1,ok,,110\n" +
		"kvstore,nopersist,set,3,1,timeout,no reply in 30s,abc-is-checked-anyway\n"
	if _, err := results.ReadCSV(strings.NewReader(in), "r.csv"); err == nil {
		t.Error("a non-numeric qps in a failed row should still be reported")
	}
	in = strings.Replace(in, "abc-is-checked-anyway", "", 1)
	rows, err := results.ReadCSV(strings.NewReader(in), "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.Targets[0].Scenario("nopersist", "set")
	if len(sc.Rounds) != 2 || sc.FailedAttempts != 2 || len(rep.Failed) != 2 {
		t.Errorf("rounds %d failed %d listed %d; want 2 2 2", len(sc.Rounds), sc.FailedAttempts, len(rep.Failed))
	}
	if rep.Failed[0].Pos.String() != "r.csv:2" || rep.Failed[1].Error != "no reply in 30s" {
		t.Errorf("failed attempts %+v", rep.Failed)
	}
}

// TestWarningsGrouped: one line per kind of doubt, "every scenario" when
// it concerns all of them alike, the scenarios named otherwise.
func TestWarningsGrouped(t *testing.T) {
	rows := slices.Concat(rowsOf("b", "base", "none", "set", 100, 101), rowsOf("b", "x", "no", "set", 90, 91),
		rowsOf("a", "y", "", "get", 80, 81))
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"fewer than 3 ok rounds: nothing dropped, and one disturbed round decides the means: every scenario (2 rounds)",
		"with fewer than 4 rounds on both sides, the significance test cannot find a difference at α = 0.05: b/x/set",
	}
	var got []string
	for _, w := range rep.Warnings {
		got = append(got, w.Error())
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// One scenario with another count: each is named, in table order.
	rows = append(rows, results.Row{Target: "a", Strategy: "y", Mode: "get", Round: 3, Status: results.StatusOK, QPS: 82})
	if rep, err = Build(rows, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Warnings[0].Error(), "fewer than 3 ok rounds: nothing dropped, and one disturbed round decides the means: b/base/set (2 rounds), b/x/set (2 rounds)"; got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
}

// TestWarningNamesAtMost: a warning names 20 scenarios, then counts the
// rest.
func TestWarningNamesAtMost(t *testing.T) {
	var rows []results.Row
	for i := range 30 {
		n := 3 + i%2 // 3 or 4 rounds: not "every scenario" alike
		rows = append(rows, rowsOf("k", fmt.Sprintf("s%02d", i), "", "set", slices.Repeat([]float64{100}, n)...)...)
	}
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Warnings[0].Error()
	if !strings.HasSuffix(got, "k/s19/set (4 rounds), and 10 more") || strings.Contains(got, "s20") {
		t.Errorf("warning %q", got)
	}
}

// TestRefusedWrites: a scenario whose rounds had writes refused (an
// insert-only command meeting existing keys) is compared with nothing:
// its overhead cells and its side-by-side ratio say so, and the report
// warns, naming it.
func TestRefusedWrites(t *testing.T) {
	five := []float64{300, 301, 302, 303, 304}
	kv := rowsOf("kvstore", "persist_always", "always", "set", five...)
	for i := range kv {
		kv[i].Conflicts = 80_000
	}
	rows := slices.Concat(kv, rowsOf("kvstore", "nopersist", "none", "set", five...),
		rowsOf("redis", "aof_always", "always", "set", 90, 91, 92, 93, 94), rowsOf("redis", "none", "none", "set", five...))
	rep, err := Build(rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
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
	if sc == nil || sc.RefusedRounds != 5 || sc.Change(MetricQPS) == nil || !sc.Change(MetricQPS).Refused {
		t.Errorf("scenario %+v", sc)
	}
}
