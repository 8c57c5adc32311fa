package prefill

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
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
func SendN(ctx context.Context, cfg loadgen.Config, cmd mix.Command, n int64) error {
	c := cfg
	c.Commands = []mix.Command{cmd}
	c.Requests, c.Duration, c.WarmupRequests, c.Warmup, c.Rate = n, 0, 0, 0, 0
	c.Progress, c.Observe = nil, nil
	c.Connections = int(min(int64(c.Connections), n))
	c.Segment, c.Segments = 0, 1
	res, err := loadgen.Run(ctx, c)
	if err == nil && res.Config.ReadsReplicas() {
		_, err = awaitReplicas(ctx, res.Config)
	}
	return err
}

// FillTo sends cmd until the container key (its length asked with
// lenCmd, as LLEN or SCARD) holds at least n elements: what
// redis-benchmark's tests need before a pop or LRANGE test, for any key.
// Elements are drawn from a permutation of all 12-digit numbers, so they
// hardly meet those of the keyspace. On a cluster, key and cmd carry
// mix.PlaceholderTag: every master's container is filled (fillCluster).
func FillTo(ctx context.Context, cfg loadgen.Config, lenCmd, key string, n int64, cmd mix.Command) error {
	if cfg.Cluster {
		return fillCluster(ctx, cfg, lenCmd, key, n, cmd)
	}
	for range 3 {
		b, err := control.Query(ctx, cfg.Addr, cfg.Control(), lenCmd, key)
		if err != nil {
			return err
		}
		have, err := containerLen(b, lenCmd, key)
		if err != nil {
			return err
		}
		if have >= n {
			return nil
		}
		if err := sendFill(ctx, cfg, cmd, have, n-have); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %s: still fewer than %d elements", lenCmd, key, n)
}

// containerLen reads the reply b to lenCmd key.
func containerLen(b []byte, lenCmd, key string) (int64, error) {
	r, _, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil || r.Type != resp.TypeInt {
		return 0, fmt.Errorf("%s %s: unexpected reply %s", lenCmd, key, quote(b))
	}
	return r.Int, nil
}

// sendFill sends cmd n times, its elements another pass's than those of
// a container of have.
func sendFill(ctx context.Context, cfg loadgen.Config, cmd mix.Command, have, n int64) error {
	c := cfg
	c.Keyspace = 1e12
	c.Seed = cfg.Seed + have // another pass, other elements
	cmd.KeyPattern = keyspace.Permutation
	return SendN(ctx, c, cmd, n)
}

// fillCluster is FillTo on a cluster: each master's container, key under
// its tag, gets at least n elements. A command without a key goes to the
// masters in turn, so that sending (deficit rounded up to connections) x
// masters x connections gives each at least the deficit; a command with
// one is spread by its keys, and a pass may leave a master short.
func fillCluster(ctx context.Context, cfg loadgen.Config, lenCmd, key string, n int64, cmd mix.Command) error {
	var short string
	for pass := range 8 {
		topo, err := cluster.FetchTopology(ctx, cfg.Seeds(), cfg.Control())
		if err != nil {
			return err
		}
		least := n
		short = ""
		for m, addr := range topo.Masters {
			tag, ok := topo.Tag(m)
			if !ok {
				return fmt.Errorf("%s: no hash tag found for master %s", key, addr)
			}
			k := strings.Replace(key, mix.PlaceholderTag, "{"+string(tag[:])+"}", 1)
			b, err := control.Query(ctx, addr, cfg.Control(), lenCmd, k)
			if err != nil {
				return fmt.Errorf("%s: %w", addr, err)
			}
			have, err := containerLen(b, lenCmd, k)
			if err != nil {
				return fmt.Errorf("%s: %w", addr, err)
			}
			if have < least {
				least, short = have, k+" on "+addr
			}
		}
		if least >= n {
			return nil
		}
		conns := int64(max(cfg.Connections, 1))
		per := (n - least + conns - 1) / conns * conns
		per += per / 8 // a keyed command's spread
		if err := sendFill(ctx, cfg, cmd, least+int64(pass)<<32, per*int64(len(topo.Masters))); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %s: still fewer than %d elements", lenCmd, short, n)
}

// quote quotes b, shortened to 48 bytes.
func quote(b []byte) string {
	if len(b) > 48 {
		return strconv.Quote(string(b[:48])) + "..."
	}
	return strconv.Quote(string(b))
}
