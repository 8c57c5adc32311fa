package kvstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBadInput sends malformed and hostile requests, each over its own
// connection, while another client keeps working. Each gets an error reply
// or a closed connection; the server stays up and its memory bounded.
func TestBadInput(t *testing.T) {
	srv := startServer(t, Config{})

	// A well-behaved client works throughout.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var goodErr error
	var goodOps int
	wg.Add(1)
	go func() {
		defer wg.Done()
		rdb := newClient(t, srv)
		c := ctx(t)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprint("good:", i%100)
			if err := rdb.Set(c, k, i, 0).Err(); err != nil {
				goodErr = err
				return
			}
			if got, err := rdb.Get(c, k).Int(); err != nil || got != i {
				goodErr = fmt.Errorf("GET %s = %d, %v; want %d", k, got, err, i)
				return
			}
			goodOps++
		}
	}()

	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	random[0] = '*' // a multibulk header of garbage

	million := []byte("*1000000\r\n")
	million = append(million, bytes.Repeat([]byte("$1\r\na\r\n"), 1000000)...)

	tests := []struct {
		name string
		send []byte
		want string // reply prefix; "-" for an incomplete request
	}{
		{"truncated frame", []byte("*3\r\n$3\r\nSET\r\n$1\r\nk"), "-"},
		{"negative bulk length", []byte("*1\r\n$-5\r\n"), "-ERR Protocol error: invalid bulk length"},
		{"huge bulk length", []byte("*1\r\n$99999999999\r\n"), "-ERR Protocol error: invalid bulk length"},
		{"non-numeric bulk length", []byte("*1\r\n$abc\r\n"), "-ERR Protocol error: invalid bulk length"},
		{"negative count", []byte("*-7\r\nPING\r\n"), "+PONG"},
		{"non-numeric count", []byte("*x\r\n"), "-ERR Protocol error: invalid multibulk length"},
		{"huge count", []byte("*2000000\r\n"), "-ERR Protocol error: invalid multibulk length"},
		{"unbalanced quotes", []byte("SET k \"abc\r\n"), "-ERR Protocol error: unbalanced quotes in request"},
		{"random binary", random, "-ERR Protocol error: "},
		{"million arguments", million, "-ERR unknown command 'a'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, srv)
			rc.send(tt.send)
			if tt.want == "-" {
				// The request is incomplete: the server waits for the rest.
				// Closing must not disturb it.
				rc.nc.Close()
				return
			}
			if got := rc.reply(); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("reply %.100q, want prefix %q", got, tt.want)
			}
			if strings.HasPrefix(tt.want, "-ERR Protocol error") && !rc.closed() {
				t.Fatal("connection still open after a protocol error")
			}
		})
	}

	t.Run("100 MB line without newline", func(t *testing.T) {
		rc := dialRaw(t, srv)
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		sent := 0
		rc.nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
		for sent < 100<<20 {
			n, err := rc.nc.Write(chunk)
			sent += n
			if err != nil {
				break // the server gave up on us, as it should
			}
		}
		if got := rc.reply(); !strings.HasPrefix(got, "-ERR Protocol error: too big inline request") {
			t.Fatalf("reply %q", got)
		}
		if !rc.closed() {
			t.Fatal("connection still open")
		}
	})

	close(stop)
	wg.Wait()
	if goodErr != nil {
		t.Fatalf("the well-behaved client failed: %v", goodErr)
	}
	if goodOps == 0 {
		t.Fatal("the well-behaved client made no progress")
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 96<<20 {
		t.Fatalf("heap in use %d MiB after the hostile clients left", ms.HeapInuse>>20)
	}
	if err := newClient(t, srv).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("server down after bad input: %v", err)
	}
}

func TestShutdown(t *testing.T) {
	t.Run("Close", func(t *testing.T) {
		srv := startServer(t, Config{})
		rc := dialRaw(t, srv)
		runExchanges(t, rc, []exchange{{[]string{"SET", "k", "v"}, "+OK\r\n"}})
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		if !rc.closed() {
			t.Fatal("client still connected after Close")
		}
		select {
		case <-srv.Done():
		default:
			t.Fatal("Done not closed after Close")
		}
	})
	t.Run("SHUTDOWN", func(t *testing.T) {
		srv := startServer(t, Config{})
		rc := dialRaw(t, srv)
		rc.send([]byte("SHUTDOWN NOSAVE\r\n"))
		if !rc.closed() {
			t.Fatal("client still connected after SHUTDOWN")
		}
		select {
		case <-srv.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("server still running 5 s after SHUTDOWN")
		}
	})
}
