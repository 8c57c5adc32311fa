package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
)

// TestValueWindowsWritten writes values of 4 KB and 256 KB from the shared
// block with writev (the requests leave the windows out), in batches far
// larger than a socket takes at once, so that writes stop and resume in
// the middle of a window; then reads every key back, verified byte for
// byte, and compares one value with keyspace.AppendValue. Both system call paths.
func TestValueWindowsWritten(t *testing.T) {
	tg := redisTarget(t)
	for _, raw := range []bool{true, false} {
		for _, size := range []int{windowWriteMin, 256 << 10} {
			t.Run(fmt.Sprintf("raw=%v/size=%d", raw, size), func(t *testing.T) {
				link.Raw = raw
				defer func() { link.Raw = true }()
				tg.flush(t)
				set := Config{Mode: ModeSet, Load: Load{ValueSize: size, Keyspace: 64, Requests: 256, Pipeline: 16, Connections: 4, Seed: 5}}
				if !newPlan(fill(set)).windows {
					t.Fatal("the plan copies the values: want them written from the block")
				}
				if res := run(t, tg, fill(set)); res.Requests != 256 || len(res.Errors) != 0 {
					t.Fatalf("SET: %d requests, errors %v", res.Requests, res.Errors)
				}
				get := set
				get.Mode, get.VerifyGet = ModeGet, true
				if res := run(t, tg, fill(get)); res.Requests != 256 || res.VerifyFailures != 0 || res.Misses != 0 {
					t.Fatalf("GET: %d requests, %d wrong, %d missing", res.Requests, res.VerifyFailures, res.Misses)
				}
				got, err := tg.client.Get(context.Background(), string(keyspace.Spec{Keyspace: 64}.AppendName(nil, DefaultKeyPrefix, 7))).Bytes()
				if err != nil || !bytes.Equal(got, keyspace.AppendValue(nil, 5, 7, size)) {
					t.Fatalf("key 7: %d bytes, %v: not keyspace.AppendValue's", len(got), err)
				}
			})
		}
	}
}
