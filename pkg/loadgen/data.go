package loadgen

import (
	"strconv"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/resp"
)

// appendValue appends key's value: random bytes with Config.RandomData,
// else the default printable value.
func (p *plan) appendValue(dst []byte, key uint64) []byte {
	if p.random {
		return keyspace.AppendRandomValue(dst, p.seed, key, p.vsize)
	}
	return keyspace.AppendValueFrom(dst, p.block, p.seed, key, p.vsize)
}

// valueMatches reports whether b is key's value.
func (p *plan) valueMatches(b []byte, key uint64) bool {
	if p.random {
		return keyspace.RandomValueMatches(b, p.seed, key, p.vsize)
	}
	return keyspace.ValueMatchesFrom(b, p.block, p.seed, key, p.vsize)
}

// expiryTail is the longest "EX n" appendExpiry appends.
const expiryTail = len("$2\r\nEX\r\n$20\r\n\r\n") + 20

// appendExpiry appends the EX argument of a write of key: its expiry in
// seconds, drawn uniformly from [ExpiryMin, ExpiryMax] as a function of
// the seed and the key.
func (p *plan) appendExpiry(dst []byte, key uint64) []byte {
	r := keyspace.Rand(keyspace.Mix64(uint64(p.seed)^0x657870697279) ^ keyspace.Mix64(key+1)) // "expiry"
	n := p.exMin + int64(r.Below(uint64(p.exMax-p.exMin+1)))
	var d [20]byte
	digits := strconv.AppendInt(d[:0], n, 10)
	dst = append(dst, "$2\r\nEX\r\n$"...)
	dst = strconv.AppendInt(dst, int64(len(digits)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, digits...)
	return append(dst, '\r', '\n')
}

// mgetKeys are the keys of the MGET at ring position i.
func (c *conn) mgetKeys(i int) []uint64 {
	n := c.p.mget
	i &= len(c.ring) - 1
	return c.mkeys[i*n : (i+1)*n]
}

// appendMget appends an MGET of key and the next keys of the
// connection's sequence, kept for its reply at ring position i.
func (c *conn) appendMget(dst []byte, i int, key uint64) []byte {
	p := c.p
	keys := c.mgetKeys(i)
	dst = append(dst, p.mgetHead...)
	for j := range keys {
		if j > 0 {
			key = c.keys.Next()
		}
		keys[j] = key
		dst = append(dst, p.keyHead...)
		dst = keyspace.AppendDigits(dst, key, p.width)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// mgetReply handles the array reply r (its header n bytes of b) to the
// MGET at the head of the ring: one request, a miss when a key has no
// value, each value verified. It returns the reply's length, 0 when b
// holds only part of it.
func (c *conn) mgetReply(b []byte, r resp.Reply, n int) (int, error) {
	end, err := resp.SkipReply(b, resp.DefaultMaxBulkLen)
	if end == 0 || err != nil {
		return 0, err
	}
	keys := c.mgetKeys(c.head)
	if r.Int != int64(len(keys)) {
		if c.p.verify {
			c.wrongValue(keys[0], b[:end])
		}
		return end, nil
	}
	var missed *uint64
	for j, key := range keys {
		e, m, _ := resp.ParseReply(b[n:end], resp.DefaultMaxBulkLen) // complete: SkipReply parsed it
		n += m
		switch {
		case e.IsNull() && e.Type != resp.TypeArray:
			if missed == nil {
				missed = &keys[j]
			}
		case !c.p.verify:
		case e.Type != resp.TypeBulk:
			c.wrongValue(key, b[n-m:n])
		case !c.p.valueMatches(e.Data, key):
			c.wrongValue(key, e.Data)
		}
	}
	if missed != nil {
		c.miss(*missed)
	}
	return end, nil
}
