package cli

import (
	"github.com/kvbench/kvbench/pkg/loadgen"
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
	f.Int64VarP(&l.Keyspace, "keyspace", "r", l.Keyspace, "number of distinct keys")
	f.IntVar(&l.SetRatio, "set-ratio", l.SetRatio, "percentage of writes in mixed mode (0-100)")
	f.DurationVar(&l.Timeout, "timeout", l.Timeout, "fail when a connection waits this long for a reply")
	f.Float64Var(&l.StallBelow, "stall-below", l.StallBelow, "an interval whose QPS is below this fraction of the median interval's is a stall")
	f.DurationVar(&l.StallLatency, "stall-latency", l.StallLatency, "an interval in which a request waited longer than this is a stall (0: no such rule)")
}
