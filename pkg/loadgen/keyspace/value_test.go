package keyspace

import (
	"bytes"
	"fmt"
	"testing"
)

func TestAppendValue(t *testing.T) {
	for _, size := range []int{0, 1, 7, 8, 9, 32, WindowMin - 1, WindowMin, 100, 16 << 10, 256 << 10} {
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
		if !ValueMatches(v, 5, 42, size) {
			t.Errorf("size %d: ValueMatches rejects the value", size)
		}
		if long := AppendValue(nil, 5, 42, size+13); size+13 < WindowMin && !bytes.HasPrefix(long, v) {
			t.Errorf("size %d: not a prefix of the longer value", size)
		}
		if size > 0 {
			for _, other := range [][]byte{AppendValue(nil, 6, 42, size), AppendValue(nil, 5, 43, size)} {
				if size >= 8 && bytes.Equal(other, v) {
					t.Errorf("size %d: another seed or key gives the same value", size)
				}
			}
			if ValueMatches(v[:size-1], 5, 42, size) {
				t.Errorf("size %d: ValueMatches accepts a short value", size)
			}
			// A flipped byte anywhere is caught: in the header, at the
			// window's ends, in its middle.
			for _, at := range []int{0, 9, 15, 16, size / 2, size - 1} {
				if at >= size {
					continue
				}
				bad := bytes.Clone(v)
				bad[at] ^= 1
				if ValueMatches(bad, 5, 42, size) {
					t.Errorf("size %d: ValueMatches accepts a byte flipped at %d", size, at)
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
		if ValueMatches(spliced, 9, 1, size) {
			t.Fatalf("key 1's header on key %d's window passes", k)
		}
	}
	if bytes.Equal(AppendValue(nil, 9, 1, size+8)[:16], v[:16]) {
		t.Fatal("two sizes of a value share a header")
	}
}

// BenchmarkValue builds and checks values against copying and comparing
// as many bytes: from WindowMin on the two should cost about the same.
func BenchmarkValue(b *testing.B) {
	for _, size := range []int{32, 1 << 10, 16 << 10, 256 << 10} {
		buf := make([]byte, 0, size)
		v := AppendValue(nil, 1, 7, size)
		blk := BlockFor(1, size)
		b.Run(fmt.Sprintf("append/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				buf = AppendValueFrom(buf[:0], blk, 1, uint64(i), size)
			}
		})
		b.Run(fmt.Sprintf("match/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				if !ValueMatchesFrom(v, blk, 1, 7, size) {
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
