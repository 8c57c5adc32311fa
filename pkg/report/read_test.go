package report

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocarina/gocsv"
)

const hdr = "target,strategy,mode,round,status,qps\n"

// TestReadBadInput gives every kind of bad detail CSV and the exact error
// it must produce: file and line first, never a panic.
func TestReadBadInput(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // the whole message
		is    error
	}{
		{"non-numeric qps", hdr + "kvstore,nopersist,set,1,ok,1.5\nkvstore,nopersist,set,2,ok,abc\n",
			`results/a.csv:3: column qps: "abc" is not a number`, ErrNotNumber},
		{"NaN is not a number", hdr + "kvstore,nopersist,set,1,ok,NaN\n",
			`results/a.csv:2: column qps: "NaN" is not a number`, ErrNotNumber},
		{"Inf is not a number", hdr + "kvstore,nopersist,set,1,ok,+Inf\n",
			`results/a.csv:2: column qps: "+Inf" is not a number`, ErrNotNumber},
		{"non-integer round", hdr + "kvstore,nopersist,set,1.5,ok,100\n",
			`results/a.csv:2: column round: "1.5" is not an integer`, ErrNotInteger},
		{"optional column checked too", "target,strategy,mode,round,status,qps,lat_p99_us\nkvstore,nopersist,set,1,ok,100,fast\n",
			`results/a.csv:2: column lat_p99_us: "fast" is not a number`, ErrNotNumber},
		{"line numbers count quoted newlines", hdr + "kvstore,\"no\npersist\",set,1,ok,100\nkvstore,nopersist,set,2,ok,x\n",
			`results/a.csv:4: column qps: "x" is not a number`, ErrNotNumber},
		{"missing required column", "target,strategy,mode,round,qps\nkvstore,nopersist,set,1,100\n",
			`results/a.csv:1: missing required column "status"`, ErrMissingColumn},
		{"two missing columns", "target,strategy,round,status\n",
			"results/a.csv:1: missing required column \"mode\"\nresults/a.csv:1: missing required column \"qps\"", ErrMissingColumn},
		{"duplicate header column", "target,strategy,mode,round,status,qps,qps\n",
			`results/a.csv:1: column qps: bad value: the column appears twice`, ErrBadValue},
		{"empty file", "",
			`results/a.csv:1: empty file: no header line`, ErrEmpty},
		{"blank lines only", "\n\n",
			`results/a.csv:1: empty file: no header line`, ErrEmpty},
		{"not CSV: a bare quote", hdr + "kvstore,no\"persist,set,1,ok,1\n",
			`results/a.csv:2: not CSV: bare " in non-quoted-field`, ErrNotCSV},
		{"not CSV: ragged rows", hdr + "kvstore,nopersist,set,1,ok\n",
			`results/a.csv:2: not CSV: wrong number of fields`, ErrNotCSV},
		{"not CSV: prose", "This is a report, not data.\n",
			`results/a.csv:1: not CSV: the first line "This is a report, not data." is not a detail CSV header (want columns target, strategy, mode, round, status, qps)`, ErrNotCSV},
		{"not CSV: a single word", "hello\n",
			`results/a.csv:1: not CSV: the first line "hello" is not a detail CSV header (want columns target, strategy, mode, round, status, qps)`, ErrNotCSV},
		{"not CSV: binary", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
			`results/a.csv:1: not CSV: binary data`, ErrNotCSV},
		{"not CSV: invalid UTF-8 header", "target,strategy,mode,round,status,qps,\xff\xfe\n",
			`results/a.csv:1: not CSV: the header is not UTF-8 text`, ErrNotCSV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tt.input), "results/a.csv")
			checkError(t, err, tt.want, tt.is)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Pos.File != "results/a.csv" || ie.Pos.Line < 1 {
				t.Errorf("error %v carries no position", err)
			}
		})
	}
}

// TestBuildBadInput covers the errors found between rows: duplicates,
// empty keys, conflicting descriptions, within a file and across files.
func TestBuildBadInput(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
		is    error
	}{
		{"duplicate ok round in one file",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,100\nkvstore,nopersist,set,2,ok,100\nkvstore,nopersist,set,1,ok,101\n"},
			"a.csv:4: duplicate round: kvstore/nopersist/set round 1 already has an ok row at a.csv:2", ErrDuplicate},
		{"duplicate ok round across files",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,100\n", "b.csv": hdr + "kvstore,nopersist,set,1,ok,100\n"},
			"b.csv:2: duplicate round: kvstore/nopersist/set round 1 already has an ok row at a.csv:2", ErrDuplicate},
		{"ok row without QPS",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,1,ok,\n"},
			"a.csv:2: column qps: bad value: an ok row needs a positive QPS, got 0", ErrBadValue},
		{"empty target",
			map[string]string{"a.csv": hdr + ",nopersist,set,1,ok,100\n"},
			"a.csv:2: column target: bad value: empty", ErrBadValue},
		{"round zero",
			map[string]string{"a.csv": hdr + "kvstore,nopersist,set,0,ok,100\n"},
			"a.csv:2: column round: bad value: 0 (rounds count from 1)", ErrBadValue},
		{"one strategy, two persistence settings",
			map[string]string{"a.csv": "target,strategy,persistence,mode,round,status,qps\nkvstore,p,no,set,1,ok,100\nkvstore,p,always,set,2,ok,100\n"},
			`a.csv:3: column persistence: conflicting strategy description: strategy p of kvstore is "always" here but "no" at a.csv:2`, ErrConflict},
		{"header only",
			map[string]string{"a.csv": hdr},
			"empty: no detail rows in a.csv", ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var inputs []string
			for _, name := range slices.Sorted(maps.Keys(tt.files)) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(tt.files[name]), 0o644); err != nil {
					t.Fatal(err)
				}
				inputs = append(inputs, name)
			}
			t.Chdir(dir)
			err := Run(context.Background(), RunOptions{Inputs: inputs}, new(bytes.Buffer))
			checkError(t, err, tt.want, tt.is)
		})
	}
}

