package output

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/report/internal/fixture"
	"github.com/kvbench/kvbench/pkg/results"
)

// adaptiveCSV is the golden adaptive run, from the report's directory:
// set and get over 10 blocks each, the kvstore's nopersist, persist_no
// and persist_everysec and Redis's none and aof_everysec, on a machine
// whose drift is ten times their differences; two slices of set and one
// of get disturbed. TestAdaptiveInput writes it from adaptiveRows.
const adaptiveCSV = "../../testdata/report/synthetic/adaptive.csv"

// adaptiveColumns are the detail columns the golden adaptive run holds.
var adaptiveColumns = []string{"target", "strategy", "persistence", "mode", "round", "attempt", "status", "requests",
	"qps", "lat_p99_us", "placement", "block", "slice", "disturbed"}

// adaptiveRows are the rows of adaptiveCSV.
func adaptiveRows() []results.Row {
	scs := func(set bool) []fixture.Scenario {
		everysec := 93000.0
		if !set {
			everysec = 99000 // get hardly pays for the log
		}
		return []fixture.Scenario{
			{Target: "kvstore", Strategy: "nopersist", Persistence: "none", QPS: 100000, P99: 200},
			{Target: "kvstore", Strategy: "persist_no", Persistence: "no", QPS: 100300, P99: 201},
			{Target: "kvstore", Strategy: "persist_everysec", Persistence: "everysec", QPS: everysec, P99: 230},
			{Target: "redis", Strategy: "none", Persistence: "none", QPS: 120000, P99: 150},
			{Target: "redis", Strategy: "aof_everysec", Persistence: "everysec", QPS: 95000, P99: 190},
		}
	}
	rows := slices.Concat(fixture.Adaptive("set", 10, scs(true)), fixture.Adaptive("get", 10, scs(false)))
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Mode == "set" && r.Strategy == "persist_everysec" && r.Block == 3:
			r.Disturbed, r.QPS = "other processes 0.85 CPUs > 0.20", math.Round(r.QPS*60)/100
		case r.Mode == "get" && r.Strategy == "none" && r.Block == 7 && r.Slice == 4:
			r.Disturbed, r.QPS = "steal 0.31 CPUs > 0.10, other processes 0.40 CPUs > 0.20", math.Round(r.QPS*70)/100
		}
	}
	return rows
}

// TestAdaptiveInput checks that adaptiveCSV holds adaptiveRows, or
// writes it with -update.
func TestAdaptiveInput(t *testing.T) {
	inReportDir(t)
	rows := adaptiveRows()
	if *update {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(adaptiveColumns)
		for _, r := range rows {
			w.Write([]string{r.Target, r.Strategy, r.Persistence, r.Mode, strconv.Itoa(r.Round), strconv.Itoa(r.Attempt), r.Status,
				strconv.FormatInt(r.Requests, 10), strconv.FormatFloat(r.QPS, 'f', 2, 64), strconv.FormatFloat(r.LatP99Us, 'f', 2, 64),
				r.Placement, strconv.Itoa(r.Block), strconv.Itoa(r.Slice), r.Disturbed})
		}
		w.Flush()
		if err := os.WriteFile(adaptiveCSV, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	read, err := results.ReadFiles([]string{adaptiveCSV})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != len(rows) {
		t.Fatalf("%s: %d rows, want %d (go test -update rewrites it)", adaptiveCSV, len(read), len(rows))
	}
	for i := range rows {
		read[i].Pos = results.Pos{}
		if read[i] != rows[i] {
			t.Fatalf("%s row %d = %+v, want %+v (go test -update rewrites it)", adaptiveCSV, i+1, read[i], rows[i])
		}
	}
}

// TestAdaptiveMarkdown: the markdown of an adaptive run prints the
// comparisons (every verdict among them), the disturbed slices and the
// slices' medians, and none of the round tables' unpaired verdicts.
func TestAdaptiveMarkdown(t *testing.T) {
	rep, err := report.Build(adaptiveRows(), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Markdown(rep, &b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"- placement: server=0,client=1",
		"- slices per scenario: 20",
		"## Comparisons",
		"| kvstore persist_everysec vs nopersist ",
		"| kvstore nopersist vs redis none ",
		"| 0.93 [0.92, 0.93] | slower ",
		"| no difference larger than 3% ",
		"|      9 pairs |",
		"Disturbed slices, left out of the comparisons: 2 of 100 (other processes in 2, the worst other processes 0.85 CPUs > 0.20).",
		"Disturbed slices, left out of the comparisons: 1 of 100 (other processes in 1, the worst other processes 0.40 CPUs > 0.20; steal in 1, the worst steal 0.31 CPUs > 0.10).",
		"### kvstore slices",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{" ~", "(p=", "Trimming rule", "overhead", "side by side", "raw rounds"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("the markdown of an adaptive run has %q:\n%s", unwanted, md)
		}
	}
	// The HTML page holds the same tables, and the pictures.
	b.Reset()
	if err := HTML(rep, &b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Comparisons</h2>", "kvstore persist_everysec vs nopersist", "<svg"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the HTML page lacks %q", want)
		}
	}
}

// TestComparisonsCSV: the CSV's header is the contract's, every
// comparison a row, and a ratio without an interval has empty bounds.
func TestComparisonsCSV(t *testing.T) {
	rows := slices.Concat(fixture.Rows("k", "base", "none", "set", 100), fixture.Rows("k", "x", "everysec", "set", 90))
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ComparisonsCSV(rep, &b); err != nil {
		t.Fatal(err)
	}
	const want = "target,strategy,mode,against_target,against_strategy,metric,ratio,ratio_lo,ratio_hi,confidence,verdict,measurements\n" +
		"k,x,set,k,base,qps,0.9000,,,,undecided,1\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
}

// TestRunComparisonsCSV: "kvbench report --comparisons-csv" writes the
// golden comparisons CSV of the adaptive run.
func TestRunComparisonsCSV(t *testing.T) {
	dir := t.TempDir()
	inReportDir(t)
	if *update {
		t.Skip("golden files being rewritten")
	}
	opts := RunOptions{Inputs: []string{adaptiveCSV}, ComparisonsCSV: filepath.Join(dir, "comparisons.csv")}
	if err := Run(context.Background(), opts, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(opts.ComparisonsCSV)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "adaptive.comparisons.csv"))
	if !bytes.Equal(got, want) {
		t.Errorf("comparisons.csv differs from adaptive.comparisons.csv:\n%s", got)
	}
}
