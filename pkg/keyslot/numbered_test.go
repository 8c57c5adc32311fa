package keyslot

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestNumbered: the slot of every number drawn, at every width and with
// several prefixes, is Of's of the key's name; numbers wider than the
// width and prefixes with a "{" are refused.
func TestNumbered(t *testing.T) {
	for _, prefix := range []string{"", "key:", "user:profile:", "a}b"} {
		for width := 1; width <= 20; width++ {
			n := NewNumbered(prefix, width)
			x := uint64(12345)
			for i := range 2000 {
				x = x*6364136223846793005 + 1442695040888963407
				v := x
				switch {
				case i < 10:
					v = uint64(i)
				case width < 20:
					v %= n.limit
				}
				name := prefix + fmt.Sprintf("%0*d", width, v)
				got, ok := n.Slot(v)
				if want := uint16(Of([]byte(name))); !ok || got != want {
					t.Fatalf("NewNumbered(%q, %d).Slot(%d) = %d, %v; want %d (the slot of %q)", prefix, width, v, got, ok, want, name)
				}
			}
			if width < 20 {
				if _, ok := n.Slot(n.limit); ok {
					t.Errorf("NewNumbered(%q, %d).Slot(%d): a number of %d digits taken", prefix, width, n.limit, width+1)
				}
			}
		}
	}
	if _, ok := NewNumbered("{user}:", 6).Slot(1); ok {
		t.Error(`NewNumbered("{user}:", 6) gives slots: the prefix holds a hash tag`)
	}
}

// BenchmarkSlot compares a numbered key's slot from its name (the digits
// formatted, then hashed) with Numbered's look-ups, at the widths of
// 1,000,000 keys and of redis-benchmark's key:%012d names.
func BenchmarkSlot(b *testing.B) {
	for _, width := range []int{6, 12} {
		limit := uint64(1)
		for range width {
			limit *= 10
		}
		b.Run("name/width="+strconv.Itoa(width), func(b *testing.B) {
			buf := []byte("key:" + strings.Repeat("0", width))
			var sum int
			for i := range b.N {
				v := uint64(i) * 2654435761 % limit
				for j := len(buf) - 1; j >= 4; j-- {
					buf[j] = byte('0' + v%10)
					v /= 10
				}
				sum += Of(buf)
			}
			_ = sum
		})
		b.Run("numbered/width="+strconv.Itoa(width), func(b *testing.B) {
			n := NewNumbered("key:", width)
			var sum uint16
			for i := range b.N {
				s, _ := n.Slot(uint64(i) * 2654435761 % limit)
				sum += s
			}
			_ = sum
		})
	}
}
