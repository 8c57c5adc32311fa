package kvstore

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// BenchmarkPipelinedSet is bench/persist.sh's load in-process: batches of
// 128 SETs of 32-byte values over 1,000,000 random keys on one connection,
// each batch answered before the next is sent. One op is one batch.
// Compare the policies in one run (-bench 'PipelinedSet/(none|everysec)'
// -count 6): the difference is what the log costs a batch. Automatic
// rewrites are off; BenchmarkSnapshot and BenchmarkWriteBase cover those.
func BenchmarkPipelinedSet(b *testing.B) {
	const batch = 128
	val := make([]byte, 32)
	for i := range val {
		val[i] = 'x'
	}
	// Enough distinct batches that the keys do not repeat in a short run.
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([][]byte, 1024)
	for i := range batches {
		var buf []byte
		for range batch {
			buf = resp.AppendCommand(buf, []byte("SET"), fmt.Appendf(nil, "key:%012d", rng.IntN(1_000_000)), val)
		}
		batches[i] = buf
	}
	for _, policy := range []string{PersistNone, PersistNo, PersistEverysec} {
		b.Run(policy, func(b *testing.B) {
			cfg := Config{Persist: policy, AutoRewritePercentage: -1}
			if policy != PersistNone {
				cfg.Dir = b.TempDir()
			}
			srv := startServer(b, cfg)
			conn, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			r := bufio.NewReaderSize(conn, 64<<10)
			b.SetBytes(int64(len(batches[0])))
			i := 0
			for b.Loop() {
				if _, err := conn.Write(batches[i%len(batches)]); err != nil {
					b.Fatal(err)
				}
				i++
				for range batch {
					line, err := r.ReadSlice('\n')
					if err != nil {
						b.Fatal(err)
					}
					if string(line) != "+OK\r\n" {
						b.Fatalf("reply %q", line)
					}
				}
			}
		})
	}
}
