package loadgen

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
)

// A Test is one of redis-benchmark's tests ("-t set,get"): one command
// sent with redis-benchmark's argument shapes and key names
// (__rand_int__ is its "-r" substitution).
type Test struct {
	// Name is the test's name as redis-benchmark's -t takes it.
	Name string
	// Command is what it sends.
	Command mix.Command
}

// Tests are redis-benchmark's tests in the order it runs them.
var Tests = []Test{
	{"ping_inline", mix.Command{Name: "PING_INLINE", Args: []string{"PING"}, Inline: true}},
	{"ping_mbulk", mix.Command{Name: "PING_MBULK", Args: []string{"PING"}}},
	{"set", mix.Command{Name: "SET", Args: []string{"SET", "key:__rand_int__", "__data__"}}},
	{"get", mix.Command{Name: "GET", Args: []string{"GET", "key:__rand_int__"}}},
	{"incr", mix.Command{Name: "INCR", Args: []string{"INCR", "counter:__rand_int__"}}},
	{"lpush", mix.Command{Name: "LPUSH", Args: []string{"LPUSH", "mylist", "__data__"}}},
	{"rpush", mix.Command{Name: "RPUSH", Args: []string{"RPUSH", "mylist", "__data__"}}},
	{"lpop", mix.Command{Name: "LPOP", Args: []string{"LPOP", "mylist"}}},
	{"rpop", mix.Command{Name: "RPOP", Args: []string{"RPOP", "mylist"}}},
	{"sadd", mix.Command{Name: "SADD", Args: []string{"SADD", "myset", "element:__rand_int__"}}},
	{"hset", mix.Command{Name: "HSET", Args: []string{"HSET", "myhash", "element:__rand_int__", "__data__"}}},
	{"spop", mix.Command{Name: "SPOP", Args: []string{"SPOP", "myset"}}},
	{"zadd", mix.Command{Name: "ZADD", Args: []string{"ZADD", "myzset", "__rand_int__", "element:__rand_int__"}}},
	{"zpopmin", mix.Command{Name: "ZPOPMIN", Args: []string{"ZPOPMIN", "myzset"}}},
	{"lrange_100", mix.Command{Name: "LRANGE_100", Args: []string{"LRANGE", "mylist", "0", "99"}}},
	{"lrange_300", mix.Command{Name: "LRANGE_300", Args: []string{"LRANGE", "mylist", "0", "299"}}},
	{"lrange_500", mix.Command{Name: "LRANGE_500", Args: []string{"LRANGE", "mylist", "0", "499"}}},
	{"lrange_600", mix.Command{Name: "LRANGE_600", Args: []string{"LRANGE", "mylist", "0", "599"}}},
	{"mset", mix.Command{Name: "MSET", Args: msetArgs()}},
}

// msetArgs is redis-benchmark's MSET of 10 keys.
func msetArgs() []string {
	a := []string{"MSET"}
	for range 10 {
		a = append(a, "key:__rand_int__", "__data__")
	}
	return a
}

