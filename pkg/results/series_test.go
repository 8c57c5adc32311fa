package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

const seriesHdr = "target,strategy,mode,round,attempt,command,t_s,requests\n"

// TestSeriesRoundTrip: rows written by SeriesWriter read back equal, empty
// cells as nil, each with its line.
func TestSeriesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvbench_series_20260101_000000.csv")
	w, err := CreateSeries(path)
	if err != nil {
		t.Fatal(err)
	}
	q, p99 := 1234.5, 87.25
	in := []SeriesRow{
		{RunID: "r", Target: "redis", Strategy: "aof_everysec", Mode: "set", Round: 1, Attempt: 1, Command: "SET", TS: 0, Requests: 10, QPS: &q, P99Us: &p99, Events: EventAOFRewrite + EventSep + EventDelayedFsync},
		{RunID: "r", Target: "redis", Strategy: "aof_everysec", Mode: "set", Round: 1, Attempt: 1, Command: "SET", TS: 0.1, Node: "127.0.0.1:7000"},
	}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := ReadSeriesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d rows, want 2", len(out))
	}
	if *out[0].QPS != q || *out[0].P99Us != p99 || out[0].P50Us != nil || out[1].QPS != nil || out[1].Node != in[1].Node || out[1].Pos.Line != 3 {
		t.Errorf("read back %+v\n%+v", out[0], out[1])
	}
	if got := SplitEvents(out[0].Events); len(got) != 2 || got[0] != EventAOFRewrite || got[1] != EventDelayedFsync {
		t.Errorf("events %q", out[0].Events)
	}
	if got := SeriesPath("res/kvbench_detail_20260101_000000.csv"); got != filepath.Join("res", "kvbench_series_20260101_000000.csv") {
		t.Errorf("SeriesPath %q", got)
	}
	if got := SeriesPath("res/mine.csv"); got != "" {
		t.Errorf("SeriesPath of a file not named as a detail CSV: %q", got)
	}
}

// TestSeriesBadInput: every error names the file and line (and column).
func TestSeriesBadInput(t *testing.T) {
	tests := []struct {
		name, input, want string
		is                error
	}{
		{"empty", "", `s.csv:1: empty file: no header line`, ErrEmpty},
		{"missing column", "target,strategy,mode,round,attempt,command,t_s\nredis,none,set,1,1,SET,0\n",
			`s.csv:1: missing required column "requests"`, ErrMissingColumn},
		{"bad number", seriesHdr + "redis,none,set,1,1,SET,0,5\nredis,none,set,1,1,SET,x,5\n",
			`s.csv:3: column t_s: "x" is not a number`, ErrNotNumber},
		{"bad optional number", seriesHdr[:len(seriesHdr)-1] + ",p99_us\nredis,none,set,1,1,SET,0,5,fast\n",
			`s.csv:2: column p99_us: "fast" is not a number`, ErrNotNumber},
		{"bad integer", seriesHdr + "redis,none,set,1,1,SET,0,5.5\n",
			`s.csv:2: column requests: "5.5" is not an integer`, ErrNotInteger},
		{"not a series CSV", "a,b\n1,2\n", `s.csv:1: not CSV: the first line "a,b" is not a series CSV header (want columns target, strategy, mode, round, attempt, command, t_s, requests)`, ErrNotCSV},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSeriesCSV(strings.NewReader(tc.input), "s.csv")
			testutil.CheckError(t, err, tc.want, tc.is)
		})
	}
}

// TestOldDetailReads: a detail CSV of an earlier version, without the
// stall columns, reads with them empty.
func TestOldDetailReads(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "compare", "before", "kvbench_detail_20261130_120000.csv")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("stalls")) {
		t.Fatalf("%s has the stall columns: not an old file", path)
	}
	rows, err := ReadCSV(bytes.NewReader(raw), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		if r.Stalls != nil || r.LongestStallMs != nil {
			t.Errorf("%v: stall columns set from a file without them", r.Pos)
		}
	}
	// And a 0 that was written reads as a measured 0.
	rows, err = ReadCSV(strings.NewReader(hdr[:len(hdr)-1]+",stalls,longest_stall_ms\nkvstore,nopersist,set,1,ok,100,0,0\nkvstore,nopersist,set,2,ok,100,,\n"), "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Stalls == nil || *rows[0].Stalls != 0 || rows[0].LongestStallMs == nil || rows[1].Stalls != nil {
		t.Errorf("stall columns read as %v %v / %v", rows[0].Stalls, rows[0].LongestStallMs, rows[1].Stalls)
	}
	var ie *InputError
	_, err = ReadCSV(strings.NewReader(hdr[:len(hdr)-1]+",stalls\nkvstore,nopersist,set,1,ok,100,many\n"), "a.csv")
	if !errors.As(err, &ie) || ie.Pos.Line != 2 || ie.Column != "stalls" {
		t.Errorf("bad stalls cell: %v", err)
	}
}
