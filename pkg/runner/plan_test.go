package runner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/runner/recovery"
)

// planOptions are small options on the kvstore alone.
func planOptions() Options {
	o := DefaultOptions()
	o.KvstoreBin = kvbenchBin
	o.Targets = []string{"kvstore"}
	o.Rounds = 3
	return o
}

func names(steps []Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Scenario.Name())
	}
	return out
}

func TestPlanOrder(t *testing.T) {
	o := planOptions()
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Scenarios); got != 6 {
		t.Fatalf("%d scenarios, want 3 strategies × 2 modes", got)
	}
	if len(p.Steps) != 18 {
		t.Fatalf("%d steps, want 18", len(p.Steps))
	}
	// Interleaved: each round runs every scenario once; the rounds are
	// shuffled differently; the same seed gives the same order.
	var rounds [][]string
	for r := range 3 {
		round := p.Steps[r*6 : r*6+6]
		for _, st := range round {
			if st.Round != r+1 {
				t.Fatalf("step of round %d in round %d's block", st.Round, r+1)
			}
		}
		got := names(round)
		sorted := slices.Sorted(slices.Values(got))
		if want := slices.Sorted(slices.Values(names(p.Steps[:6]))); !slices.Equal(sorted, want) {
			t.Errorf("round %d runs %v", r+1, got)
		}
		rounds = append(rounds, got)
	}
	if slices.Equal(rounds[0], rounds[1]) && slices.Equal(rounds[1], rounds[2]) {
		t.Errorf("every round in the same order: %v", rounds[0])
	}
	again, _ := NewPlan(o)
	if !slices.Equal(names(again.Steps), names(p.Steps)) {
		t.Error("the same seed gave another order")
	}
	o.Seed++
	other, _ := NewPlan(o)
	if slices.Equal(names(other.Steps), names(p.Steps)) {
		t.Error("another seed gave the same order")
	}

	// Sequential: all rounds of a scenario, then the next, in scenario order.
	o.Order = OrderSequential
	seq, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kvstore/persist_no/set", "kvstore/persist_no/set", "kvstore/persist_no/set", "kvstore/persist_no/get"}
	if got := names(seq.Steps[:4]); !slices.Equal(got, want) {
		t.Errorf("sequential starts %v, want %v", got, want)
	}
	if seq.Steps[2].Round != 3 || seq.Steps[3].Round != 1 {
		t.Errorf("sequential rounds %d, %d", seq.Steps[2].Round, seq.Steps[3].Round)
	}
}

