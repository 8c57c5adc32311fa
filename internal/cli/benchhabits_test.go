package cli

import (
	"encoding/csv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/bench/output"
)

// TestBenchShortFlags: redis-benchmark's short flags set what its long
// ones do.
func TestBenchShortFlags(t *testing.T) {
	o := benchOptionsOf(t, "-p", "7000", "-c", "5", "-n", "100", "-P", "4", "-d", "10", "-r", "50", "-t", "set,get", "-q", "-a", "pw")
	c := o.Config
	if c.Addr != "127.0.0.1:7000" || c.Connections != 5 || c.Requests != 100 || c.Pipeline != 4 || c.ValueSize != 10 ||
		c.Keyspace != 50 || !o.Quiet || c.Password != "pw" || o.Tests != "set,get" {
		t.Errorf("options %+v, tests %v, quiet %v", c, o.Tests, o.Quiet)
	}
	for _, args := range [][]string{
		{"-n", "10", "--", "SET", "__key__", "__data__"},
		{"-n", "10", "SET", "__key__", "__data__"}, // redis-benchmark's habit: no --
	} {
		o = benchOptionsOf(t, args...)
		if len(o.Config.Commands) != 1 || !slices.Equal(o.Config.Commands[0].Args, []string{"SET", "__key__", "__data__"}) || o.Config.Requests != 10 {
			t.Errorf("%q: commands %+v, %d requests", args, o.Config.Commands, o.Config.Requests)
		}
	}
	// The flags end at the command: a dash after it is the command's.
	if o = benchOptionsOf(t, "-n", "10", "ZADD", "z", "-1", "__key__"); len(o.Config.Commands) != 1 || !slices.Equal(o.Config.Commands[0].Args, []string{"ZADD", "z", "-1", "__key__"}) {
		t.Errorf("a command with a negative argument: %+v", o.Config.Commands)
	}
	code, stdout, _ := execute(t, "bench", "--help")
	if first := strings.Join(strings.SplitN(stdout, "\n", 10), "\n"); code != 0 || !strings.Contains(first, "-h is this help") {
		t.Errorf("bench --help does not say early that -h is help:\n%s", first)
	}
}

func TestBenchHabitsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "set", "--", "GET", "__key__"}, `a command to send ("GET __key__", after the flags) and --mode cannot be used together`},
		{[]string{"--command", "GET __key__", "GET", "__key__"}, `a command to send ("GET __key__", after the flags) and --command`},
		{[]string{"-q", "--output", "json"}, "--quiet and --output json cannot be used together"},
		{[]string{"--output", "xml"}, `--output "xml": want text, json or csv`},
		{[]string{"-h", "127.0.0.1"}, ""}, // help, exit 0: checked below
	} {
		code, stdout, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if tc.want == "" {
			if code != 0 || !strings.Contains(stdout, "Usage:") {
				t.Errorf("kvbench bench %s: exit %d, want help", strings.Join(tc.args, " "), code)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench bench %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestBenchCSVAndQuiet runs bench against redis-server the way
// redis-benchmark users do: a command after the flags, the CSV report (a header
// and one row per command or test) and -q (one line per command or
// test).
func TestBenchCSVAndQuiet(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	readCSV := func(args ...string) [][]string {
		t.Helper()
		code, stdout, stderr := execute(t, append([]string{"bench", "-p", port}, args...)...)
		if code != 0 {
			t.Fatalf("kvbench bench %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil {
			t.Fatalf("CSV: %v\n%s", err, stdout)
		}
		if !slices.Equal(rows[0], output.CSVHeader) {
			t.Errorf("header %v", rows[0])
		}
		for _, row := range rows[1:] {
			for i, cell := range row[1:] {
				if rows[0][i+1] == "qps_counts_refused" {
					if _, err := strconv.ParseBool(cell); err != nil {
						t.Errorf("row %v: column qps_counts_refused %q is not true or false", row, cell)
					}
					continue
				}
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("row %v: column %s %q is not a number", row, rows[0][i+1], cell)
				}
			}
		}
		return rows[1:]
	}
	rows := readCSV("-n", "3000", "-r", "100", "--output", "csv",
		"--command", "SET __key__ __data__", "--command-ratio", "1", "--command", "GET __key__", "--command-ratio", "2")
	if len(rows) != 2 || rows[0][0] != "SET" || rows[1][0] != "GET" {
		t.Fatalf("rows %v", rows)
	}
	set, _ := strconv.Atoi(rows[0][1])
	get, _ := strconv.Atoi(rows[1][1])
	if set+get != 3000 {
		t.Errorf("requests %d + %d, want 3000", set, get)
	}
	if rows := readCSV("-n", "1000", "-r", "100", "-t", "set,get,incr", "--output", "csv"); len(rows) != 3 || rows[2][0] != "INCR" || rows[2][1] != "1000" {
		t.Errorf("tests rows %v", rows)
	}
	if rows := readCSV("-n", "500", "-r", "50", "--output", "csv", "--", "LPUSH", "mylist", "__data__"); len(rows) != 1 || rows[0][0] != "LPUSH" || rows[0][1] != "500" {
		t.Errorf("rows of a command after --: %v", rows)
	}
	line := regexp.MustCompile(`^([A-Z_0-9]+): [0-9.]+ requests per second, p50=[0-9.]+ us$`)
	for _, args := range [][]string{
		{"-q", "-n", "1000", "-r", "100", "-t", "set,get"},
		{"-q", "-n", "1000", "-r", "100", "--", "SET", "__key__", "__data__"},
		{"-q", "-n", "1000", "-r", "100", "SET", "__key__", "__data__"},
		{"-q", "-n", "1000", "-r", "100", "--mode", "set"},
	} {
		code, stdout, stderr := execute(t, append([]string{"bench", "-p", port}, args...)...)
		if code != 0 {
			t.Fatalf("kvbench bench %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		want := 1
		if args[len(args)-1] == "set,get" {
			want = 2
		}
		if len(lines) != want {
			t.Errorf("kvbench bench %s: %d lines, want %d:\n%s", strings.Join(args, " "), len(lines), want, stdout)
		}
		for _, l := range lines {
			if m := line.FindStringSubmatch(l); m == nil || !strings.Contains("SET GET", m[1]) {
				t.Errorf("kvbench bench %s: line %q", strings.Join(args, " "), l)
			}
		}
	}
}
