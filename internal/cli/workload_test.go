package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/control"
)

// TestBenchTests: --tests runs each named test in redis-benchmark's order
// and reports them in JSON.
func TestBenchTests(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--tests", "LPOP,set,get,lrange_100",
		"--requests", "3000", "--connections", "3", "--pipeline", "8", "--keyspace", "100", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var j output.JSONTests
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range j.Tests {
		names = append(names, x.Test)
		if x.Requests != 3000 || x.QPS <= 0 || x.LatencyUs.P50 <= 0 || x.Errors != 0 {
			t.Errorf("%+v", x)
		}
	}
	if strings.Join(names, ",") != "set,get,lpop,lrange_100" {
		t.Errorf("tests %v", names)
	}
}

// TestBenchCommandMix: --command with ratios and key patterns reports
// each command and the whole mix, in text.
func TestBenchCommandMix(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--requests", "20000", "--pipeline", "16",
		"--command", `SET __key__ "__data__"`, "--command-ratio", "1", "--command-key-pattern", "S",
		"--command", "GET __key__", "--command-ratio", "3", "--command", "get __key__")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`mix: "SET __key__ __data__" 20.0% sequential, "GET __key__" 60.0% random, "get __key__" 20.0% random`,
		"\nSET ", "\nGET ", "\nGET#2 ", "requests: 20000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

// TestBenchReadModifyWrite: --command-then makes the --command before it
// a read-modify-write reported as one RMW line; with --data-size-list and
// --verify every read gets the value written.
func TestBenchReadModifyWrite(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--requests", "10000", "--pipeline", "16", "--keyspace", "500",
		"--command", "GET __key__", "--command-then", "SET __key__ __data__", "--command", "GET __key__",
		"--data-size-list", "10:1,2000:1", "--verify")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`mix: "GET __key__ then SET __key__ __data__" 50.0% random, "GET __key__" 50.0% random`,
		"values 10:1,2000:1 (size:weight) bytes", "\nRMW ", "\nGET ", "verify failures: 0\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

// TestBenchUnsupportedCommands: a target without a command is refused
// before the run with one line naming what it lacks (exit 1).
func TestBenchUnsupportedCommands(t *testing.T) {
	srv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, port, _ := strings.Cut(srv.Addr(), ":")
	for _, args := range [][]string{
		{"--tests", "set,lpush,sadd,zadd"},
		{"--command", "SET __key__ __data__", "--command", "LPUSH l __data__", "--command", "SADD s __key__", "--command", "ZADD z 1 __key__"},
	} {
		code, stdout, stderr := execute(t, append([]string{"bench", "--port", port, "--requests", "100"}, args...)...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "has no LPUSH, SADD, ZADD") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// TestWorkloadUsageErrors: clashing or bad workload flags are usage
// errors naming what is wrong.
func TestWorkloadUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "set", "--tests", "get"}, "--mode and --tests cannot be used together"},
		{[]string{"--tests", "get", "--command", "GET x"}, "--tests and --command cannot be used together"},
		{[]string{"--mode", "get", "--command", "GET x"}, "--mode and --command cannot be used together"},
		{[]string{"--tests", "set,gett"}, `"gett"`},
		{[]string{"--command-ratio", "2"}, "--command-ratio must follow a --command"},
		{[]string{"--command", "GET x", "--command-ratio", "0"}, `"0": want a whole number >= 1`},
		{[]string{"--command", "GET x", "--command-key-pattern", "X"}, `"X": want R (random), S (sequential), P (permutation), Z (zipf), G (gaussian), L (latest) or I (insert)`},
		{[]string{"--command", "GET x", "--value-size", "32-x"}, `--value-size "32-x": want a range MIN-MAX`},
		{[]string{"--command", "GET x", "--data-size-list", "32:60,1024:0"}, `--data-size-list "1024:0": want SIZE:WEIGHT`},
		{[]string{"--command", "GET x", "--data-size-list", "32:1", "--value-size", "5"}, "--value-size and --data-size-list cannot be used together"},
		{[]string{"--mode", "set", "--value-size", "32-64"}, "value size ranges and lists need a command mix"},
		{[]string{"--command-then", "SET __key__ __data__"}, "--command-then must follow a --command"},
		{[]string{"--key-pattern", "latest"}, "--key-pattern latest needs a command mix"},
		{[]string{"--command", "GET __key__", "--command", "'"}, `"'": unbalanced quotes`},
		{[]string{"--key-pattern", "gaussian", "--key-median", "-3"}, "--key-median -3: want 0 to 99999"},
		{[]string{"--key-stddev", "10"}, "--key-median and --key-stddev need --key-pattern gaussian, not random"},
		{[]string{"--command", "GET 'x"}, "unbalanced quotes"},
		{[]string{"--mode", "set", "--workload", "ycsb-a"}, "--mode and --workload cannot be used together"},
		{[]string{"--tests", "get", "--workload", "ycsb-a"}, "--tests and --workload cannot be used together"},
		{[]string{"--command", "GET x", "--workload", "ycsb-a"}, "--command and --workload cannot be used together"},
		{[]string{"--workload", "ycsb-z"}, `no workload named "ycsb-z": want one of rb-six,`},
		{[]string{"--workload", "testdata/no-such.yaml"}, "no-such.yaml: no such file"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, firstLine(stderr), tc.want)
		}
	}
}