func TestPlanSelection(t *testing.T) {
	set := []string{"set"}
	tests := []struct {
		name       string
		strategies []string
		modes      []string
		edit       func(*Options)
		want       []string // scenario names
		wantErr    string
	}{
		{name: "defaults", modes: set,
			want: []string{"kvstore/persist_no/set", "kvstore/persist_everysec/set", "kvstore/nopersist/set"}},
		{name: "list", strategies: []string{"nopersist", "persist_always"}, modes: []string{"get", "mixed"}, edit: func(o *Options) { o.SetCmd, o.GetCmd = "SET", "GET" },
			want: []string{"kvstore/persist_always/get", "kvstore/persist_always/mixed", "kvstore/nopersist/get", "kvstore/nopersist/mixed"}},
		{name: "all", strategies: []string{"all"}, modes: set,
			want: []string{"kvstore/persist_no/set", "kvstore/persist_everysec/set", "kvstore/persist_always/set", "kvstore/nopersist/set"}},
		{name: "alloc both", strategies: []string{"nopersist"}, modes: set, edit: func(o *Options) { o.Alloc = "both" },
			want: []string{"kvstore/nopersist_mypool/set", "kvstore/nopersist_malloc/set"}},
		{name: "alloc both by variant", strategies: []string{"everysec_malloc"}, modes: set, edit: func(o *Options) { o.Alloc = "both" },
			want: []string{"kvstore/everysec_malloc/set"}},
		{name: "duplicate modes", strategies: []string{"nopersist"}, modes: []string{"set", "SET"},
			want: []string{"kvstore/nopersist/set"}},
		{name: "duplicate targets", modes: set, edit: func(o *Options) { o.Targets = []string{"kvstore", "kvstore"} },
			want: []string{"kvstore/persist_no/set", "kvstore/persist_everysec/set", "kvstore/nopersist/set"}},
		{name: "unknown strategy", strategies: []string{"aof_sometimes"}, wantErr: `strategy "aof_sometimes": no target has it`},
		{name: "unknown target", edit: func(o *Options) { o.Targets = []string{"memcached"} }, wantErr: `target "memcached"`},
		{name: "bad mode", modes: []string{"scan"}, wantErr: `mode "scan"`},
		{name: "bad order", edit: func(o *Options) { o.Order = "random" }, wantErr: `order "random"`},
		{name: "bad alloc", edit: func(o *Options) { o.Alloc = "tcmalloc" }, wantErr: `alloc "tcmalloc"`},
		{name: "no rounds", edit: func(o *Options) { o.Rounds = 0 }, wantErr: "rounds 0"},
		{name: "bad baseline", edit: func(o *Options) { o.Baselines = "kvstore" }, wantErr: "want target=strategy"},
		{name: "bad lang", edit: func(o *Options) { o.Lang = "fr" }, wantErr: `lang "fr"`},
		{name: "missing config", edit: func(o *Options) { o.ConfigFile = "/nonexistent.yaml" }, wantErr: "/nonexistent.yaml"},
		{name: "redis not found", edit: func(o *Options) { o.Targets, o.RedisBin = []string{"redis"}, "/nonexistent/redis-server" },
			wantErr: "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := planOptions()
			o.Strategies, o.Modes = tt.strategies, tt.modes
			if tt.edit != nil {
				tt.edit(&o)
			}
			p, err := NewPlan(o)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v: want ErrOptions with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sc := range p.Scenarios {
				got = append(got, sc.Name())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("scenarios %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestPlanRedisMissingIsAWarning(t *testing.T) {
	o := planOptions()
	o.Targets, o.RedisBin = nil, "/nonexistent/redis-server"
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Error(), "redis-server not found") {
		t.Errorf("warnings %v", p.Warnings)
	}
	for _, sc := range p.Scenarios {
		if sc.Desc.Name != "kvstore" {
			t.Errorf("scenario %s without redis-server", sc.Name())
		}
	}
}

// TestPlanConfigKeepsBuiltins: with a target file, the file's targets run
// by default; --targets may add the built-in kvstore and redis, unless the
// file has targets of those names.
func TestPlanConfigKeepsBuiltins(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valkey := write("valkey.yaml", `targets:
  - name: valkey
    kind: command
    command: ["redis-server", "--port", "{port}"]
    baseline: none
    strategies:
      none: ["--save", "", "--appendonly", "no"]
`)
	redefines := write("redefines.yaml", `targets:
  - name: kvstore
    kind: command
    command: ["redis-server", "--port", "{port}"]
    baseline: none
    strategies:
      none: ["--save", "", "--appendonly", "no"]
`)
	tests := []struct {
		name    string
		config  string
		targets []string
		want    []string // target (kind)
		wantErr string
	}{
		{name: "file only", config: valkey, want: []string{"valkey (command)"}},
		{name: "file and redis", config: valkey, targets: []string{"valkey", "redis"}, want: []string{"valkey (command)", "redis (redis)"}},
		{name: "kvstore alone", config: valkey, targets: []string{"kvstore"}, want: []string{"kvstore (kvstore)"}},
		{name: "redefined", config: redefines, targets: []string{"kvstore", "redis"}, want: []string{"kvstore (command)", "redis (redis)"}},
		{name: "unknown", config: valkey, targets: []string{"valkey", "memcached"},
			wantErr: `target "memcached" is neither in ` + valkey + ` (it has valkey) nor built in (kvstore, redis, kvstore-cluster, redis-cluster)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := planOptions()
			o.ConfigFile, o.Targets, o.Modes = tt.config, tt.targets, []string{"set"}
			p, err := NewPlan(o)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v: want ErrOptions with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sc := range p.Scenarios {
				if s := sc.Desc.Name + " (" + string(sc.Desc.Kind) + ")"; !slices.Contains(got, s) {
					got = append(got, s)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("targets %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanEstimate(t *testing.T) {
	o := planOptions()
	o.Rounds, o.Requests, o.Keyspace = 1, 400_000, 600_000
	o.Strategies = []string{"nopersist", "persist_always"}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	// nopersist: set 1 s, get 1 s + 1 s prefill; persist_always: set 4 s,
	// get 1 s + 1 s prefill; plus 4 starts and stops.
	want := 9*time.Second + 4*EstimateStartStop
	if got := p.Estimate(); got != want {
		t.Errorf("estimate %v, want %v", got, want)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"4 measurements", "kvstore/persist_always/set", "~4.1s", "estimated time: 9.4s"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("plan lacks %q:\n%s", s, b.String())
		}
	}
}

// TestPlanEstimateDuration: a phase bounded by --duration is estimated at
// its length, whatever --requests says, and a warmup adds its own.
func TestPlanEstimateDuration(t *testing.T) {
	o := planOptions()
	o.Rounds, o.Requests, o.Keyspace, o.Modes = 1, 400_000, 600_000, []string{"set"}
	o.Strategies, o.SetCmd = []string{"nopersist"}, "SET"
	o.Duration, o.Warmup = 20*time.Second, 2*time.Second
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := EstimateStartStop + 22*time.Second; p.Estimate() != want {
		t.Errorf("--duration 20s --warmup 2s: estimate %v, want %v", p.Estimate(), want)
	}
	o.Warmup, o.WarmupRequests = 0, 400_000 // a second at the assumed rate
	if p, err = NewPlan(o); err != nil {
		t.Fatal(err)
	}
	if want := EstimateStartStop + 21*time.Second; p.Estimate() != want {
		t.Errorf("--duration 20s --warmup-requests 400000: estimate %v, want %v", p.Estimate(), want)
	}
}

// TestPlanEstimateRecoveryAndProfile: a recovery attempt is estimated
// with its stream of writes (longer for a power loss), its restart and,
// for a strategy that keeps its data, the reload of the keyspace; the
// profile rounds count an attempt of each scenario and perf's share.
func TestPlanEstimateRecoveryAndProfile(t *testing.T) {
	o := planOptions()
	o.Rounds, o.Requests, o.Keyspace, o.Modes = 1, 1_000_000, 600_000, []string{"recovery"}
	o.Strategies = []string{"nopersist", "persist_no"}
	for _, powerLoss := range []bool{false, true} {
		o.PowerLoss = powerLoss
		p, err := NewPlan(o)
		if err != nil {
			t.Fatal(err)
		}
		stream := recovery.Stream // 1,000,000 writes at EstimateStreamQPS take longer
		if powerLoss {
			stream = recovery.PowerLossStream
		}
		// Each: start and stop, a 1 s prefill, the stream, a restart; the
		// log's keys reloaded in 1 s.
		each := EstimateStartStop + time.Second + stream + EstimateStartStop/2 + EstimateRestart
		if want := 2*each + time.Second; p.Estimate() != want {
			t.Errorf("power loss %v: estimate %v, want %v", powerLoss, p.Estimate(), want)
		}
	}

	o = planOptions()
	o.Rounds, o.Requests, o.Keyspace, o.Modes, o.Strategies, o.Profile = 2, 400_000, 600_000, []string{"set"}, []string{"nopersist"}, true
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	attempt := EstimateStartStop + time.Second
	want := 2 * attempt // the rounds
	if _, err := exec.LookPath("perf"); err == nil {
		want += attempt + EstimateProfile
	}
	if got := p.Estimate(); got != want {
		t.Errorf("with --profile: estimate %v, want %v", got, want)
	}
}
