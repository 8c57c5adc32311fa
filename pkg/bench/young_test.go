package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
)

// TestPrefillWithoutMSET: a server that has SET and GET but not MSET is
// prefilled one SET per key, and every key reads back.
func TestPrefillWithoutMSET(t *testing.T) {
	host, p, _ := net.SplitHostPort(testutil.StartYoungServer(t))
	port, _ := strconv.Atoi(p)
	o := options(host, port, "mode", "verify-get", "prefill")
	o.Mode, o.VerifyGet, o.Prefill = loadgen.ModeGet, true, true
	var out, log bytes.Buffer
	o.Log = &log
	res, err := Run(context.Background(), o, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Prefill.Sets != 500 || res.Prefill.ErrorCount() != 0 || res.Run.Misses != 0 || res.Run.VerifyFailures != 0 {
		t.Errorf("prefill %d sets, %v errors; run %d misses, %d wrong values", res.Prefill.Sets, res.Prefill.Errors, res.Run.Misses, res.Run.VerifyFailures)
	}
}

// TestPrefillNotEmpty: a prefill that finds keys names what to do: the
// redis-cli command that empties the database, another database, or no
// prefill.
func TestPrefillNotEmpty(t *testing.T) {
	host, port := startKvstore(t)
	o := options(host, port, "mode")
	o.Mode = loadgen.ModeSet
	if _, err := Run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	o = options(host, port, "mode", "prefill")
	o.Mode, o.Prefill = loadgen.ModeGet, true
	_, err := Run(context.Background(), o, io.Discard)
	want := fmt.Sprintf("empty the database first (redis-cli -h %s -p %d FLUSHDB), prefill another one (--db N), or leave out --prefill", host, port)
	if !errors.Is(err, prefill.ErrNotEmpty) || !strings.Contains(err.Error(), want) {
		t.Errorf("prefill of a server holding keys: %v, want ErrNotEmpty naming %q", err, want)
	}
}

// TestTrickleTimeout: a server that trickles a reply that never ends, a
// byte at a time, fails the prefill and the run after --timeout: the
// bytes of an unfinished reply do not put the deadline off.
func TestTrickleTimeout(t *testing.T) {
	host, p, _ := net.SplitHostPort(testutil.ServeTrickle(t, 20*time.Millisecond))
	port, _ := strconv.Atoi(p)
	for _, prefill := range []bool{true, false} {
		o := options(host, port, "mode", "prefill", "timeout")
		o.Mode, o.Prefill, o.Timeout = loadgen.ModeGet, prefill, 300*time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound on a test that fails, not a figure
		_, err := Run(ctx, o, io.Discard)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no reply for 300ms") {
			t.Errorf("prefill %v: %v, want no reply for 300ms", prefill, err)
		}
	}
}
