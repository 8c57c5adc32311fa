package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
	"golang.org/x/sys/unix"
)

// BenchmarkOpenLoop sends b.N reads on one connection at pipeline 1 to a
// redis-server: closed loop; open loop at 2000/s as it runs (poll: asleep
// between rounds, the replies' times from the kernel, polling within its
// budget); the same woken by each reply (woken); and sleeping only, no
// polling (sleep). It reports the latency p50 and p99, the send lag p50
// and p99 in µs, and the client's voluntary context switches per request
// (wakes/op); compare poll's p50-us with closed's. Run it with a fixed
// count, -benchtime 4000x (a 2 s open-loop run), several times with
// -count 1 so that the cases alternate (-count repeats each in place).
func BenchmarkOpenLoop(b *testing.B) {
	srv := testutil.StartRedis(b, "--save", "", "--appendonly", "no")
	for _, tc := range []struct {
		name         string
		rate         float64
		ahead, await time.Duration
		stamp        bool
	}{
		{"closed", 0, schedule.SpinAhead, schedule.SpinAwait, true},
		{"poll", 2000, schedule.SpinAhead, schedule.SpinAwait, true},
		{"woken", 2000, schedule.SpinAhead, schedule.SpinAwait, false},
		{"sleep", 2000, 0, 0, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer func(a, w time.Duration) { schedule.SpinAhead, schedule.SpinAwait, stampReceives = a, w, true }(schedule.SpinAhead, schedule.SpinAwait)
			schedule.SpinAhead, schedule.SpinAwait, stampReceives = tc.ahead, tc.await, tc.stamp
			var before, after unix.Rusage
			_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
			res, err := Run(context.Background(), fill(Config{Addr: srv.Addr, Mode: ModeGet, Load: Load{Rate: tc.rate, Requests: int64(b.N), Pipeline: 1, Connections: 1, Threads: 1}}))
			if err != nil {
				b.Fatal(err)
			}
			_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
			b.ReportMetric(res.Latency.P50, "p50-us")
			b.ReportMetric(res.Latency.P99, "p99-us")
			if res.SendLag != nil {
				b.ReportMetric(res.SendLagLatency.P50, "lag-p50-us")
				b.ReportMetric(res.SendLagLatency.P99, "lag-p99-us")
			}
			b.ReportMetric(float64(after.Nvcsw-before.Nvcsw)/float64(b.N), "wakes/op")
		})
	}
}
