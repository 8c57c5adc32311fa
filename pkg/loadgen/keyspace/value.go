package keyspace

import (
	"bytes"
	"encoding/binary"
	"sync"
)

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
func valueState(seed int64, i uint64) Rand {
	return Rand(Mix64(uint64(seed)^0x76616c7565) ^ Mix64(i+golden)) // "value"
}

// AppendValue appends the value that a run with this seed writes to key i:
// size printable ASCII bytes ('?' to '~'), a pure function of (seed, i,
// size). Below WindowMin bytes the value is the key's hash stream; from
// WindowMin on it is a header, the key's hash and the size, followed by a
// window into a block of printable bytes shared by every key (at an offset
// given by the key's hash), so that building and checking it costs a copy
// and a comparison rather than hashing every 8 bytes.
func AppendValue(dst []byte, seed, i int64, size int) []byte {
	return appendValue(dst, seed, uint64(i), size)
}

// WindowMin is the smallest value made of a header and a window.
const WindowMin = 64

// windowStarts is how many offsets into the shared block a window may
// start at; the block is that much longer than the longest window.
const windowStarts = 1 << 16

// valueHeader returns the two header words of key i's value of size bytes
// (WindowMin and more) and the offset of its window.
func valueHeader(seed int64, i uint64, size int) (w0, w1 uint64, off int) {
	st := valueState(seed, i)
	h := st.Next()
	w0 = h&valueMask + valueOffset
	w1 = Mix64(h^uint64(size))&valueMask + valueOffset
	return w0, w1, int(st.Next() % windowStarts)
}

// valueBlocks holds, per seed, the printable block windows are cut from,
// as long as the longest window asked for so far.
var valueBlocks sync.Map // int64 -> []byte

// valueBlock returns the seed's block, at least n bytes long. Its bytes are
// a function of the seed alone: the hash stream of a key no run uses.
func valueBlock(seed int64, n int) []byte {
	if b, ok := valueBlocks.Load(seed); ok && len(b.([]byte)) >= n {
		return b.([]byte)
	}
	size := 1 << 20
	for size < n {
		size *= 2
	}
	b := appendStream(make([]byte, 0, size), valueState(seed, ^uint64(0)), size)
	valueBlocks.Store(seed, b)
	return b
}

// BlockFor returns the block values of size bytes are cut from, nil for
// values shorter than WindowMin.
func BlockFor(seed int64, size int) []byte {
	if size < WindowMin {
		return nil
	}
	return valueBlock(seed, windowStarts+size-16)
}

func appendValue(dst []byte, seed int64, i uint64, size int) []byte {
	return AppendValueFrom(dst, BlockFor(seed, size), seed, i, size)
}

// AppendValueFrom is appendValue with the block of BlockFor(seed, size).
func AppendValueFrom(dst, block []byte, seed int64, i uint64, size int) []byte {
	if size >= WindowMin {
		dst, w := AppendValueHead(dst, block, seed, i, size)
		return append(dst, w...)
	}
	return appendStream(dst, valueState(seed, i), size)
}

// AppendValueHead appends the header of key i's value of size bytes
// (WindowMin and more) and returns the rest of the value, its window into
// block.
func AppendValueHead(dst, block []byte, seed int64, i uint64, size int) ([]byte, []byte) {
	w0, w1, off := valueHeader(seed, i, size)
	dst = binary.LittleEndian.AppendUint64(dst, w0)
	dst = binary.LittleEndian.AppendUint64(dst, w1)
	return dst, block[off : off+size-16]
}

// appendStream appends size bytes of the hash stream st, printable.
func appendStream(dst []byte, st Rand, size int) []byte {
	return appendWords(dst, st, size, valueMask, valueOffset)
}

// appendWords appends size bytes of the stream st, each word masked with
// mask and offset by off.
func appendWords(dst []byte, st Rand, size int, mask, off uint64) []byte {
	n := len(dst)
	dst = grow(dst, size)
	b := dst[n:]
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, st.Next()&mask+off)
		b = b[8:]
	}
	if len(b) > 0 {
		w := st.Next()&mask + off
		for j := range b {
			b[j] = byte(w >> (8 * j))
		}
	}
	return dst
}

// matchWords reports whether b is the next len(b) bytes appendWords
// makes of st.
func matchWords(b []byte, st Rand, mask, off uint64) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != st.Next()&mask+off {
			return false
		}
		b = b[8:]
	}
	if len(b) > 0 {
		w := st.Next()&mask + off
		for j := range b {
			if b[j] != byte(w>>(8*j)) {
				return false
			}
		}
	}
	return true
}

// ValueMatches reports whether b is the value of key i with this seed and
// size, without materializing the expected value.
func ValueMatches(b []byte, seed int64, i uint64, size int) bool {
	return ValueMatchesFrom(b, BlockFor(seed, size), seed, i, size)
}

// ValueMatchesFrom is ValueMatches with the block of BlockFor(seed, size).
func ValueMatchesFrom(b, block []byte, seed int64, i uint64, size int) bool {
	if len(b) != size {
		return false
	}
	if size >= WindowMin {
		w0, w1, off := valueHeader(seed, i, size)
		return binary.LittleEndian.Uint64(b) == w0 && binary.LittleEndian.Uint64(b[8:]) == w1 &&
			bytes.Equal(b[16:], block[off:off+size-16])
	}
	return matchWords(b, valueState(seed, i), valueMask, valueOffset)
}

// Values are the values of a run: key i's is a function of (Seed, i, its
// size), its size Size or drawn from Sizes.
type Values struct {
	Seed int64
	Size int
	// Sizes, when set, gives each key its size instead of Size.
	Sizes *Sizes
	// Block is the block windows are cut from (BlockFor the largest size).
	Block []byte
	// Random makes them random values (AppendRandomValue).
	Random bool
}

// NewValues returns the values of a run of seed: size bytes each, or the
// sizes of rs when it is not empty.
func NewValues(seed int64, size int, rs []SizeRange) Values {
	v := Values{Seed: seed, Size: size, Sizes: NewSizes(rs, seed)}
	largest := size
	if v.Sizes != nil {
		largest = v.Sizes.Max()
	}
	v.Block = BlockFor(seed, largest)
	return v
}

// SizeOf is the size of key i's value.
func (v *Values) SizeOf(i uint64) int {
	if v.Sizes == nil {
		return v.Size
	}
	return v.Sizes.Of(i)
}

// Append appends key i's value.
func (v *Values) Append(dst []byte, i uint64) []byte {
	if v.Random {
		return AppendRandomValue(dst, v.Seed, i, v.SizeOf(i))
	}
	return AppendValueFrom(dst, v.Block, v.Seed, i, v.SizeOf(i))
}

// Matches reports whether b is key i's value.
func (v *Values) Matches(b []byte, i uint64) bool {
	if v.Random {
		return RandomValueMatches(b, v.Seed, i, v.SizeOf(i))
	}
	return ValueMatchesFrom(b, v.Block, v.Seed, i, v.SizeOf(i))
}
