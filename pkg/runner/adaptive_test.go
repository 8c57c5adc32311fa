package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/adaptive"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/prometheus/procfs"
)

// adaptiveOptions are a small adaptive run of the kvstore.
func adaptiveOptions(t *testing.T) Options {
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"nopersist", "persist_no"}, []string{"set", "get"}
	o.Keyspace = 30_000
	o.Precision, o.MaxTime, o.Slice = 0.5, 2*time.Minute, 20*time.Millisecond
	return o
}

// TestAdaptiveRun: an adaptive run measures each mode's servers side by
// side in mirrored blocks of slices, never stops before the rule's least
// number of blocks, writes fresh keys in every write slice (an inserting
// RSET meets none of its own), starts the write servers afresh together
// when the keyspace is full, and records where they ran.
func TestAdaptiveRun(t *testing.T) {
	ctx := context.Background()
	o := adaptiveOptions(t)
	res, _, stderr, err := runQuiet(t, ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	checkClean(t, o)
	type key struct{ strategy, mode string }
	blocks := map[key]map[int]int{}
	rounds := map[key]map[int]bool{}
	starts := map[key]int{}
	for _, r := range res.Rows {
		k := key{r.Strategy, r.Mode}
		if r.Status != results.StatusOK || r.Block == 0 || r.Slice == 0 || r.Conflicts != 0 {
			t.Fatalf("row %+v: want an ok slice with a block, a position and no refused write", r)
		}
		if blocks[k] == nil {
			blocks[k], rounds[k] = map[int]int{}, map[int]bool{}
		}
		blocks[k][r.Block]++
		if rounds[k][r.Round] {
			t.Errorf("%v: round %d twice: a scenario's slices are numbered", k, r.Round)
		}
		rounds[k][r.Round] = true
		if r.StartS > 0 {
			starts[k]++
		}
		if want := (machine.Placement{Server: machine.CPUSet{0}, Client: machine.CPUSet{0}}).String(); r.Placement != want {
			t.Errorf("placement %q, want %q (auto: one CPU shared)", r.Placement, want)
		}
		if r.OtherCPUs == nil || r.Load1 == nil {
			t.Errorf("slice without the machine's signals: %+v", r)
		}
	}
	for k, bs := range blocks {
		if len(bs) < stats.DefaultMinPairs {
			t.Errorf("%v: %d blocks, want at least %d", k, len(bs), stats.DefaultMinPairs)
		}
		for b, n := range bs {
			if n != adaptive.SlicesPerBlock {
				t.Errorf("%v block %d: %d slices, want %d (mirrored)", k, b, n, adaptive.SlicesPerBlock)
			}
		}
	}
	// 30,000 keys hold a block of write slices (two of at least 20 round
	// trips of 128 requests each), not many: the write servers restart.
	if starts[key{"nopersist", "set"}] < 2 || starts[key{"nopersist", "get"}] != 1 {
		t.Errorf("server starts written on slices: set %d, get %d; want several (restarts when full) and one", starts[key{"nopersist", "set"}], starts[key{"nopersist", "get"}])
	}
	if !strings.Contains(stderr, "placement: 0: servers and load generator share CPU 0") || !strings.Contains(stderr, "machine: CPUs") {
		t.Errorf("no placement or pre-flight line:\n%s", stderr)
	}
}

// TestAdaptiveAA: the same server under two target names is measured
// side by side; the comparison of the two names calls no difference.
func TestAdaptiveAA(t *testing.T) {
	ctx := context.Background()
	o := adaptiveOptions(t)
	cfg := filepath.Join(t.TempDir(), "targets.yaml")
	bin := o.KvstoreBin
	y := "targets:\n  - {kind: kvstore, name: a, bin: " + bin + ", strategies: [nopersist]}\n" +
		"  - {kind: kvstore, name: b, bin: " + bin + ", strategies: [nopersist]}\n"
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	o.ConfigFile, o.Targets, o.Strategies, o.Reference = cfg, nil, nil, "b"
	// ±10% is reached in a few blocks on a quiet machine; on a busy one the
	// time runs out first, and the interval, wider, still must not call a
	// difference.
	o.Modes, o.Precision, o.MaxTime = []string{"get"}, 0.10, 30*time.Second
	res, _, stderr, err := runQuiet(t, ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rt stats.Ratio
	found := false
	for _, c := range res.Report.Comparisons {
		if c.Metric == "qps" && c.Target == "a" && c.AgainstTarget == "b" {
			rt, found = c.Ratio, true
			if !c.Paired {
				t.Errorf("A/A comparison not paired: %+v", c)
			}
		}
	}
	if !found {
		t.Fatalf("no comparison of a against b in %+v", res.Report.Comparisons)
	}
	if v := stats.VerdictOf(rt, o.Precision, true); v == stats.Faster || v == stats.Slower {
		// Slices compared within blocks survive a machine's drift, not a
		// busy one's lasting favour of one server (the run warns of it):
		// there an A/A difference is the machine's, not the design's.
		if strings.Contains(stderr, "the machine is busy besides the measurement") {
			t.Skipf("A/A: a against b %s: %s on a machine the run found busy", rt, v)
		}
		t.Errorf("A/A: a against b %s: %s, want no difference", rt, v)
	}
	t.Logf("A/A: a/b %s (±%.1f%%, %d blocks)", rt, rt.HalfWidth()*100, rt.N)
}

// TestAdaptiveDisturbedSlice: a CPU hog on the measured CPU during one
// slice is seen by the machine's signals, and the slice is written as
// disturbed and left out; the others of its block are not.
func TestAdaptiveDisturbedSlice(t *testing.T) {
	ctx := context.Background()
	o := adaptiveOptions(t)
	o.Modes, o.Slice = []string{"get"}, 200*time.Millisecond
	const hogSlice = 3 // the first slice of block 2
	var mu sync.Mutex
	var hog *exec.Cmd
	var hogCPU float64
	var hogTarget string
	o.Observe = func(e Event) {
		if e.Block != 2 || e.Scenario == nil || e.Round != hogSlice || hogTarget != "" && e.Scenario.Strategy.Name != hogTarget {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case EventStart:
			hogTarget = e.Scenario.Strategy.Name
			hog = exec.Command("sh", "-c", "while :; do :; done")
			if err := hog.Start(); err != nil {
				t.Error(err)
				return
			}
			_ = machine.Pin(hog.Process.Pid, machine.CPUSet{0}) // beside the measured server and client
		case EventEnd:
			if hog == nil {
				return
			}
			if p, err := procfs.NewProc(hog.Process.Pid); err == nil {
				if st, err := p.Stat(); err == nil {
					hogCPU = st.CPUTime()
				}
			}
			hog.Process.Kill()
			hog.Wait()
			hog = nil
		}
	}
	res, _, stderr, err := runQuiet(t, ctx, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var hit *results.Row
	for i, r := range res.Rows {
		if r.Strategy == hogTarget && r.Round == hogSlice {
			hit = &res.Rows[i]
		}
	}
	if hit == nil {
		t.Fatalf("no slice %d of %s", hogSlice, hogTarget)
	}
	// The hog got what the scheduler gave it; on a busy machine that may
	// be too little to tell from the others.
	share := hogCPU / hit.ElapsedS
	t.Logf("hog: %.2f s of CPU over a slice of %.2f s (%.2f CPUs); slice's other CPUs %v, disturbed %q", hogCPU, hit.ElapsedS, share, *hit.OtherCPUs, hit.Disturbed)
	// On a machine whose other work varies by more than the rule's margin
	// within a block, the hog does not stand out from its block's median
	// (the rule's reference): then there is nothing for the rule to tell.
	var others []float64
	for _, r := range res.Rows {
		if r.Block == hit.Block && r.OtherCPUs != nil {
			others = append(others, *r.OtherCPUs)
		}
	}
	if above := *hit.OtherCPUs - stats.Median(others); share >= 0.5 && above <= machine.DefaultRule.MaxOther {
		t.Skipf("the machine's other work varied as much as the hog's %.2f CPUs: the slice's other CPUs are %.2f above its block's median, within the rule's %.2f", share, above, machine.DefaultRule.MaxOther)
	}
	if share >= 0.5 && hit.Disturbed == "" {
		t.Errorf("a slice beside a hog that took %.2f CPUs is not disturbed", share)
	}
	if share >= 0.5 && !strings.Contains(stderr, "disturbed") {
		t.Errorf("the log does not say a slice was disturbed:\n%s", stderr)
	}
}
