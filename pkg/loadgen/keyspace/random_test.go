package keyspace

import (
	"bytes"
	"testing"
)

// TestRandomValue: a random value is a function of (seed, key, size),
// differs between keys, seeds and from the default value, is checked
// byte for byte, and uses every bit of its bytes.
func TestRandomValue(t *testing.T) {
	var ones [8]int
	for _, size := range []int{0, 1, 7, 8, 9, 32, 64, 1000} {
		v := AppendRandomValue([]byte("head"), 5, 42, size)
		if len(v) != 4+size || string(v[:4]) != "head" {
			t.Fatalf("size %d: %q", size, v)
		}
		v = v[4:]
		if !bytes.Equal(v, AppendRandomValue(nil, 5, 42, size)) || !RandomValueMatches(v, 5, 42, size) {
			t.Errorf("size %d: not a function of (seed, key, size)", size)
		}
		if size < 8 {
			continue
		}
		if bytes.Equal(v, AppendRandomValue(nil, 5, 43, size)) || bytes.Equal(v, AppendRandomValue(nil, 6, 42, size)) ||
			bytes.Equal(v, AppendValue(nil, 5, 42, size)) {
			t.Errorf("size %d: equal to another key's, seed's or the default value", size)
		}
		for j := range v {
			w := bytes.Clone(v)
			w[j] ^= 0x80
			if RandomValueMatches(w, 5, 42, size) {
				t.Fatalf("size %d: byte %d changed still matches", size, j)
			}
		}
		if RandomValueMatches(v[:size-1], 5, 42, size) {
			t.Errorf("size %d: a shorter value matches", size)
		}
		for _, b := range v {
			for k := range ones {
				ones[k] += int(b >> k & 1)
			}
		}
	}
	for k, n := range ones {
		if n == 0 {
			t.Errorf("bit %d is never set: the values are not random bytes", k)
		}
	}
}
