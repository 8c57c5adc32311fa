package loadgen

import "encoding/binary"

// Every value byte is printable ASCII: each byte of a 64-bit word is masked
// to 0..63 and offset by 63, giving '?' to '~' without carries between
// bytes. Eight bytes per hash keeps generation and verification at a few
// nanoseconds for the usual 32-byte value.
const (
	valueMask   = 0x3f3f3f3f3f3f3f3f
	valueOffset = 0x3f3f3f3f3f3f3f3f
)

// valueState is the hash stream of key i's value: a function of the seed
// and the key only, so that any value size gives a prefix of the same
// bytes.
func valueState(seed int64, i uint64) rng {
	return rng(mix64(uint64(seed)^0x76616c7565) ^ mix64(i+golden)) // "value"
}

// AppendValue appends the value that a run with this seed writes to key i:
// size printable ASCII bytes ('?' to '~'), a pure function of (seed, i,
// size). A longer value of the same key starts with the shorter one.
func AppendValue(dst []byte, seed, i int64, size int) []byte {
	return appendValue(dst, seed, uint64(i), size)
}

func appendValue(dst []byte, seed int64, i uint64, size int) []byte {
	st := valueState(seed, i)
	n := len(dst)
	if cap(dst)-n < size {
		dst = append(dst[:cap(dst)], make([]byte, n+size-cap(dst))...)
	}
	dst = dst[:n+size]
	b := dst[n:]
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, st.next()&valueMask+valueOffset)
		b = b[8:]
	}
	if len(b) > 0 {
		w := st.next()&valueMask + valueOffset
		for j := range b {
			b[j] = byte(w >> (8 * j))
		}
	}
	return dst
}

// valueMatches reports whether b is the value of key i with this seed and
// size, without materializing the expected value.
func valueMatches(b []byte, seed int64, i uint64, size int) bool {
	if len(b) != size {
		return false
	}
	st := valueState(seed, i)
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != st.next()&valueMask+valueOffset {
			return false
		}
		b = b[8:]
	}
	if len(b) > 0 {
		w := st.next()&valueMask + valueOffset
		for j := range b {
			if b[j] != byte(w>>(8*j)) {
				return false
			}
		}
	}
	return true
}
