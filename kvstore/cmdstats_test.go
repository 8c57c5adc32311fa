package kvstore

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkCmdStats is what INFO commandstats adds to a batch of exec: two
// monotonic clock reads and the counters of each command. One
// op is one batch; compare its ns/op with the server's time per request
// (server_usec_per_call, and the CPU per request of bench/serve.sh).
func BenchmarkCmdStats(b *testing.B) {
	st := newCmdStats()
	start := time.Now()
	get, set := commands["get"], commands["set"]
	for _, n := range []int{1, 16, 128} {
		for _, mixed := range []bool{false, true} {
			batch := make([]call, n)
			for i := range batch {
				batch[i].cmd = get
				if mixed && i%2 == 1 {
					batch[i].cmd = set
				}
			}
			b.Run(fmt.Sprintf("batch=%d/mixed=%v", n, mixed), func(b *testing.B) {
				for b.Loop() {
					t0 := time.Since(start)
					st.record(batch, n, time.Since(start)-t0)
				}
			})
		}
	}
}
