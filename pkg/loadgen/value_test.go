package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

func TestAppendValue(t *testing.T) {
	for _, size := range []int{0, 1, 7, 8, 9, 32, windowMin - 1, windowMin, 100, 16 << 10, 256 << 10} {
		v := AppendValue([]byte("x"), 5, 42, size)
		if len(v) != 1+size || v[0] != 'x' {
			t.Fatalf("size %d: got %d bytes, first %q", size, len(v), v[:1])
		}
		v = v[1:]
		for _, c := range v {
			if c < '?' || c > '~' {
				t.Fatalf("size %d: byte %q is not in '?'..'~'", size, c)
			}
		}
		if !bytes.Equal(v, AppendValue(nil, 5, 42, size)) {
			t.Errorf("size %d: not deterministic", size)
		}
		if !valueMatches(v, 5, 42, size) {
			t.Errorf("size %d: valueMatches rejects the value", size)
		}
		if long := AppendValue(nil, 5, 42, size+13); size+13 < windowMin && !bytes.HasPrefix(long, v) {
			t.Errorf("size %d: not a prefix of the longer value", size)
		}
		if size > 0 {
			for _, other := range [][]byte{AppendValue(nil, 6, 42, size), AppendValue(nil, 5, 43, size)} {
				if size >= 8 && bytes.Equal(other, v) {
					t.Errorf("size %d: another seed or key gives the same value", size)
				}
			}
			if valueMatches(v[:size-1], 5, 42, size) {
				t.Errorf("size %d: valueMatches accepts a short value", size)
			}
			// A flipped byte anywhere is caught: in the header, at the
			// window's ends, in its middle.
			for _, at := range []int{0, 9, 15, 16, size / 2, size - 1} {
				if at >= size {
					continue
				}
				bad := bytes.Clone(v)
				bad[at] ^= 1
				if valueMatches(bad, 5, 42, size) {
					t.Errorf("size %d: valueMatches accepts a byte flipped at %d", size, at)
				}
			}
		}
	}
}

// TestValueWindows: values of other keys and sizes are not windows of each
// other, and the block's growth for a longer value changes no shorter one.
func TestValueWindows(t *testing.T) {
	const size = 1000
	v := AppendValue(nil, 9, 1, size)
	AppendValue(nil, 9, 1, 4<<20) // grows the seed's block
	if !bytes.Equal(v, AppendValue(nil, 9, 1, size)) {
		t.Fatal("a value changed when the block grew")
	}
	// Same window, other header: another key's value with its header
	// swapped in must still fail.
	for k := int64(2); k < 50; k++ {
		o := AppendValue(nil, 9, k, size)
		if bytes.Equal(o[16:], v[16:]) {
			continue // the same window offset: the header tells them apart
		}
		spliced := append(bytes.Clone(v[:16]), o[16:]...)
		if valueMatches(spliced, 9, 1, size) {
			t.Fatalf("key 1's header on key %d's window passes", k)
		}
	}
	if bytes.Equal(AppendValue(nil, 9, 1, size+8)[:16], v[:16]) {
		t.Fatal("two sizes of a value share a header")
	}
}

// BenchmarkValue builds and checks values against copying and comparing
// as many bytes: from windowMin on the two should cost about the same.
func BenchmarkValue(b *testing.B) {
	for _, size := range []int{32, 1 << 10, 16 << 10, 256 << 10} {
		buf := make([]byte, 0, size)
		v := AppendValue(nil, 1, 7, size)
		blk := blockFor(1, size)
		b.Run(fmt.Sprintf("append/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				buf = appendValueFrom(buf[:0], blk, 1, uint64(i), size)
			}
		})
		b.Run(fmt.Sprintf("match/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if !valueMatchesFrom(v, blk, 1, 7, size) {
					b.Fatal("mismatch")
				}
			}
		})
		b.Run(fmt.Sprintf("copy/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				buf = append(buf[:0], v...)
			}
		})
	}
}

// TestValueWindowsWritten writes values of 4 KB and 256 KB from the shared
// block with writev (the requests leave the windows out), in batches far
// larger than a socket takes at once, so that writes stop and resume in
// the middle of a window; then reads every key back, verified byte for
// byte, and compares one value with AppendValue. Both system call paths.
func TestValueWindowsWritten(t *testing.T) {
	tg := redisTarget(t)
	for _, raw := range []bool{true, false} {
		for _, size := range []int{windowWriteMin, 256 << 10} {
			t.Run(fmt.Sprintf("raw=%v/size=%d", raw, size), func(t *testing.T) {
				rawSyscalls = raw
				defer func() { rawSyscalls = true }()
				tg.flush(t)
				set := Config{Mode: ModeSet, ValueSize: size, Keyspace: 64, Requests: 256, Pipeline: 16, Connections: 4, Seed: 5}
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
				got, err := tg.client.Get(context.Background(), string(AppendKey(nil, DefaultKeyPrefix, 64, 7))).Bytes()
				if err != nil || !bytes.Equal(got, AppendValue(nil, 5, 7, size)) {
					t.Fatalf("key 7: %d bytes, %v: not AppendValue's", len(got), err)
				}
			})
		}
	}
}