// TestBenchWorkload: --workload runs a named workload or a file, the
// flags given win over the workload's settings, and a bad file is a usage
// error naming its line before anything runs.
func TestBenchWorkload(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--workload", "ycsb-a", "--requests", "20000",
		"--keyspace", "1000", "--value-size", "10", "--pipeline", "16")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`mix: "GET __key__" 50.0% zipf, "SET __key__ __data__" 50.0% zipf`, "\nREAD ", "\nUPDATE ", "requests: 20000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if n := dbsize(t, r.Addr); n < 1 || n > 1000 {
		t.Errorf("%d keys written, want 1 to 1000 (--keyspace wins)", n)
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("commands:\n  - command: LPUSH l __data__\n    ratio: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = execute(t, "bench", "--port", port, "--workload", bad)
	if code != 2 || stdout != "" || !strings.Contains(stderr, bad+`:3: "lots": want a whole number`) {
		t.Errorf("bad file: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if b, err := control.Query(context.Background(), r.Addr, control.Options{}, "EXISTS", "l"); err != nil || string(b) != ":0\r\n" {
		t.Errorf("EXISTS l: %q %v: the bad file's LPUSH ran", b, err)
	}
}

// TestBenchGaussianKeys: --key-pattern gaussian with --key-median and
// --key-stddev writes keys near the median only (2000 SETs with stddev 2
// land within 10 keys of it).
func TestBenchGaussianKeys(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "--port", port, "--mode", "set", "--key-pattern", "gaussian",
		"--key-median", "500", "--key-stddev", "2", "--keyspace", "1000", "--requests", "2000", "--key-prefix", "g:", "--seed", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "keys: gaussian over 1000 keys g:NNN, values 32 bytes, gaussian median 500 stddev 2") {
		t.Errorf("no keys line in\n%s", stdout)
	}
	if n := dbsize(t, r.Addr); n < 5 || n > 21 {
		t.Errorf("%d keys written, want 5 to 21", n)
	}
	for _, k := range []string{"g:490", "g:510"} {
		if b, err := control.Query(context.Background(), r.Addr, control.Options{}, "EXISTS", k); err != nil || string(b) != ":0\r\n" {
			t.Errorf("EXISTS %s: %q %v, want :0", k, b, err)
		}
	}
}

// TestBenchListWorkloads: --list-workloads prints one line per named
// workload and runs nothing.
func TestBenchListWorkloads(t *testing.T) {
	code, stdout, stderr := execute(t, "bench", "--list-workloads", "--port", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[3], "ycsb-b ") || !strings.Contains(lines[3], "95% read") {
		t.Errorf("%q", stdout)
	}
}

// dbsize is the number of keys of the server at addr.
func dbsize(t *testing.T, addr string) int {
	t.Helper()
	b, err := control.Query(context.Background(), addr, control.Options{}, "DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(b), ":")))
	if err != nil {
		t.Fatalf("DBSIZE: %q", b)
	}
	return n
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestBenchVerify: "bench --workload ycsb-a --prefill --verify" gets no
// wrong value from redis-server; once values are corrupted, a verified
// ycsb-c run catches them and exits 1.
func TestBenchVerify(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	args := []string{"bench", "--port", port, "--keyspace", "1000", "--requests", "20000", "--seed", "9", "--verify"}
	code, stdout, stderr := execute(t, append(args, "--workload", "ycsb-a", "--prefill")...)
	if code != 0 || !strings.Contains(stdout, "verify failures: 0\n") || !strings.Contains(stdout, "misses: 0\n") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for i := range 100 {
		if _, err := control.Query(context.Background(), r.Addr, control.Options{}, "SET", fmt.Sprintf("bench:key:%03d", i), "corrupt"); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr = execute(t, append(args, "--workload", "ycsb-c")...)
	if code != 1 || !strings.Contains(stdout+stderr, `got "$7\r\ncorrupt\r\n"`) || !strings.Contains(stderr, "wrong values") {
		t.Errorf("corrupted: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
