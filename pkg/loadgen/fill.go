package loadgen

import (
	"context"

	"github.com/kvbench/kvbench/pkg/loadgen/mix"
)

// SendN sends n requests of cmd on cfg's connections, unmeasured: how a
// workload's reads get their keys before the measurement ("kvbench run
// --workloads" sends SET for a GET's keys, in keyspace.Sequential order over
// the keyspace).
func SendN(ctx context.Context, cfg Config, cmd mix.Command, n int64) error {
	return sendN(ctx, cfg, cmd, n)
}

// FillTo sends cmd until the container key (its length asked with
// lenCmd, as LLEN or SCARD) holds at least n elements: what RunTests does
// before a pop or LRANGE test, for any key.
func FillTo(ctx context.Context, cfg Config, lenCmd, key string, n int64, cmd mix.Command) error {
	return fillTo(ctx, cfg, lenCmd, key, n, cmd)
}