// ParseTests parses a comma-separated list of test names, case-insensitive
// as redis-benchmark's -t, and returns the tests in redis-benchmark's
// order. "lrange" selects the four LRANGE tests, as in redis-benchmark.
func ParseTests(list string) ([]Test, error) {
	want := map[string]bool{}
	for _, w := range strings.Split(list, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		found := false
		for _, t := range Tests {
			if t.Name == w || w == "lrange" && strings.HasPrefix(t.Name, "lrange_") || w == "ping" && strings.HasPrefix(t.Name, "ping_") {
				want[t.Name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("test %q: want one of %s", w, testNames())
		}
	}
	var out []Test
	for _, t := range Tests {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no test named: want one of %s", testNames())
	}
	return out, nil
}

func testNames() string {
	var n []string
	for _, t := range Tests {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

// TestResult is one test's measured phase.
type TestResult struct {
	Test string
	Result
}

// LRangeFill is the length the list gets before the LRANGE tests, as
// redis-benchmark's "LPUSH (needed to benchmark LRANGE)".
const LRangeFill = 600

// RunTests runs tests one after the other on the server of cfg, each a run
// of cfg with the test's command as its only command, and returns their
// results. A test that reads what another writes gets that state first,
// unmeasured: GET reads the whole keyspace written (unless SET ran before
// it), the pops find at least Config.Requests elements, the LRANGE tests a
// list of at least LRangeFill. It stops at the first failed test.
func RunTests(ctx context.Context, cfg Config, tests []Test) ([]TestResult, error) {
	var names []string
	for _, t := range tests {
		names = append(names, t.Command.Args[0])
	}
	if err := mix.CheckCommands(ctx, cfg.Addr, cfg.control(), names); err != nil {
		return nil, err
	}
	var out []TestResult
	wrote := false // SET has run: the keyspace is written
	for _, t := range tests {
		if err := prepareTest(ctx, cfg, t.Name, wrote); err != nil {
			return out, fmt.Errorf("%s: preparing: %w", t.Name, err)
		}
		c := cfg
		c.Commands = []mix.Command{t.Command}
		res, err := Run(ctx, c)
		out = append(out, TestResult{Test: t.Name, Result: res})
		if err != nil {
			return out, fmt.Errorf("%s: %w", t.Name, err)
		}
		wrote = wrote || t.Name == "set"
	}
	return out, nil
}

// prepareTest gives a test the state it reads.
func prepareTest(ctx context.Context, cfg Config, test string, wrote bool) error {
	need := cfg.Requests
	if cfg.Duration > 0 {
		need = 0 // unknown: a pop may find the container empty
	}
	switch {
	case test == "get" && !wrote:
		return sendN(ctx, cfg, mix.Command{Args: []string{"SET", "key:__rand_int__", "__data__"}, KeyPattern: keyspace.Sequential}, cfg.Keyspace)
	case test == "lpop" || test == "rpop":
		return fillTo(ctx, cfg, "LLEN", "mylist", need, mix.Command{Args: []string{"LPUSH", "mylist", "__data__"}})
	case strings.HasPrefix(test, "lrange_"):
		return fillTo(ctx, cfg, "LLEN", "mylist", LRangeFill, mix.Command{Args: []string{"LPUSH", "mylist", "__data__"}})
	case test == "spop":
		return fillTo(ctx, cfg, "SCARD", "myset", need, mix.Command{Args: []string{"SADD", "myset", "element:__rand_int__"}})
	case test == "zpopmin":
		return fillTo(ctx, cfg, "ZCARD", "myzset", need, mix.Command{Args: []string{"ZADD", "myzset", "__rand_int__", "element:__rand_int__"}})
	}
	return nil
}

// fillTo sends cmd until the container key (its length asked with lenCmd)
// holds at least n elements. Elements are drawn from a permutation of all
// 12-digit numbers, so they hardly meet those of the keyspace.
func fillTo(ctx context.Context, cfg Config, lenCmd, key string, n int64, cmd mix.Command) error {
	for range 3 {
		b, err := control.Query(ctx, cfg.Addr, cfg.control(), lenCmd, key)
		if err != nil {
			return err
		}
		r, _, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if err != nil || r.Type != resp.TypeInt {
			return fmt.Errorf("%s %s: unexpected reply %s", lenCmd, key, quote(b))
		}
		if r.Int >= n {
			return nil
		}
		c := cfg
		c.Keyspace = 1e12
		c.Seed = cfg.Seed + r.Int // another pass, other elements
		cmd.KeyPattern = keyspace.Permutation
		if err := sendN(ctx, c, cmd, n-r.Int); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %s: still fewer than %d elements", lenCmd, key, n)
}

// sendN sends n requests of cmd, unmeasured.
func sendN(ctx context.Context, cfg Config, cmd mix.Command, n int64) error {
	c := cfg
	c.Commands = []mix.Command{cmd}
	c.Requests, c.Duration, c.WarmupRequests, c.Warmup, c.Rate = n, 0, 0, 0, 0
	c.Progress = nil
	c.Connections = int(min(int64(c.Connections), n))
	c.Segment, c.Segments = 0, 1
	_, err := Run(ctx, c)
	return err
}

// WriteTestsText writes one line per test: its QPS, latency percentiles
// and errors.
func WriteTestsText(w io.Writer, cfg Config, results []TestResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s\n", cfg.Addr)
	fmt.Fprintf(&b, "load: %d connections on %d threads, pipeline %d, values %d bytes, keyspace %d, seed %d\n",
		cfg.Connections, min(cfg.Threads, cfg.Connections), cfg.Pipeline, cfg.ValueSize, cfg.Keyspace, cfg.Seed)
	fmt.Fprintf(&b, "%-12s %10s %12s %9s %9s %9s %9s %9s %7s\n", "test", "requests", "QPS", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors")
	for _, r := range results {
		l := r.Latency
		fmt.Fprintf(&b, "%-12s %10d %12.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n",
			strings.ToUpper(r.Test), r.Requests, r.QPS, l.P50, l.P90, l.P99, l.P999, l.Max, r.ErrorCount())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSONTest is one test in the JSON report of RunTests: a summary row,
// as redis-benchmark's CSV has one per test.
type JSONTest struct {
	Test      string          `json:"test"`
	Requests  int64           `json:"requests"`
	QPS       float64         `json:"qps"`
	LatencyUs measure.Latency `json:"latency_us"`
	Errors    int64           `json:"errors"`
	ElapsedS  float64         `json:"elapsed_s"`
}

// JSONTests is the JSON report of RunTests.
type JSONTests struct {
	Tests    []JSONTest `json:"tests"`
	Seed     int64      `json:"seed"`
	Settings Config     `json:"settings"`
	Error    string     `json:"error,omitempty"`
}

// WriteTestsJSON writes the results as one JSONTests object; runErr, when
// set, is its error.
func WriteTestsJSON(w io.Writer, cfg Config, results []TestResult, runErr error) error {
	j := JSONTests{Tests: []JSONTest{}, Seed: cfg.Seed, Settings: cfg}
	for _, r := range results {
		j.Tests = append(j.Tests, JSONTest{Test: r.Test, Requests: r.Requests, QPS: r.QPS,
			LatencyUs: r.Latency, Errors: r.ErrorCount(), ElapsedS: r.Elapsed.Seconds()})
	}
	if runErr != nil {
		j.Error = runErr.Error()
	}
	return writeJSON(w, j)
}
