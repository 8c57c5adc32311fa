package keyspace

// Random values (Config.RandomData, --random-data) are every byte of a
// key's own splitmix64 stream: as incompressible as the generator, yet a
// pure function of (seed, key, size), so that reads still verify them.
// The default values are printable and cut from a block shared by every
// key, which a server compressing its values or its log would shrink.

// randomState is the stream of key i's random value; it differs from
// the stream of the default value (valueState).
func randomState(seed int64, i uint64) Rand {
	return Rand(Mix64(uint64(seed)^0x72616e646f6d) ^ Mix64(i+golden)) // "random"
}

// AppendRandomValue appends key i's random value of size bytes.
func AppendRandomValue(dst []byte, seed int64, i uint64, size int) []byte {
	return appendWords(dst, randomState(seed, i), size, ^uint64(0), 0)
}

// RandomValueMatches reports whether b is key i's random value of size
// bytes, without materializing it.
func RandomValueMatches(b []byte, seed int64, i uint64, size int) bool {
	return len(b) == size && matchWords(b, randomState(seed, i), ^uint64(0), 0)
}

// grow extends dst by size bytes, to be overwritten.
func grow(dst []byte, size int) []byte {
	n := len(dst)
	if cap(dst)-n < size {
		dst = append(dst[:cap(dst)], make([]byte, n+size-cap(dst))...)
	}
	return dst[:n+size]
}
