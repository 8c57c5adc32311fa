package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/target"
)

// benchKeys is the keyspace of the prefill benchmark: the default run's.
const benchKeys = DefaultKeyspace

// BenchmarkPrefill compares the prefill of 1,000,000 keys (what every get
// and mixed attempt does before it measures) with the load generator's own
// SET rate at the measurement's settings (the default run's set attempt),
// each on a fresh server per iteration:
//
//	go test -run '^$' -bench Prefill -benchtime 3x ./pkg/runner
func BenchmarkPrefill(b *testing.B) {
	kv, err := target.NewKvstore(target.KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		b.Fatal(err)
	}
	targets := []struct {
		t        target.Target
		strategy string
	}{{kv, "nopersist"}}
	if r, err := target.NewRedis(target.RedisConfig{}); err == nil {
		targets = append(targets, struct {
			t        target.Target
			strategy string
		}{r, "none"})
	}
	for _, tg := range targets {
		d := tg.t.Desc()
		s, _ := d.Strategy(tg.strategy)
		cfg := loadgen.Config{SetCmd: d.SetCmd, GetCmd: d.GetCmd, Keyspace: benchKeys, ValueSize: DefaultValueSize,
			Connections: DefaultConnections, Seed: DefaultSeed}
		cases := []struct {
			name string
			run  func(context.Context, loadgen.Config) (loadgen.Result, error)
			pipe int
		}{
			{"set-p128", func(ctx context.Context, c loadgen.Config) (loadgen.Result, error) {
				c.Mode, c.Requests = loadgen.ModeSet, benchKeys
				return loadgen.Run(ctx, c)
			}, DefaultPipeline},
			{"prefill-p128", loadgen.Prefill, DefaultPipeline},
			{fmt.Sprintf("prefill-p%d", DefaultPrefillPipeline), loadgen.Prefill, DefaultPrefillPipeline},
		}
		for _, c := range cases {
			b.Run(d.Name+"/"+c.name, func(b *testing.B) {
				var keys int64
				var wall time.Duration
				for range b.N {
					b.StopTimer()
					inst, err := tg.t.Start(context.Background(), s, target.Env{Dir: b.TempDir()})
					if err != nil {
						b.Fatal(err)
					}
					lc := cfg
					lc.Addr, lc.Pipeline = inst.Info().Addr, c.pipe
					b.StartTimer()
					t0 := time.Now()
					res, err := c.run(context.Background(), lc)
					wall += time.Since(t0)
					b.StopTimer()
					_ = inst.Stop(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					keys += res.Sets
				}
				b.ReportMetric(float64(keys)/wall.Seconds(), "keys/s")
			})
		}
	}
}
