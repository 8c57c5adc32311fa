package kvstore

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// BenchmarkReplay is a restart's replay of the log: one op starts a server
// on a data directory whose log holds 1,000,000 RSETs (or SETs) of 32-byte
// values to keys in random order, as kvbench run's recovery mode leaves
// it, and closes it again. Run with -benchtime 5x: one op is a whole
// replay.
func BenchmarkReplay(b *testing.B) {
	const keys, batch = 1_000_000, 128
	val := bytes.Repeat([]byte{'v'}, 32)
	order := rand.New(rand.NewPCG(1, 2)).Perm(keys)
	for _, name := range []string{"RSET", "SET"} {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			srv := startPersistent(b, dir, PersistNo, func(c *Config) { c.AutoRewritePercentage = -1 })
			conn, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReaderSize(conn, 64<<10)
			var buf []byte
			for i := 0; i < keys; i += batch {
				buf = buf[:0]
				for _, k := range order[i:min(i+batch, keys)] {
					buf = resp.AppendCommand(buf, []byte(name), fmt.Appendf(nil, "bench:key:%012d", k), val)
				}
				if _, err := conn.Write(buf); err != nil {
					b.Fatal(err)
				}
				for range min(batch, keys-i) {
					if line, err := r.ReadSlice('\n'); err != nil || string(line) != "+OK\r\n" {
						b.Fatalf("reply %q, %v", line, err)
					}
				}
			}
			conn.Close()
			srv.Close()
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for b.Loop() {
				srv, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir, AutoRewritePercentage: -1})
				if err != nil {
					b.Fatal(err)
				}
				srv.Close()
			}
			b.ReportMetric(float64(keys)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
			// The process's CPU time: on a busy machine, a steadier
			// figure than the time the replay took.
			b.ReportMetric(float64((cpuTime(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
