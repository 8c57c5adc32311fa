package loadgen

import (
	"bytes"
	"testing"
)

func TestAppendValue(t *testing.T) {
	for _, size := range []int{0, 1, 7, 8, 9, 32, 100} {
		v := AppendValue([]byte("x"), 5, 42, size)
		if len(v) != 1+size || v[0] != 'x' {
			t.Fatalf("size %d: got %q", size, v)
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
		if long := AppendValue(nil, 5, 42, size+13); !bytes.HasPrefix(long, v) {
			t.Errorf("size %d: not a prefix of the longer value", size)
		}
		if size > 0 {
			for _, other := range [][]byte{AppendValue(nil, 6, 42, size), AppendValue(nil, 5, 43, size)} {
				if size >= 8 && bytes.Equal(other, v) {
					t.Errorf("size %d: another seed or key gives the same value", size)
				}
			}
			bad := bytes.Clone(v)
			bad[len(bad)-1] ^= 1
			if valueMatches(bad, 5, 42, size) || valueMatches(v[:size-1], 5, 42, size) {
				t.Errorf("size %d: valueMatches accepts a wrong value", size)
			}
		}
	}
}
