package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
)

// waitCommand is the result's wait command.
func waitCommand(t *testing.T, res Result) measure.Command {
	t.Helper()
	for _, c := range res.Commands {
		if c.Name == mix.WaitName {
			return c
		}
	}
	t.Fatalf("no %s command in %+v", mix.WaitName, res.Commands)
	return measure.Command{}
}

// TestWait: a mix's writes are followed by WAIT 1 10000, one per ten writes
// on each connection; against a master with a real replica every WAIT
// answers 1 (acknowledged), its latency its own command's; without a
// replica every one times out short. The WAITs are requests of the run.
// (the replica acknowledges each at once; the timeout is long for a
// busy machine, where a replica may lag 100 ms behind).
func TestWait(t *testing.T) {
	master := testutil.StartRedis(t)
	testutil.StartReplica(t, master)
	alone := testutil.StartRedis(t)
	cmds := []mix.Command{{Name: "SET", Args: []string{"SET", "__key__", "__data__"}}, {Name: "GET", Args: []string{"GET", "__key__"}, Ratio: 3}}
	for _, c := range []struct {
		name    string
		addr    string
		timeout time.Duration
		acked   bool
	}{{"replica", master.Addr, 10 * time.Second, true}, {"alone", alone.Addr, 5 * time.Millisecond, false}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fill(Config{Addr: c.addr, Commands: cmds, Load: Load{Requests: 4000, Keyspace: 1000, Connections: 2, Threads: 2, Pipeline: 8, Seed: 3}})
			cfg.Wait = mix.Wait{Waits: 1, Writes: 10, Replicas: 1, Timeout: c.timeout}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			w := waitCommand(t, res)
			var sets int64
			for _, cmd := range res.Commands {
				if cmd.Name == "SET" {
					sets = cmd.Requests
				}
			}
			if res.Requests != cfg.Requests {
				t.Errorf("%d requests, want %d: the WAITs are among them", res.Requests, cfg.Requests)
			}
			// Per connection, a WAIT after its 10th, 20th, … write (one due
			// after the last request is not sent).
			if w.Requests < sets/10-2 || w.Requests > sets/10 {
				t.Errorf("%d WAITs after %d writes, want one per ten", w.Requests, sets)
			}
			if got := res.WaitAcked + res.WaitShort; got != w.Requests {
				t.Errorf("WAIT replies %d acknowledged + %d short, of %d WAITs", res.WaitAcked, res.WaitShort, w.Requests)
			}
			if c.acked && (res.WaitAcked == 0 || res.WaitShort != 0) {
				t.Errorf("with a replica: %d acknowledged, %d short", res.WaitAcked, res.WaitShort)
			}
			if !c.acked && (res.WaitShort == 0 || res.WaitAcked != 0) {
				t.Errorf("without a replica: %d acknowledged, %d short", res.WaitAcked, res.WaitShort)
			}
			if !c.acked && w.Latency.P50 < 5000 {
				t.Errorf("a WAIT that times out after 5 ms took %v us (p50)", w.Latency.P50)
			}
		})
	}
}

// TestWaitErrors: what WAIT does not go with.
func TestWaitErrors(t *testing.T) {
	w := mix.Wait{Waits: 1, Writes: 10, Replicas: 1, Timeout: 100 * time.Millisecond}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Commands = nil }, "WAIT follows the writes of a command mix"},
		{func(c *Config) { c.Commands = c.Commands[1:] }, "the mix has no write"},
		{func(c *Config) { c.Cluster = true }, "not in a cluster"},
		{func(c *Config) { c.Wait.Timeout = 1500 * time.Microsecond }, "--wait-timeout 1.5ms: want whole milliseconds"},
		{func(c *Config) { c.Wait.Replicas = 0 }, "--num-replicas 0"},
		{func(c *Config) { c.Commands[0].Name = "wait" }, `a command of the mix is named "wait"`},
	} {
		cfg := fill(Config{Commands: []mix.Command{{Name: "SET", Args: []string{"SET", "__key__", "__data__"}}, {Name: "GET", Args: []string{"GET", "__key__"}}},
			Load: Load{Requests: 10, Keyspace: 10, Connections: 1, Pipeline: 1}})
		cfg.Wait = w
		c.mod(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	for in, want := range map[string]string{"10": "want WAITS:WRITES", "2:1": "at most one WAIT per write", "0:5": "at least 1", "a:b": "whole numbers"} {
		if _, _, err := mix.ParseWaitRatio(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--wait-ratio %s: %v, want %q", in, err, want)
		}
	}
}
