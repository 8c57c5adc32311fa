package kvstore

import (
	"bytes"
	"strconv"

	"github.com/kvbench/kvbench/pkg/resp"
)

func cmdGet(c *conn, args [][]byte) {
	db := c.s.db
	if v, ok := db.strs.get(args[1]); ok {
		c.s.stats.hits.Add(1)
		c.appendValue(v)
		return
	}
	if db.typeOf(args[1]) == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	c.s.stats.misses.Add(1)
	c.out = resp.AppendNull(c.out)
}

// cmdSet is SET key value [NX|XX] [GET]. It replaces a key of any type, as
// Redis does.
func cmdSet(c *conn, args [][]byte) {
	db := c.s.db
	key, val := args[1], args[2]
	var nx, xx, get bool
	for _, opt := range args[3:] {
		switch {
		case equalFold(opt, "nx") && !xx:
			nx = true
		case equalFold(opt, "xx") && !nx:
			xx = true
		case equalFold(opt, "get"):
			get = true
		case equalFold(opt, "ex"), equalFold(opt, "px"), equalFold(opt, "exat"),
			equalFold(opt, "pxat"), equalFold(opt, "keepttl"):
			c.out = resp.AppendError(c.out, errNoExpiry)
			return
		default:
			c.out = resp.AppendError(c.out, errSyntax)
			return
		}
	}
	typ := typeString
	if nx || xx || get || len(db.hashes) > 0 {
		typ = db.typeOf(key)
	}
	if get && typ == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	if get {
		if old, ok := db.strs.get(key); ok {
			c.appendValue(old)
		} else {
			c.out = resp.AppendNull(c.out)
		}
	}
	if nx && typ != typeNone || xx && typ == typeNone {
		if !get {
			c.out = resp.AppendNull(c.out)
		}
		return
	}
	if typ == typeHash {
		delete(db.hashes, string(key))
	}
	db.strs.put(key, val, putAny)
	c.changed()
	if !get {
		c.out = resp.AppendOK(c.out)
	}
}

func cmdDel(c *conn, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.s.db.delRedis(key) {
			n++
		}
	}
	if n > 0 {
		c.changed()
	}
	c.out = resp.AppendInt(c.out, int64(n))
}

func cmdExists(c *conn, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.s.db.typeOf(key) != typeNone {
			n++
		}
	}
	c.out = resp.AppendInt(c.out, int64(n))
}

func cmdExist(c *conn, args [][]byte) {
	c.out = resp.AppendInt(c.out, b2i(c.s.db.typeOf(args[1]) != typeNone))
}

// cmdMod is MOD key value: SET for an existing string key only.
func cmdMod(c *conn, args [][]byte) {
	db := c.s.db
	if db.strs.put(args[1], args[2], putExisting) {
		c.changed()
		c.out = resp.AppendOK(c.out)
		return
	}
	if db.typeOf(args[1]) == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	c.out = resp.AppendError(c.out, errNoExist)
}

func cmdIncr(c *conn, args [][]byte) { incrBy(c, args[1], 1) }
func cmdDecr(c *conn, args [][]byte) { incrBy(c, args[1], -1) }

func cmdIncrBy(c *conn, args [][]byte) {
	if n, ok := parseStrictInt(args[2]); ok {
		incrBy(c, args[1], n)
		return
	}
	c.out = resp.AppendError(c.out, errNotInteger)
}

func cmdDecrBy(c *conn, args [][]byte) {
	n, ok := parseStrictInt(args[2])
	if !ok || n == minInt64 {
		c.out = resp.AppendError(c.out, errNotInteger)
		return
	}
	incrBy(c, args[1], -n)
}

const minInt64 = -1 << 63

func incrBy(c *conn, key []byte, by int64) {
	db := c.s.db
	var cur int64
	if v, ok := db.strs.get(key); ok {
		n, ok := parseStrictInt(v)
		if !ok {
			c.out = resp.AppendError(c.out, errNotInteger)
			return
		}
		cur = n
	} else if db.typeOf(key) == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	next := cur + by
	if by > 0 && next < cur || by < 0 && next > cur {
		c.out = resp.AppendError(c.out, errOverflow)
		return
	}
	var buf [20]byte
	db.strs.put(key, strconv.AppendInt(buf[:0], next, 10), putAny)
	c.changed()
	c.out = resp.AppendInt(c.out, next)
}

func cmdMSet(c *conn, args [][]byte) {
	if len(args)%2 != 1 {
		c.out = resp.AppendError(c.out, wrongArity("mset"))
		return
	}
	db := c.s.db
	for i := 1; i < len(args); i += 2 {
		if len(db.hashes) > 0 {
			delete(db.hashes, string(args[i]))
		}
		db.strs.put(args[i], args[i+1], putAny)
	}
	c.changed()
	c.out = resp.AppendOK(c.out)
}

func cmdMGet(c *conn, args [][]byte) {
	c.out = resp.AppendArray(c.out, len(args)-1)
	for _, key := range args[1:] {
		if v, ok := c.s.db.strs.get(key); ok {
			c.appendValue(v)
		} else {
			c.out = resp.AppendNull(c.out)
		}
	}
}

func cmdStrlen(c *conn, args [][]byte) {
	db := c.s.db
	if v, ok := db.strs.get(args[1]); ok {
		c.out = resp.AppendInt(c.out, int64(len(v)))
		return
	}
	if db.typeOf(args[1]) == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	c.out = resp.AppendInt(c.out, 0)
}

func cmdAppend(c *conn, args [][]byte) {
	db := c.s.db
	if db.typeOf(args[1]) == typeHash {
		c.out = resp.AppendError(c.out, errWrongType)
		return
	}
	c.out = resp.AppendInt(c.out, int64(db.strs.appendVal(args[1], args[2])))
	c.changed()
}

// parseStrictInt accepts exactly the integers Redis's string2ll accepts:
// the canonical decimal form of an int64 (no sign but '-', no leading zeros,
// no spaces).
func parseStrictInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	var buf [20]byte
	return n, bytes.Equal(strconv.AppendInt(buf[:0], n, 10), b)
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring
// case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
