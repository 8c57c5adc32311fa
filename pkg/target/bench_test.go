package target

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/stats"
)

// benchStopKeys is what a server holds when kvbench run stops it: the
// default keyspace.
const benchStopKeys = 1_000_000

// BenchmarkStop measures the stop of a server holding 1,000,000 keys, per
// kvstore and redis strategy, as kvbench run stops it (the time until the
// server is reaped, then the removal of its directory): pairs of a polite
// stop (SIGTERM, then waiting for the server to exit: what Stop did before
// it killed these servers at once) and Stop, alternating, each on a fresh
// server. It logs every pair and reports the medians in ms and the median
// of the pairs' ratios (stop/sigterm):
//
//	go test -run '^$' -bench Stop -benchtime 3x ./pkg/target
func BenchmarkStop(b *testing.B) {
	kv, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		b.Fatal(err)
	}
	type benchTarget struct {
		t          Target
		strategies []string
	}
	targets := []benchTarget{{kv, []string{"nopersist", "persist_no", "persist_everysec"}}}
	if r, err := NewRedis(RedisConfig{}); err == nil {
		targets = append(targets, benchTarget{r, []string{"none", "aof_no", "aof_everysec", "rdb_default"}})
	}
	// once fills a fresh server, stops it with stop and removes its
	// directory, and returns the time that took.
	once := func(b *testing.B, tg Target, s Strategy, stop func(Instance)) float64 {
		dir, err := os.MkdirTemp(b.TempDir(), "")
		if err != nil {
			b.Fatal(err)
		}
		inst, err := tg.Start(context.Background(), s, Env{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		cfg := loadgen.DefaultConfig()
		cfg.Addr, cfg.SetCmd, cfg.Keyspace, cfg.Pipeline = inst.Info().Addr, tg.Desc().SetCmd, benchStopKeys, 1024
		if _, err := prefill.Prefill(context.Background(), cfg); err != nil {
			_ = inst.Stop(context.Background())
			b.Fatal(err)
		}
		t0 := time.Now()
		stop(inst)
		_ = inst.Stop(context.Background()) // reaped by now: a no-op
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(t0).Microseconds()) / 1000
	}
	sigterm := func(inst Instance) {
		_ = syscall.Kill(-inst.Info().PID, syscall.SIGTERM)
		for inst.Err() == nil {
			time.Sleep(100 * time.Microsecond)
		}
	}
	stop := func(inst Instance) { _ = inst.Stop(context.Background()) }
	for _, tg := range targets {
		for _, name := range tg.strategies {
			s, _ := tg.t.Desc().Strategy(name)
			b.Run(tg.t.Desc().Name+"/"+name, func(b *testing.B) {
				var old, cur, ratio []float64
				for i := range b.N {
					o, n := once(b, tg.t, s, sigterm), once(b, tg.t, s, stop)
					old, cur, ratio = append(old, o), append(cur, n), append(ratio, n/o)
					b.Logf("pair %d: sigterm %.1f ms, stop %.1f ms, stop/sigterm %.2f", i+1, o, n, n/o)
				}
				b.ReportMetric(stats.Median(old), "sigterm-ms")
				b.ReportMetric(stats.Median(cur), "stop-ms")
				b.ReportMetric(stats.Median(ratio), "stop/sigterm")
			})
		}
	}
}
