package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/spf13/pflag"
)

// addLoadFlags adds the flags of the load's settings that "kvbench bench"
// and "kvbench run" share, bound to l: each defaults to l's value, so that
// each command shows its own defaults. A setting of loadgen.Load that both
// commands take gets its flag here, once.
func addLoadFlags(f *pflag.FlagSet, l *loadgen.Load) {
	f.IntVarP(&l.Pipeline, "pipeline", "P", l.Pipeline, "requests per batch (closed loop), most in flight per connection (open loop)")
	f.IntVarP(&l.Connections, "connections", "c", l.Connections, "number of connections")
	f.IntVar(&l.Threads, "threads", l.Threads, "load generator threads, at most one per connection (0: one per CPU)")
	kr := &keyRange{f: f, l: l}
	f.VarP(keyRangeFlag{kr, keyCount}, "keyspace", "r", "number of distinct keys")
	f.Var(keyRangeFlag{kr, keyMin}, "key-minimum", "number of the first key, memtier_benchmark style: the keys are --key-minimum to --key-minimum + --keyspace - 1")
	f.Var(keyRangeFlag{kr, keyMax}, "key-maximum", "number of the last key, memtier_benchmark style: the keyspace is then --key-maximum - --key-minimum + 1 (with --keyspace and without --key-minimum, the last --keyspace keys up to it; all three must agree)")
	f.IntVar(&l.SetRatio, "set-ratio", l.SetRatio, "percentage of writes in mixed mode (0-100)")
	f.DurationVar(&l.Timeout, "timeout", l.Timeout, "fail when a connection waits this long for a reply, the prefill's too (bytes of a reply that never completes do not count)")
	f.Float64Var(&l.StallBelow, "stall-below", l.StallBelow, "an interval whose QPS is below this fraction of the median interval's is a stall")
	f.DurationVar(&l.StallLatency, "stall-latency", l.StallLatency, "an interval in which a request waited longer than this is a stall (0: no such rule)")
}

// keyRange is --keyspace, --key-minimum and --key-maximum: the key range
// is the load's KeyMinimum and Keyspace, and any two of the three flags
// give the third (a lone --key-maximum starts the range at 0). Each
// flag, whatever the order, sets the range from those given so far; when
// all three are given they must agree. A --keyspace that --key-maximum
// derives counts as given, so that a workload's or the environment's
// does not replace it.
type keyRange struct {
	f         *pflag.FlagSet
	l         *loadgen.Load
	given     [3]bool
	n, lo, hi int64
	deriving  bool // resolve is setting --keyspace
}

// The flags of a keyRange.
const (
	keyCount = iota
	keyMin
	keyMax
)

// keyRangeFlag is one of a keyRange's flags.
type keyRangeFlag struct {
	r     *keyRange
	which int
}

func (v keyRangeFlag) Type() string { return "int64" }

func (v keyRangeFlag) String() string {
	switch l := v.r.l; v.which {
	case keyCount:
		return strconv.FormatInt(l.Keyspace, 10)
	case keyMin:
		return strconv.FormatInt(l.KeyMinimum, 10)
	}
	if v.r.given[keyMax] {
		return strconv.FormatInt(v.r.hi, 10)
	}
	return ""
}

func (v keyRangeFlag) Set(s string) error {
	r := v.r
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	if r.deriving { // --key-maximum setting --keyspace (resolve)
		r.l.Keyspace = n
		return nil
	}
	switch v.which {
	case keyCount:
		r.n = n
	case keyMin:
		r.lo = n
	case keyMax:
		r.hi = n
	}
	r.given[v.which] = true
	return r.resolve()
}

// resolve sets the load's range from the flags given.
func (r *keyRange) resolve() error {
	l, g := r.l, r.given
	if g[keyCount] {
		l.Keyspace = r.n
	}
	if g[keyMin] {
		l.KeyMinimum = r.lo
	}
	if !g[keyMax] {
		return nil
	}
	switch {
	case g[keyCount] && g[keyMin]:
		if r.hi-r.lo+1 != r.n {
			return fmt.Errorf("--keyspace %d, --key-minimum %d and --key-maximum %d disagree: the range holds %d keys (give two of them)", r.n, r.lo, r.hi, r.hi-r.lo+1)
		}
		return nil
	case g[keyCount]:
		if l.KeyMinimum = r.hi - r.n + 1; l.KeyMinimum < 0 {
			return fmt.Errorf("--keyspace %d and --key-maximum %d: the range would start at key %d: want --keyspace at most --key-maximum + 1", r.n, r.hi, l.KeyMinimum)
		}
		return nil
	}
	if r.hi < l.KeyMinimum {
		return fmt.Errorf("--key-maximum %d: below --key-minimum %d", r.hi, l.KeyMinimum)
	}
	// The derived keyspace is set as given: a workload's keyspace or the
	// environment's KEYSPACE does not replace it.
	r.deriving = true
	defer func() { r.deriving = false }()
	return r.f.Set("keyspace", strconv.FormatInt(r.hi-l.KeyMinimum+1, 10))
}

// waitFlags are --wait-ratio, --num-replicas and --wait-timeout, which
// bench and run share: WAIT after a mix's writes (mix.Wait).
type waitFlags struct {
	ratio    string
	replicas int
	timeout  time.Duration
}

// addWaitFlags adds the WAIT flags, bound to w.
func addWaitFlags(f *pflag.FlagSet, w *waitFlags, what string) {
	w.replicas, w.timeout = 1, mix.DefaultWaitTimeout
	f.StringVar(&w.ratio, "wait-ratio", "", "follow writes with WAIT on the same connection, WAITS:WRITES (1:10: a WAIT after every tenth write; memtier_benchmark writes it the other way round, 10:1); its latency is the command wait's, "+what)
	f.IntVar(&w.replicas, "num-replicas", w.replicas, "with --wait-ratio, the replicas each WAIT waits for (its numreplicas)")
	f.DurationVar(&w.timeout, "wait-timeout", w.timeout, "with --wait-ratio, each WAIT's timeout (whole milliseconds)")
}

// apply sets wait from the flags of f; the other WAIT flags without
// --wait-ratio are an error.
func (w *waitFlags) apply(f *pflag.FlagSet, wait *mix.Wait) error {
	if w.ratio == "" {
		if f.Changed("num-replicas") || f.Changed("wait-timeout") {
			return fmt.Errorf("--num-replicas and --wait-timeout go with --wait-ratio")
		}
		*wait = mix.Wait{}
		return nil
	}
	waits, writes, err := mix.ParseWaitRatio(w.ratio)
	if err != nil {
		return err
	}
	*wait = mix.Wait{Waits: waits, Writes: writes, Replicas: w.replicas, Timeout: w.timeout}
	if errs := wait.Check(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}
