package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
)

// BenchmarkOpenLoop sends b.N reads on one connection at pipeline 1 to a
// redis-server: closed loop, open loop at 2000/s as the worker waits
// (poll), and open loop sleeping in epoll_pwait2 up to each send time
// (sleep: no polling windows). It reports the latency p50 and p99, and the
// send lag p50 and p99, in µs; compare poll's p50-us with closed's. Run it
// with a fixed count, -benchtime 4000x (a 2 s open-loop run), several
// times with -count 1 so that the three alternate (-count repeats each
// in place).
func BenchmarkOpenLoop(b *testing.B) {
	srv := testutil.StartRedis(b, "--save", "", "--appendonly", "no")
	for _, tc := range []struct {
		name         string
		rate         float64
		ahead, await time.Duration
	}{
		{"closed", 0, schedule.SpinAhead, schedule.SpinAwait},
		{"poll", 2000, schedule.SpinAhead, schedule.SpinAwait},
		{"sleep", 2000, 0, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer func(a, w time.Duration) { schedule.SpinAhead, schedule.SpinAwait = a, w }(schedule.SpinAhead, schedule.SpinAwait)
			schedule.SpinAhead, schedule.SpinAwait = tc.ahead, tc.await
			res, err := Run(context.Background(), fill(Config{Addr: srv.Addr, Mode: ModeGet, Load: Load{Rate: tc.rate, Requests: int64(b.N), Pipeline: 1, Connections: 1, Threads: 1}}))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res.Latency.P50, "p50-us")
			b.ReportMetric(res.Latency.P99, "p99-us")
			if res.SendLag != nil {
				b.ReportMetric(res.SendLagLatency.P50, "lag-p50-us")
				b.ReportMetric(res.SendLagLatency.P99, "lag-p99-us")
			}
		})
	}
}
