package runner

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// benchKeys is the keyspace of the prefill benchmark: the default run's.
const benchKeys = DefaultKeyspace

// BenchmarkPrefill measures the prefill of 1,000,000 keys (what every get
// and mixed attempt does before it measures), each on a fresh server, per
// target and strategy:
//
//   - ab: pairs of the single-key prefill through the load generator's
//     measuring machinery (loadgen.Run with prefill.PrefillConfig: epoll
//     workers, histograms; what kvbench run did before prefill.Prefill
//     had its own loop) and prefill.Prefill (MSET for SET), alternating
//     A B A B. It logs every pair and reports the median keys/s of each
//     and the median of the pairs' ratios (new/old).
//   - set-p128: the load generator's SET rate at the measurement's
//     settings (the default run's set attempt), for comparison.
//
// Run the pairs alone, a few seconds per target:
//
//	go test -run '^$' -bench 'Prefill/.*/.*/ab' -benchtime 3x ./pkg/runner
func BenchmarkPrefill(b *testing.B) {
	type benchTarget struct {
		t        target.Target
		strategy string
	}
	var targets []benchTarget
	for _, cmds := range [][2]string{{"RSET", "RGET"}, {"SET", "GET"}} {
		kv, err := target.NewKvstore(target.KvstoreConfig{Bin: kvbenchBin, Name: "kvstore-" + cmds[0], SetCmd: cmds[0], GetCmd: cmds[1]})
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, benchTarget{kv, "nopersist"})
	}
	if r, err := target.NewRedis(target.RedisConfig{}); err == nil {
		targets = append(targets, benchTarget{r, "none"}, benchTarget{r, "aof_everysec"})
	}
	for _, tg := range targets {
		d := tg.t.Desc()
		s, _ := d.Strategy(tg.strategy)
		cfg := loadgen.DefaultConfig()
		cfg.SetCmd, cfg.GetCmd, cfg.Keyspace, cfg.Seed = d.SetCmd, d.GetCmd, benchKeys, DefaultSeed
		cfg.ValueSize, cfg.Connections = DefaultValueSize, DefaultConnections
		// once runs f on a fresh server and returns its keys per second.
		once := func(b *testing.B, pipeline int, f func(context.Context, loadgen.Config) (loadgen.Result, error)) float64 {
			dir, err := os.MkdirTemp(b.TempDir(), "")
			if err != nil {
				b.Fatal(err)
			}
			defer os.RemoveAll(dir)
			inst, err := tg.t.Start(context.Background(), s, target.Env{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer inst.Stop(context.Background())
			lc := cfg
			lc.Addr, lc.Pipeline = inst.Info().Addr, pipeline
			t0 := time.Now()
			res, err := f(context.Background(), lc)
			wall := time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if res.Sets != benchKeys {
				b.Fatalf("%d keys written, want %d", res.Sets, benchKeys)
			}
			return float64(res.Sets) / wall.Seconds()
		}
		name := d.Name + "/" + tg.strategy
		b.Run(name+"/ab", func(b *testing.B) {
			var old, cur, ratio []float64
			for i := range b.N {
				o := once(b, DefaultPrefillPipeline, func(ctx context.Context, c loadgen.Config) (loadgen.Result, error) {
					return loadgen.Run(ctx, prefill.PrefillConfig(c))
				})
				n := once(b, DefaultPrefillPipeline, prefill.Prefill)
				old, cur, ratio = append(old, o), append(cur, n), append(ratio, n/o)
				b.Logf("pair %d: old %.0f keys/s, new %.0f keys/s, new/old %.2f", i+1, o, n, n/o)
			}
			b.ReportMetric(stats.Median(old), "old-keys/s")
			b.ReportMetric(stats.Median(cur), "new-keys/s")
			b.ReportMetric(stats.Median(ratio), "new/old")
		})
		b.Run(name+"/set-p128", func(b *testing.B) {
			var rates []float64
			for range b.N {
				rates = append(rates, once(b, DefaultPipeline, func(ctx context.Context, c loadgen.Config) (loadgen.Result, error) {
					c.Mode, c.Requests = loadgen.ModeSet, benchKeys
					return loadgen.Run(ctx, c)
				}))
			}
			b.ReportMetric(stats.Median(rates), "keys/s")
		})
	}
}
