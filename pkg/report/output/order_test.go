package output

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestOrderIgnoresRowOrder: the report depends on the rows' contents, not
// their order, so "kvbench run" (rows in the shuffled run order) and
// "kvbench report" on its CSV print the same markdown.
func TestOrderIgnoresRowOrder(t *testing.T) {
	rows, err := results.ReadFiles(append(slices.Clone(seedFiles), mixedFiles...))
	if err != nil {
		t.Fatal(err)
	}
	render := func(rows []results.Row) (string, string) {
		rep, err := report.Build(rows, report.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var md, js bytes.Buffer
		if err := Markdown(rep, &md); err != nil {
			t.Fatal(err)
		}
		if err := JSON(rep, &js); err != nil {
			t.Fatal(err)
		}
		return md.String(), js.String()
	}
	// Positions name the file and line, whatever the order: keep them.
	wantMD, wantJSON := render(rows)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := slices.Clone(rows)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		md, js := render(shuffled)
		if md != wantMD || js != wantJSON {
			t.Fatalf("the report changes with the rows' order:\n%s\nwant:\n%s", md, wantMD)
		}
	}
	var targets []string
	for _, line := range strings.Split(wantMD, "\n") {
		if name, ok := strings.CutPrefix(line, "## "); ok {
			targets = append(targets, name)
		}
	}
	if want := []string{"Targets side by side", "kvstore", "redis", "valkey", "Failed attempts (3)", "Warnings"}; !slices.Equal(targets, want) {
		t.Errorf("sections %q, want %q", targets, want)
	}
}

func TestSettings(t *testing.T) {
	rows := slices.Concat(fixture.Rows("redis", "none", "none", "set", 1, 2, 3), fixture.Rows("kvstore", "none", "none", "set", 1, 2))
	for i := range rows {
		r := &rows[i]
		r.Requests, r.Pipeline, r.Keyspace, r.ValueSize = 1000, 16, 500, 64
		r.ClientHost, r.CPUModel, r.Cores, r.Kernel = "box", "Some CPU @ 2.00GHz", 8, "6.1.0-18-amd64"
		r.Connections = 1 + i%2 // differs
		r.ServerVersion = r.Target + "-1"
	}
	rows[0].ServerVersion = "redis-2"
	rows = append(rows, results.Row{Target: "redis", Strategy: "none", Persistence: "none", Mode: "set", Round: 4,
		Status: results.StatusFailed, Requests: 10, Connections: 1})
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := report.Settings{Requests: []int64{1000}, Rounds: []int{2, 4}, Pipeline: []int{16}, Connections: []int{1, 2},
		Keyspace: []int64{500}, ValueSize: []int{64}, ClientHost: []string{"box"}, CPUModel: []string{"Some CPU @ 2.00GHz"},
		Cores: []int{8}, Kernel: []string{"6.1.0-18-amd64"}}
	if !reflect.DeepEqual(rep.Settings, want) {
		t.Errorf("settings %+v\nwant %+v", rep.Settings, want)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	block := `# kvbench report

Settings:

- requests per round: 1000
- rounds per scenario: mixed (2, 4)
- pipeline: 16
- connections: mixed (1, 2)
- keyspace: 500 keys
- value size: 64 bytes
- servers: kvstore kvstore-1, redis mixed (redis-1, redis-2)
- load generator: box, Some CPU @ 2.00GHz, 8 cores, kernel 6.1.0-18-amd64

Trimming rule:`
	if !strings.HasPrefix(md.String(), block) {
		t.Errorf("markdown starts\n%.700s\nwant\n%s", md.String(), block)
	}

	// What the rows do not record is left out; nothing at all, no block.
	rep, err = report.Build(fixture.Rows("k", "s", "", "set", 1), report.Options{Lang: render.LangZH})
	if err != nil {
		t.Fatal(err)
	}
	md.Reset()
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "# kvbench 报告\n\n设置：\n\n- 每个场景轮数：1\n\n去异常规则") {
		t.Errorf("markdown starts\n%.300s", md.String())
	}
}

