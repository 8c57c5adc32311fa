package keyslot

import "strings"

// Numbered gives the slots of numbered keys: a fixed prefix followed by a
// number zero-padded to a fixed width of decimal digits, the names a load
// generator draws. CRC16 is linear over messages of one length (its
// initial value is 0 and it has no final XOR), so a key's checksum is the
// checksum of the prefix and width zeros, XORed with the contribution of
// each group of three digits, looked up in a table per group: two look-ups
// for a six-digit number instead of six dependent table steps and the
// formatting of the digits.
type Numbered struct {
	base  uint16         // CRC16 of the prefix and width '0's
	limit uint64         // 10^width: numbers from here have more digits
	tab   [][1000]uint16 // per group of three digits, from the right
	ok    bool           // the prefix holds no "{": no hash tag
}

// NewNumbered returns the slots of the keys named prefix followed by a
// number zero-padded to width digits.
func NewNumbered(prefix string, width int) *Numbered {
	n := &Numbered{limit: ^uint64(0), ok: !strings.Contains(prefix, "{")}
	if !n.ok || width < 1 {
		n.ok = false
		return n
	}
	p := 1
	for range min(width, 19) {
		p *= 10
	}
	if width < 20 {
		n.limit = uint64(p)
	}
	zeros := []byte(prefix + strings.Repeat("0", width))
	n.base = CRC16(zeros)
	n.tab = make([][1000]uint16, (width+2)/3)
	var delta [3]byte
	for k := range n.tab {
		// The group's three digits, then the 3k digits to their right:
		// a digit d's byte differs from '0' by d (XOR).
		tail := make([]byte, 3*k)
		for c := range 1000 {
			delta[0], delta[1], delta[2] = byte(c/100), byte(c/10%10), byte(c%10)
			n.tab[k][c] = Update(Update(0, delta[:]), tail)
		}
	}
	return n
}

// Slot returns the slot of key number v; ok is false when v has more
// digits than the width, or when the prefix holds a "{" (a hash tag may
// begin there): Of on the key's name gives its slot then.
func (n *Numbered) Slot(v uint64) (slot uint16, ok bool) {
	if !n.ok || v >= n.limit {
		return 0, false
	}
	crc := n.base
	for k := 0; v != 0; k++ {
		crc ^= n.tab[k][v%1000]
		v /= 1000
	}
	return crc & (Count - 1), true
}
