package loadgen

import (
	"context"
	"fmt"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/resp"
)

// SendN sends n requests of cmd on cfg's connections, unmeasured: how a
// workload's reads get their keys before the measurement ("kvbench run
// --workloads" sends SET for a GET's keys, in keyspace.Sequential order over
// the keyspace). When the run reads from replicas, SendN returns once
// they have what it wrote (awaitReplicas; a server that gives no
// replication offset is not waited for, as Prefill warns).
func SendN(ctx context.Context, cfg Config, cmd mix.Command, n int64) error {
	c := cfg
	c.Commands = []mix.Command{cmd}
	c.Requests, c.Duration, c.WarmupRequests, c.Warmup, c.Rate = n, 0, 0, 0, 0
	c.Progress, c.Observe = nil, nil
	c.Connections = int(min(int64(c.Connections), n))
	c.Segment, c.Segments = 0, 1
	res, err := Run(ctx, c)
	if err == nil && res.Config.readsReplicas() {
		_, err = awaitReplicas(ctx, res.Config)
	}
	return err
}

// FillTo sends cmd until the container key (its length asked with
// lenCmd, as LLEN or SCARD) holds at least n elements: what
// redis-benchmark's tests need before a pop or LRANGE test, for any key.
// Elements are drawn from a permutation of all 12-digit numbers, so they
// hardly meet those of the keyspace.
func FillTo(ctx context.Context, cfg Config, lenCmd, key string, n int64, cmd mix.Command) error {
	for range 3 {
		b, err := control.Query(ctx, cfg.Addr, cfg.Control(), lenCmd, key)
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
		if err := SendN(ctx, c, cmd, n-r.Int); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %s: still fewer than %d elements", lenCmd, key, n)
}
