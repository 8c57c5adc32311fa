// Package keyslot is Redis Cluster's key hashing: the slot a key belongs
// to, CRC16 (XMODEM) of the key or of its hash tag, modulo Count. The
// kvstore's cluster mode and the load generator's routing both use it, so
// they cannot disagree.
package keyslot

import "bytes"

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// Of returns the hash slot of key: CRC16 of the key, or of its hash tag
// (the part between the first "{" and the next "}", when that part is not
// empty), modulo Count.
func Of(key []byte) int {
	if i := bytes.IndexByte(key, '{'); i >= 0 {
		if j := bytes.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(CRC16(key)) & (Count - 1)
}

// CRC16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0) of b, the
// checksum of the Redis Cluster specification; table-driven because every
// routed request computes it.
func CRC16(b []byte) uint16 { return Update(0, b) }

// Update returns the CRC16 of the bytes whose CRC16 is crc followed by b:
// a key's checksum from its prefix's, computed once, and its own bytes.
func Update(crc uint16, b []byte) uint16 {
	for _, c := range b {
		crc = crc<<8 ^ table[byte(crc>>8)^c]
	}
	return crc
}

var table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
