package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/loadgen"
)

// TestKeyRangeFlags: --keyspace, --key-minimum and --key-maximum give the
// load's first key and key count, bench's and run's alike: any two give
// the third, in any order; three that disagree are a usage error.
func TestKeyRangeFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		min, n   int64
		conflict string
	}{
		{[]string{"--key-minimum", "1000", "--key-maximum", "1999"}, 1000, 1000, ""},
		{[]string{"--key-maximum", "1999", "--key-minimum", "1000"}, 1000, 1000, ""},
		{[]string{"--key-maximum", "99"}, 0, 100, ""},
		{[]string{"--key-minimum", "7", "-r", "10"}, 7, 10, ""},
		{[]string{"-r", "1000", "--key-maximum", "1999"}, 1000, 1000, ""},
		{[]string{"-r", "1000", "--key-maximum", "1999", "--key-minimum", "1000"}, 1000, 1000, ""},
		{[]string{"--key-minimum", "1000", "--key-maximum", "1999", "-r", "5"}, 0, 0, "--keyspace 5, --key-minimum 1000 and --key-maximum 1999 disagree: the range holds 1000 keys"},
		{[]string{"--key-minimum", "10", "--key-maximum", "9"}, 0, 0, "--key-maximum 9: below --key-minimum 10"},
		{[]string{"-r", "100", "--key-maximum", "9"}, 0, 0, "the range would start at key -90"},
		{[]string{"--key-minimum", "-1"}, 0, 0, "--key-minimum -1: want >= 0"},
	} {
		for _, cmd := range []string{"bench", "run"} {
			var l loadgen.Load
			var err error
			if cmd == "bench" {
				c := newBenchCmd(func(_ context.Context, o *benchOptions) error { l = o.Config.Load; return nil })
				c.SetArgs(append([]string{"--port", "7000"}, tc.args...))
				c.SetOut(new(strings.Builder))
				c.SetErr(new(strings.Builder))
				err = c.Execute()
			} else {
				c := newRunCmd(func(_ context.Context, o *runOptions) error { l = o.Load; return nil })
				c.SetArgs(append([]string{"--targets", "kvstore", "--modes", "set", "--requests", "1000"}, tc.args...))
				c.SetOut(new(strings.Builder))
				c.SetErr(new(strings.Builder))
				err = c.Execute()
			}
			switch {
			case tc.conflict != "" && (err == nil || !strings.Contains(err.Error(), tc.conflict)):
				t.Errorf("%s %v: %v, want an error saying %q", cmd, tc.args, err, tc.conflict)
			case tc.conflict == "" && (err != nil || l.KeyMinimum != tc.min || l.Keyspace != tc.n):
				t.Errorf("%s %v: keys from %d, %d of them, %v; want from %d, %d", cmd, tc.args, l.KeyMinimum, l.Keyspace, err, tc.min, tc.n)
			}
		}
	}
}

// TestBenchKeyRange: a set run over --key-minimum 1000 --key-maximum
// 1999 writes exactly the keys 1000 to 1999 of a kvstore (DBSIZE, and
// EXISTS of each), a verified read of the range after a prefill of it
// finds every key, and against Redis SCAN lists only keys of the range.
func TestBenchKeyRange(t *testing.T) {
	kv, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	_, port, _ := strings.Cut(kv.Addr(), ":")
	code, stdout, stderr := execute(t, "bench", "-p", port, "--mode", "set", "--key-minimum", "1000", "--key-maximum", "1999", "-n", "1000", "-c", "2", "--seed", "9")
	if code != 0 || !strings.Contains(stdout, "over 1000 keys bench:key:NNNN (1000 to 1999)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: kv.Addr(), Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	names := func(lo, hi int) []string {
		var out []string
		for k := lo; k <= hi; k++ {
			out = append(out, fmt.Sprintf("bench:key:%04d", k))
		}
		return out
	}
	if n, err := rc.DBSize(ctx).Result(); err != nil || n != 1000 {
		t.Errorf("DBSIZE %d, %v; want 1000", n, err)
	}
	if n, err := rc.Exists(ctx, names(1000, 1999)...).Result(); err != nil || n != 1000 {
		t.Errorf("EXISTS of keys 1000 to 1999: %d, %v; want 1000", n, err)
	}
	if n, err := rc.Exists(ctx, names(0, 999)...).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS of keys 0 to 999: %d, %v; want 0", n, err)
	}

	r := testutil.StartRedis(t)
	_, rport, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr = execute(t, "bench", "-p", rport, "--mode", "get", "--prefill", "--verify-get", "--key-minimum", "1000", "-r", "1000", "-n", "3000", "--output", "json")
	if code != 0 || !strings.Contains(stdout, `"key_minimum": 1000`) {
		t.Fatalf("get over the range: exit %d\n%s%s", code, stdout, stderr)
	}
	rr := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
	defer rr.Close()
	keys, err := rr.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 1000 {
		t.Fatalf("KEYS: %d keys, %v; want 1000", len(keys), err)
	}
	for _, k := range keys {
		var n int
		if _, err := fmt.Sscanf(k, "bench:key:%d", &n); err != nil || n < 1000 || n > 1999 {
			t.Errorf("key %q is not in the range 1000 to 1999", k)
		}
	}
}