// checkError wants err to read exactly want and to wrap is.
func checkError(t *testing.T, err error, want string, is error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, is) {
		t.Errorf("error %v is not %v", err, is)
	}
}

func TestRunBadInvocation(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	if err := os.WriteFile(good, []byte(hdr+"kvstore,nopersist,set,1,ok,100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts RunOptions
		want string
		is   error
	}{
		{"no files match", RunOptions{Inputs: []string{filepath.Join(dir, "results", "*.csv")}},
			`no files match "` + filepath.Join(dir, "results", "*.csv") + `"`, ErrNoFiles},
		{"no argument", RunOptions{}, "no files match: no detail CSV given", ErrNoFiles},
		{"missing file", RunOptions{Inputs: []string{filepath.Join(dir, "nope.csv")}},
			"read detail CSV: open " + filepath.Join(dir, "nope.csv") + ": no such file or directory", os.ErrNotExist},
		{"bad format", RunOptions{Inputs: []string{good}, Format: "xml"},
			`bad option: format "xml" (want md, csv or json)`, ErrFormat},
		{"bad language", RunOptions{Inputs: []string{good}, Report: Options{Lang: "fr"}},
			`bad option: language "fr" (want en or zh)`, ErrFormat},
		{"bad chart name", RunOptions{Inputs: []string{good}, Chart: "chart.gif"},
			`bad option: chart "chart.gif": the file name must end in .svg or .png`, ErrFormat},
		{"bad baseline syntax", RunOptions{Inputs: []string{good}, Baselines: "kvstore"},
			`bad option: baseline "kvstore": want target=strategy`, ErrFormat},
		{"unknown baseline strategy", RunOptions{Inputs: []string{good}, Baselines: "kvstore=persist_no"},
			`bad option: baseline kvstore=persist_no: target kvstore has no strategy "persist_no" (it has nopersist)`, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.opts, new(bytes.Buffer))
			checkError(t, err, tt.want, tt.is)
		})
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
	if _, err := ReadCSV(strings.NewReader(in), "r.csv"); err == nil {
		t.Error("a non-numeric qps in a failed row should still be reported")
	}
	in = strings.Replace(in, "abc-is-checked-anyway", "", 1)
	rows, err := ReadCSV(strings.NewReader(in), "r.csv")
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

// TestReadColumns: any order, a subset, unknown columns, a BOM, spaces.
func TestReadColumns(t *testing.T) {
	in := "\ufeff qps ,host,status,round,mode,strategy,target,us_per_op\n" +
		"150000.5,box,ok,3,get,nopersist,kvstore,6.66\n"
	rows, err := ReadCSV(strings.NewReader(in), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := DetailRow{Target: "kvstore", Strategy: "nopersist", Mode: "get", Round: 3, Status: "ok",
		QPS: 150000.5, UsPerOp: 6.66, Pos: Pos{File: "c.csv", Line: 2}}
	if len(rows) != 1 || rows[0] != want {
		t.Errorf("got %+v\nwant %+v", rows, want)
	}
}

// TestDetailColumns: the documented column list is DetailRow's csv tags,
// in order.
func TestDetailColumns(t *testing.T) {
	var tags []string
	rt := reflect.TypeFor[DetailRow]()
	for i := range rt.NumField() {
		if tag := rt.Field(i).Tag.Get("csv"); tag != "-" {
			tags = append(tags, tag)
		}
	}
	if !slices.Equal(tags, DetailColumns) {
		t.Errorf("csv tags %v\nDetailColumns %v", tags, DetailColumns)
	}
}

// TestGocsvRoundTrip: rows written by gocsv, as the orchestrator writes
// them, read back unchanged.
func TestGocsvRoundTrip(t *testing.T) {
	in := []DetailRow{
		{RunID: "r1", StartedAt: "2026-03-07T06:25:49Z", Target: "kvstore", Strategy: "persist_no", Persistence: "no",
			Alloc: "mypool", Mode: "set", Round: 1, Attempt: 1, Status: "ok", Requests: 1000000, Pipeline: 128,
			Connections: 4, Keyspace: 1000000, ValueSize: 256, Seed: 12346, ElapsedS: 7.148, QPS: 139895,
			UsPerOp: 7.15, LatP50Us: 850.5, LatP99Us: 2100, LatP999Us: 3300.25, LatMaxUs: 9000, PrefillS: 0,
			ServerVersion: "kvbench (devel)", ServerConfig: "appendfsync=no"},
		{RunID: "r1", Target: "kvstore", Strategy: "persist_no", Mode: "get", Round: 1, Attempt: 1,
			Status: "failed", Error: `verify failed: key "k,1"`, Misses: 3, VerifyFailures: 2, Errors: 1, Conflicts: 7},
	}
	var buf bytes.Buffer
	if err := gocsv.Marshal(in, &buf); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != strings.Join(DetailColumns, ",") {
		t.Errorf("gocsv header %s", first)
	}
	out, err := ReadCSV(&buf, "g.csv")
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i].Pos = Pos{}
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", out, in)
	}
}
