package runner

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/target"
)

// Durable acknowledgements (Options.Wait): the writes of every
// workload's mix are followed by WAIT numreplicas timeout on the same
// connection, whose latency is a command row of its own (mix.WaitName),
// on servers with replicas: a redis target's replicas:, which kvbench
// starts beside every instance, or a server a command or attach target
// names. The kvstore has no replication, and a cluster's connections are
// routed by kvbench's cluster client, which sends no WAIT: both are
// refused by name.

// waitErrors checks Options.Wait against the run's modes (normalize):
// the modes' rows have no command of their own for the WAITs.
func (o *Options) waitErrors() []error {
	if !o.Wait.Enabled() {
		return nil
	}
	errs := o.Wait.Check()
	if len(o.Modes) > 0 {
		errs = append(errs, fmt.Errorf("--wait-ratio: WAIT follows the writes of a workload's command mix, its latency a command row of its own: measure --workloads (e.g. ycsb-a), not --modes %v", o.Modes))
	}
	return errs
}

// checkWait refuses a target the run's WAITs cannot be sent to, or that
// has fewer replicas than they wait for.
func checkWait(o Options, d target.Desc) error {
	w := o.Wait
	if !w.Enabled() {
		return nil
	}
	switch d.Kind {
	case target.KindKvstore, target.KindKvstoreCluster:
		return fmt.Errorf("%w: --wait-ratio: target %s: the kvstore has no replication, so no WAIT could be acknowledged: leave it out of --targets", ErrOptions, d.Name)
	case target.KindRedisCluster:
		return fmt.Errorf("%w: --wait-ratio: target %s: WAIT is sent on a single server's connections, and kvbench's cluster client sends none: measure a redis target with replicas:", ErrOptions, d.Name)
	case target.KindRedis:
		if d.Replicas < w.Replicas {
			return fmt.Errorf("%w: --wait-ratio: target %s starts %d replicas, and each WAIT waits for %d (--num-replicas): give it replicas: %d in a --config file", ErrOptions, d.Name, d.Replicas, w.Replicas, w.Replicas)
		}
	}
	return nil
}
