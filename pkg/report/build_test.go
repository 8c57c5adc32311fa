package report

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

func hasWarning(rep *Report, msg string) bool {
	return slices.ContainsFunc(rep.Warnings, func(e error) bool { return e.Error() == msg })
}

func TestAllocBaselines(t *testing.T) {
	rows := slices.Concat(
		fixture.Rows("kvstore", "nopersist_mypool", "none", "set", 200, 201, 202),
		fixture.Rows("kvstore", "persist_mypool", "everysec", "set", 100, 101, 102),
		fixture.Rows("kvstore", "nopersist_malloc", "none", "set", 150, 151, 152),
		fixture.Rows("kvstore", "persist_malloc", "everysec", "set", 75, 76, 77),
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

// TestRoundOrder: rounds arrive in any order (the orchestrator interleaves
// them); the raw table and the trimming go by round number.
func TestRoundOrder(t *testing.T) {
	rows := fixture.Rows("k", "s", "", "set", 139895, 138768, 138867, 143296, 144388)
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
	rows := fixture.Rows("k", "s", "", "set", 5, 3, 4, 1, 2)
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
	rows := slices.Concat(fixture.Rows("k", "s", "", "set", 1, 2), fixture.Rows("k", "s", "", "set", 3))
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
	rows := fixture.Rows("k", "s", "", "set", 139895, 200000)
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

// TestChangeCell: an overhead cell is the change and its verdict.
func TestChangeCell(t *testing.T) {
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
	rows := slices.Concat(fixture.Rows("b", "base", "none", "set", 100, 101), fixture.Rows("b", "x", "no", "set", 90, 91),
		fixture.Rows("a", "y", "", "get", 80, 81))
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
		rows = append(rows, fixture.Rows("k", fmt.Sprintf("s%02d", i), "", "set", slices.Repeat([]float64{100}, n)...)...)
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
