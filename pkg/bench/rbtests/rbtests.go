// Package rbtests is redis-benchmark's tests ("-t set,get,lpush"): the
// commands it sends, with its argument shapes and key names, and the
// state each test reads before it runs (the keyspace for GET, a list for
// the pops and LRANGE), so that "kvbench bench --tests" measures what
// redis-benchmark measures, through kvbench's engine.
//
// Against a cluster (loadgen.Config.Cluster) the tests name their keys as
// redis-benchmark's --cluster does: a hash tag after the first word,
// "key:{tag}:__rand_int__", "mylist:{tag}" (ClusterTest). Each request
// goes to one master with all its keys, whose tag (mix.PlaceholderTag)
// is one of that master's slots: a constant key such as mylist is one
// list per master, MSET's ten keys share a slot, and the requests of a
// test spread over the masters (by key, or in turn for a constant key).
package rbtests

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
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

// ClusterTest is t as it runs against a cluster: its keys carry
// mix.PlaceholderTag after their first word, as redis-benchmark's
// --cluster names them.
func ClusterTest(t Test) Test {
	args := slices.Clone(t.Command.Args)
	for i := range args {
		if i == 0 || t.Name == "mset" && i%2 == 0 || t.Name != "mset" && i > 1 || strings.HasPrefix(t.Name, "ping") {
			continue
		}
		args[i] = clusterKey(args[i])
	}
	t.Command.Args = args
	return t
}

// clusterKey is key with redis-benchmark's cluster tag: ":{tag}" after
// its first word.
func clusterKey(key string) string {
	if w, rest, ok := strings.Cut(key, ":"); ok {
		return w + ":" + mix.PlaceholderTag + ":" + rest
	}
	return key + ":" + mix.PlaceholderTag
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
	loadgen.Result
}

// LRangeFill is the length the list gets before the LRANGE tests, as
// redis-benchmark's "LPUSH (needed to benchmark LRANGE)".
const LRangeFill = 600

// RunTests runs tests one after the other on the server of cfg, each a run
// of cfg with the test's command as its only command, and returns their
// results. A test that reads what another writes gets that state first,
// unmeasured: GET reads the whole keyspace written (unless SET ran before
// it), the pops find at least loadgen.Config.Requests elements, the LRANGE tests a
// list of at least LRangeFill. It stops at the first failed test.
func RunTests(ctx context.Context, cfg loadgen.Config, tests []Test) ([]TestResult, error) {
	var names []string
	for _, t := range tests {
		names = append(names, t.Command.Args[0])
	}
	if err := mix.CheckCommands(ctx, cfg.Addr, cfg.Control(), names); err != nil {
		return nil, err
	}
	var out []TestResult
	wrote := false // SET has run: the keyspace is written
	for _, t := range tests {
		if cfg.Cluster {
			t = ClusterTest(t)
		}
		if err := prepareTest(ctx, cfg, t, wrote); err != nil {
			return out, fmt.Errorf("%s: preparing: %w", t.Name, err)
		}
		c := cfg
		c.Commands = []mix.Command{t.Command}
		res, err := loadgen.Run(ctx, c)
		out = append(out, TestResult{Test: t.Name, Result: res})
		if err != nil {
			return out, fmt.Errorf("%s: %w", t.Name, err)
		}
		wrote = wrote || t.Name == "set"
	}
	return out, nil
}

// prepareTest gives test t the state it reads: on a cluster, on every
// master, under its tag.
func prepareTest(ctx context.Context, cfg loadgen.Config, t Test, wrote bool) error {
	need := cfg.Requests
	if cfg.Duration > 0 {
		need = 0 // unknown: a pop may find the container empty
	}
	key := t.Command.Args[min(1, len(t.Command.Args)-1)]
	fill := func(lenCmd string, n int64, args ...string) error {
		cmd := Test{Name: t.Name, Command: mix.Command{Args: args}}
		if cfg.Cluster {
			cmd = ClusterTest(cmd)
		}
		return prefill.FillTo(ctx, cfg, lenCmd, key, n, cmd.Command)
	}
	switch test := t.Name; {
	case test == "get" && !wrote:
		set := Test{Name: "set", Command: mix.Command{Args: []string{"SET", "key:__rand_int__", "__data__"}, KeyPattern: keyspace.Sequential}}
		if cfg.Cluster {
			set = ClusterTest(set)
		}
		return prefill.SendN(ctx, cfg, set.Command, cfg.Keyspace)
	case test == "lpop" || test == "rpop":
		return fill("LLEN", need, "LPUSH", "mylist", "__data__")
	case strings.HasPrefix(test, "lrange_"):
		return fill("LLEN", LRangeFill, "LPUSH", "mylist", "__data__")
	case test == "spop":
		return fill("SCARD", need, "SADD", "myset", "element:__rand_int__")
	case test == "zpopmin":
		return fill("ZCARD", need, "ZADD", "myzset", "__rand_int__", "element:__rand_int__")
	}
	return nil
}
