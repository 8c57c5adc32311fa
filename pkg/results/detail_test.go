package results

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocarina/gocsv"
	"github.com/kvbench/kvbench/internal/testutil"
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
		{"not a bool", "target,strategy,mode,round,status,qps,flushed\nkvstore,nopersist,set,1,ok,100,yes please\n",
			`results/a.csv:2: column flushed: bad value: "yes please": want true or false`, ErrBadValue},
		{"not CSV: a bare quote", hdr + "kvstore,no\"persist,set,1,ok,1\n",
			`results/a.csv:2: not CSV: bare " in non-quoted-field`, ErrNotCSV},
		{"not CSV: ragged rows", hdr + "kvstore,nopersist,set,1,ok\n",
			`results/a.csv:2: not CSV: 5 fields, the header has 6`, ErrNotCSV},
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
			testutil.CheckError(t, err, tt.want, tt.is)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Pos.File != "results/a.csv" || ie.Pos.Line < 1 {
				t.Errorf("error %v carries no position", err)
			}
		})
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
	want := Row{Target: "kvstore", Strategy: "nopersist", Mode: "get", Round: 3, Status: "ok",
		QPS: 150000.5, UsPerOp: 6.66, Pos: Pos{File: "c.csv", Line: 2}}
	if len(rows) != 1 || rows[0] != want {
		t.Errorf("got %+v\nwant %+v", rows, want)
	}
}

// TestColumnsAppendOnly: the columns of the first detail CSVs stay where
// they were, in order; later columns only ever follow them.
func TestColumnsAppendOnly(t *testing.T) {
	first := []string{
		"run_id", "started_at", "target", "strategy", "persistence", "alloc", "mode",
		"round", "attempt", "status", "error", "requests", "pipeline", "connections",
		"keyspace", "value_size", "seed", "elapsed_s", "qps", "us_per_op",
		"lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "errors",
		"conflicts", "misses", "verify_failures", "prefill_s", "server_version",
		"server_config",
	}
	if len(Columns) < len(first) || !slices.Equal(Columns[:len(first)], first) {
		t.Errorf("Columns %v\ndo not start with the first schema %v", Columns, first)
	}
	for _, c := range RequiredColumns {
		if !slices.Contains(first, c) {
			t.Errorf("required column %s is not in the first schema: old CSVs would not read", c)
		}
	}
}

// TestWriter: rows written by Writer read back unchanged, at the lines the
// writer gave them; an existing file is never overwritten.
func TestWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	in := []Row{
		{Target: "kvstore", Strategy: "nopersist", Mode: "set", Round: 1, Status: StatusOK, QPS: 1e5},
		{Target: "redis", Strategy: "none", Mode: "get", Round: 1, Status: StatusFailed, Error: "ready:\nno PING\r\n"},
		{Target: "redis", Strategy: "none", Mode: ModeWorkload, Round: 1, Status: StatusOK, QPS: 2e5, Workload: "ycsb-a", Command: "READ"},
		{Target: "kvstore", Strategy: "nopersist", Mode: ModeWorkload, Round: 1, Status: StatusUnsupported, Workload: "rb-six", Command: CommandTotal},
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if in[1].Error != "ready: | no PING" || in[1].Pos != (Pos{File: path, Line: 3}) {
		t.Errorf("second row after Write: error %q at %v", in[1].Error, in[1].Pos)
	}
	out, err := ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("read back:\n%+v\nwant\n%+v", out, in)
	}
	if _, err := Create(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing file: %v, want fs.ErrExist", err)
	}
}

// TestGocsvRoundTrip: rows written by gocsv, as the orchestrator writes
// them, read back unchanged.
func TestGocsvRoundTrip(t *testing.T) {
	in := []Row{
		{RunID: "r1", StartedAt: "2026-03-07T06:25:49Z", Target: "kvstore", Strategy: "persist_no", Persistence: "no",
			Alloc: "mypool", Mode: "set", Round: 1, Attempt: 1, Status: "ok", Requests: 1000000, Pipeline: 128,
			Connections: 4, Keyspace: 1000000, ValueSize: 256, Seed: 12346, ElapsedS: 7.148, QPS: 139895,
			UsPerOp: 7.15, LatP50Us: 850.5, LatP99Us: 2100, LatP999Us: 3300.25, LatMaxUs: 9000, PrefillS: 0,
			ServerVersion: "kvbench (devel)", ServerConfig: "appendfsync=no", Flushed: true},
		{RunID: "r1", Target: "kvstore", Strategy: "persist_no", Mode: "get", Round: 1, Attempt: 1,
			Status: "failed", Error: `verify failed: key "k,1"`, Misses: 3, VerifyFailures: 2, Errors: 1, Conflicts: 7},
	}
	var buf bytes.Buffer
	if err := gocsv.Marshal(in, &buf); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != strings.Join(Columns, ",") {
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

// TestMachineColumns: the load generator's machine, four columns appended
// together, in this order.
func TestMachineColumns(t *testing.T) {
	i := slices.Index(Columns, "client_host")
	if i < 0 || i+4 > len(Columns) || !slices.Equal(Columns[i:i+4], []string{"client_host", "cpu_model", "cores", "kernel"}) {
		t.Errorf("Columns %v lack client_host, cpu_model, cores, kernel in a row", Columns)
	}
	if slices.Index(Columns, "server_config") > i {
		t.Errorf("the machine columns come before server_config: %v", Columns)
	}
	in := "target,strategy,mode,round,status,qps,client_host,cpu_model,cores,kernel\n" +
		"kvstore,nopersist,set,1,ok,100,box,\"Intel(R) Xeon(R) CPU @ 2.20GHz, rev 1\",8,6.1.0-18-amd64\n"
	rows, err := ReadCSV(strings.NewReader(in), "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.ClientHost != "box" || r.CPUModel != "Intel(R) Xeon(R) CPU @ 2.20GHz, rev 1" || r.Cores != 8 || r.Kernel != "6.1.0-18-amd64" {
		t.Errorf("row %+v", r)
	}
}

// TestMerge: the errors of two readers of the same files come out in the
// files' order, by line, at most MaxErrors of them and the rest counted.
func TestMerge(t *testing.T) {
	var parse, check ErrorList
	for line := 2; line < 32; line += 2 {
		parse.At(Pos{File: "b.csv", Line: line}, "qps", ErrNotNumber)
		check.At(Pos{File: "a.csv", Line: line + 1}, "round", ErrBadValue)
	}
	err := Merge([]string{"a.csv", "b.csv"}, parse.Err(), nil, check.Err())
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxErrors+1 || lines[0] != "a.csv:3: column round: bad value" || lines[14] != "a.csv:31: column round: bad value" ||
		lines[15] != "b.csv:2: column qps: is not a number" || lines[MaxErrors] != "and 10 more errors" {
		t.Errorf("merged:\n%s", err)
	}
	if !errors.Is(err, ErrNotNumber) || !errors.Is(err, ErrBadValue) {
		t.Errorf("the merge lost the sentinels: %v", err)
	}
	if Merge(nil, nil, nil) != nil {
		t.Error("no errors should merge to nil")
	}
}
