package workload

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
)

// config is a short run against addr with the workload w applied.
func config(addr string, w *Workload, requests int64) loadgen.Config {
	c := loadgen.DefaultConfig()
	c.Addr, c.Requests, c.Keyspace, c.Connections, c.Pipeline, c.Seed = addr, requests, 1000, 4, 16, 3
	c.ContinueOnError = false
	w.Apply(&c, func(string) bool { return false })
	return c
}

// TestBuiltinRun: every named workload parses, has a description, and
// runs against redis-server without an error reply, every command of its
// mix getting requests; an RMW operation is two requests.
func TestBuiltinRun(t *testing.T) {
	r := testutil.StartRedis(t)
	list, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	if got := strings.Join(names, ","); got != "rb-six,set-get-hset-hget,ycsb-a,ycsb-b,ycsb-c,ycsb-d,ycsb-f" {
		t.Errorf("workloads %s", got)
	}
	for _, i := range list {
		t.Run(i.Name, func(t *testing.T) {
			if i.Description == "" {
				t.Error("no description")
			}
			w, err := Load(i.Name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := loadgen.Run(context.Background(), config(r.Addr, w, 20_000))
			if err != nil {
				t.Fatal(err)
			}
			want := int64(20_000)
			for _, c := range res.Commands {
				if c.Name == "RMW" {
					want += c.Requests
				}
			}
			if res.Requests != want || len(res.Commands) != len(w.Commands) {
				t.Fatalf("%d requests, want %d; %d commands", res.Requests, want, len(res.Commands))
			}
			for _, c := range res.Commands {
				if c.Requests == 0 || c.Errors != 0 {
					t.Errorf("%s: %d requests, %d errors", c.Name, c.Requests, c.Errors)
				}
			}
		})
	}
}

// TestYCSBVerified: each YCSB workload's operations are within 1 point
// of its ratios over 100,000 of them, on 1000-byte values, and after a
// prefill every read gets the value written (ycsb-d's reads of the newest
// keys included): no miss, no wrong value.
func TestYCSBVerified(t *testing.T) {
	r := testutil.StartRedis(t)
	for _, tc := range []struct {
		name    string
		pattern keyspace.Pattern
		want    map[string]float64
	}{
		{"ycsb-a", keyspace.Zipf, map[string]float64{"READ": 50, "UPDATE": 50}},
		{"ycsb-b", keyspace.Zipf, map[string]float64{"READ": 95, "UPDATE": 5}},
		{"ycsb-c", keyspace.Zipf, map[string]float64{"READ": 100}},
		{"ycsb-d", keyspace.Latest, map[string]float64{"READ": 95, "INSERT": 5}},
		{"ycsb-f", keyspace.Zipf, map[string]float64{"READ": 50, "RMW": 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := control.Query(context.Background(), r.Addr, control.Options{}, "FLUSHALL"); err != nil || string(b) != "+OK\r\n" {
				t.Fatalf("FLUSHALL: %q %v", b, err)
			}
			w, err := Load(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			c := config(r.Addr, w, 100_000)
			c.VerifyGet = true
			if c.KeyPattern != tc.pattern || c.ValueSize != 1000 {
				t.Errorf("key pattern %s, value size %d: want %s, 1000", c.KeyPattern, c.ValueSize, tc.pattern)
			}
			if _, err := prefill.Prefill(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			res, err := loadgen.Run(context.Background(), c)
			if err != nil || res.VerifyFailures != 0 || res.Misses != 0 {
				t.Fatalf("%v: %d wrong values, %d misses", err, res.VerifyFailures, res.Misses)
			}
			var ops int64
			for _, x := range res.Commands {
				ops += x.Requests
			}
			for _, x := range res.Commands {
				share := 100 * float64(x.Requests) / float64(ops)
				if math.Abs(share-tc.want[x.Name]) > 1 {
					t.Errorf("%s: %.2f%% of operations, want %.0f%% ± 1", x.Name, share, tc.want[x.Name])
				}
			}
			if ops != 100_000 || len(res.Commands) != len(tc.want) {
				t.Errorf("%d operations, %d commands", ops, len(res.Commands))
			}
		})
	}
}

// TestParseErrors: a bad file fails naming its file and line.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"commands:\n  - command: GET __key__\n    ratio: -1\n", "w.yaml:3: \"-1\": want a whole number"},
		{"key-pattern: zipf\nzipf: 0.9\nvalue-size: big\ncommands:\n  - command: GET x\n", "w.yaml:3: \"big\""},
		{"commands:\n  - command: GET x\n  - comand: SET x y\n", `w.yaml:3: unknown key "comand"`},
		{"colour: red\ncommands:\n  - command: GET x\n", `w.yaml:1: unknown key "colour"`},
		{"key-pattern: gauss\ncommands:\n  - command: GET x\n", `w.yaml:1: key-pattern "gauss"`},
		{"key-pattern: gaussian\nkey-stddev: 0\ncommands:\n  - command: GET x\n", `w.yaml:2: "0": want a number > 0`},
		{"key-median: -1\ncommands:\n  - command: GET x\n", `w.yaml:1: "-1": want a number >= 0`},
		{"description: x\n", "w.yaml:1: no commands"},
		{"commands:\n  - command: GET 'x\n", `w.yaml:2: command "GET 'x": unbalanced quotes`},
		{"commands:\n  - command: GET x\n    ratio: 2: 3\n", "w.yaml:3: mapping values are not allowed"},
		{"commands:\n  - command: GET x\n    command: SET x y\n", `w.yaml:3: key "command" given twice`},
		{"commands:\n  - ratio: 2\n", "w.yaml:2: no command"},
		{"- GET x\n", "w.yaml:1: want a mapping"},
		{"value-size: 64-32\ncommands:\n  - command: GET x\n", `w.yaml:1: "64-32": want a range MIN-MAX`},
		{"data-size-list: 32:60,abc:30\ncommands:\n  - command: GET x\n", `w.yaml:1: "abc:30": size "abc"`},
		{"data-size-list: 32:60,1024\ncommands:\n  - command: GET x\n", `w.yaml:1: "1024": want SIZE:WEIGHT`},
		{"commands:\n  - command: GET x\n    then: ''\n", "w.yaml:3: empty command"},
		{"commands:\n  - command: GET x\n    key-pattern: newest\n", `w.yaml:3: key-pattern "newest": want random, sequential, permutation, zipf, gaussian, latest or insert`},
	} {
		_, err := Parse("w.yaml", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestLoadFile: a path loads the file; the user's settings are kept.
func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mine.yaml")
	text := "value-size: 7\nkeyspace: 50\nkey-pattern: zipf\nzipf: 1.2\ncommands:\n  - command: SET __key__ __data__\n    ratio: 3\n    key-pattern: sequential\n  - command: set x __data__\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	c := loadgen.DefaultConfig()
	w.Apply(&c, func(s string) bool { return s == "keyspace" })
	if c.ValueSize != 7 || c.Keyspace != loadgen.DefaultKeyspace || c.KeyPattern != keyspace.Zipf || c.Zipf != 1.2 {
		t.Errorf("%+v", c)
	}
	if len(c.Commands) != 2 || c.Commands[0].Name != "SET" || c.Commands[1].Name != "SET#2" ||
		c.Commands[0].Ratio != 3 || c.Commands[0].KeyPattern != keyspace.Sequential {
		t.Errorf("%+v", c.Commands)
	}
	if _, err := c.Normalize(); err != nil {
		t.Error(err)
	}

	g, err := Parse("g.yaml", []byte("key-pattern: gaussian\nkey-median: 10\nkey-stddev: 2.5\ncommands:\n  - command: GET __key__\n"))
	if err != nil {
		t.Fatal(err)
	}
	c = loadgen.DefaultConfig()
	g.Apply(&c, func(s string) bool { return s == "key-median" })
	if c.KeyPattern != keyspace.Gaussian || c.KeyMedian != 0 || c.KeyStddev != 2.5 {
		t.Errorf("gaussian: %s median %g stddev %g", c.KeyPattern, c.KeyMedian, c.KeyStddev)
	}
}

// TestDocExample: the workload file shown in docs/bench.md parses.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/bench.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	block, _, _ := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("no yaml block in docs/bench.md")
	}
	w, err := Parse("docs/bench.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Commands) != 2 || w.Commands[0].Name != "READ" || *w.ValueSize != 1000 || w.Keyspace != 1000000 {
		t.Errorf("%+v", w)
	}
}

// FuzzParse: Parse never panics, and a workload it accepts has commands.
func FuzzParse(f *testing.F) {
	ents, _ := builtin.ReadDir("workloads")
	for _, e := range ents {
		b, _ := builtin.ReadFile("workloads/" + e.Name())
		f.Add(b)
	}
	f.Add([]byte("commands:\n  - command: GET 'x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := Parse("f.yaml", b)
		if err != nil {
			return
		}
		c := loadgen.DefaultConfig()
		w.Apply(&c, func(string) bool { return false })
		if len(c.Commands) == 0 {
			t.Fatal("accepted without commands")
		}
	})
}