// TestZHHasNoEnglish: with --lang zh, no line of the report keeps an
// English sentence of the English report: every label has its
// translation, the notes and warnings too.
func TestZHHasNoEnglish(t *testing.T) {
	rows, err := results.ReadFiles(append(slices.Clone(seedFiles), mixedFiles...))
	if err != nil {
		t.Fatal(err)
	}
	// Every kind of warning and note, and a setting of each kind.
	rows = append(rows, results.Row{Target: "kvstore", Strategy: "nopersist", Persistence: "none", Mode: "mixed", Round: 1,
		Status: results.StatusFailed, Error: "boom"})
	rows = append(rows, fixture.Rows("x", "a", "none", "set", 1, 1)...)
	rows = append(rows, fixture.Rows("x", "b", "none", "set", 1, 1)...)
	rows = append(rows, fixture.Rows("x", "c", "none", "set", 1, 2, 3, 1, 2, 3, 4, 100)...)
	bound := fixture.Rows("x", "d", "always", "set", 5, 5, 6)
	bound[0].ClientBound, bound[1].QPSPerServerCPUS = true, 40
	rows = append(rows, bound...)
	refused := fixture.Rows("x", "e", "always", "set", 5, 5, 6)
	refused[0].Conflicts = 10
	rows = append(rows, refused...)
	for i := range rows {
		rows[i].Connections, rows[i].Cores, rows[i].Kernel, rows[i].ClientHost, rows[i].ServerVersion = 4, 2, "6.1", "h", "1.0"
	}
	rep, err := report.Build(rows, report.Options{Lang: render.LangZH})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	kinds := make(map[string]bool)
	for _, w := range rep.Warnings {
		kinds[w.(*report.Warning).Kind] = true
	}
	for _, k := range report.WarnKinds {
		if k != report.WarnOther && !kinds[k] {
			t.Errorf("the test covers no warning of kind %s", k)
		}
	}

	// The English words of every label, format verbs and names cut out.
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	var phrases []string
	add := func(s string) {
		for _, part := range verb.Split(s, -1) {
			for _, p := range regexp.MustCompile(`[a-zA-Z][a-zA-Z ,;'()-]{14,}`).FindAllString(part, -1) {
				phrases = append(phrases, strings.TrimSpace(p))
			}
		}
	}
	// The label sets of the parts this report has.
	en := render.LabelsOf(render.LangEN)
	for _, set := range []any{en.Tables, en.Settings, en.Side, en.Workloads, en.Warnings} {
		v := reflect.ValueOf(set)
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.String {
				add(f.String())
			}
		}
	}
	if len(phrases) < 20 {
		t.Fatalf("only %d phrases: %q", len(phrases), phrases)
	}
	rep.Options.Lang = render.LangEN
	var enMD bytes.Buffer
	if err := Markdown(rep, &enMD); err != nil {
		t.Fatal(err)
	}
	inEN := 0
	for _, p := range phrases {
		if strings.Contains(md.String(), p) {
			t.Errorf("the zh report holds English %q", p)
		}
		if strings.Contains(enMD.String(), p) {
			inEN++
		}
	}
	if inEN < len(phrases)*3/4 { // the check can fail: the English report has them
		t.Errorf("only %d of %d phrases in the English report", inEN, len(phrases))
	}
	for _, k := range report.WarnKinds {
		for _, lang := range []string{render.LangEN, render.LangZH} {
			w := &report.Warning{Kind: k, Where: []report.Subject{{Name: "x"}}}
			if k != report.WarnOther && strings.HasPrefix(w.Text(lang), render.LabelsOf(lang).Warnings.Colon) {
				t.Errorf("warning kind %s lacks a head in %s", k, lang)
			}
		}
	}
}
