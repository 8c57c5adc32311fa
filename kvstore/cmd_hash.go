package kvstore

import (
	"bytes"

	"github.com/kvbench/kvbench/pkg/resp"
)

// The kvstore's hash engine (HSET key value, HGET key, …: the generic
// engine handlers of cmd_engine.go on db.hash) and Redis hashes (HSET key
// field value …), which share HSET, HGET and HDEL by argument count.

func hashEngine(db *DB) table { return db.hash }

var (
	hashEngineSet = engineSet(hashEngine)
	hashEngineGet = engineGet(hashEngine)
	hashEngineDel = engineDel(hashEngine)
	cmdHMod       = engineMod(hashEngine)
	cmdHExist     = engineExist(hashEngine)
)

// cmdHSet is the hash engine's HSET key value, or Redis's HSET key field
// value [field value ...].
func cmdHSet(c *conn, args [][]byte) {
	if len(args) == 3 {
		hashEngineSet(c, args)
		return
	}
	if len(args)%2 != 0 {
		c.out = resp.AppendError(c.out, wrongArity("hset"))
		return
	}
	h, ok := c.redisHash(args[1], true)
	if !ok {
		return
	}
	added := 0
	for i := 2; i < len(args); i += 2 {
		if _, ok := h.fields[string(args[i])]; !ok {
			added++
		}
		h.fields[string(args[i])] = bytes.Clone(nonNil(args[i+1]))
	}
	c.changed()
	c.out = resp.AppendInt(c.out, int64(added))
}

// cmdHGet is the hash engine's HGET key, or Redis's HGET key field.
func cmdHGet(c *conn, args [][]byte) {
	if len(args) == 2 {
		hashEngineGet(c, args)
		return
	}
	h, ok := c.redisHash(args[1], false)
	if !ok {
		return
	}
	if h != nil {
		if v, ok := h.fields[string(args[2])]; ok {
			c.appendValue(v)
			return
		}
	}
	c.out = resp.AppendNull(c.out)
}

// cmdHDel is the hash engine's HDEL key, or Redis's HDEL key field....
func cmdHDel(c *conn, args [][]byte) {
	if len(args) == 2 {
		hashEngineDel(c, args)
		return
	}
	h, ok := c.redisHash(args[1], false)
	if !ok {
		return
	}
	n := 0
	if h != nil {
		for _, f := range args[2:] {
			if _, ok := h.fields[string(f)]; ok {
				delete(h.fields, string(f))
				n++
			}
		}
		if len(h.fields) == 0 {
			delete(c.s.db.hashes, string(args[1]))
		}
	}
	if n > 0 {
		c.changed()
	}
	c.out = resp.AppendInt(c.out, int64(n))
}

func cmdHLen(c *conn, args [][]byte) {
	if h, ok := c.redisHash(args[1], false); ok {
		n := 0
		if h != nil {
			n = len(h.fields)
		}
		c.out = resp.AppendInt(c.out, int64(n))
	}
}

func cmdHGetAll(c *conn, args [][]byte) {
	h, ok := c.redisHash(args[1], false)
	if !ok {
		return
	}
	if h == nil {
		c.out = resp.AppendArray(c.out, 0)
		return
	}
	c.out = resp.AppendArray(c.out, 2*len(h.fields))
	for f, v := range h.fields {
		c.out = resp.AppendBulkString(c.out, f)
		c.appendValue(v)
	}
}

func cmdHExists(c *conn, args [][]byte) {
	h, ok := c.redisHash(args[1], false)
	if !ok {
		return
	}
	found := false
	if h != nil {
		_, found = h.fields[string(args[2])]
	}
	c.out = resp.AppendInt(c.out, b2i(found))
}

// redisHash returns the Redis hash under key, creating it if create is set;
// nil if there is none. When the key holds a string it answers WRONGTYPE
// and returns false.
func (c *conn) redisHash(key []byte, create bool) (*rhash, bool) {
	db := c.s.db
	if h, ok := db.hashes[string(key)]; ok {
		return h, true
	}
	if _, ok := db.strs.get(key); ok {
		c.out = resp.AppendError(c.out, errWrongType)
		return nil, false
	}
	if !create {
		return nil, true
	}
	h := &rhash{fields: make(map[string][]byte)}
	db.hashes[string(key)] = h
	return h, true
}
