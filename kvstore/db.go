package kvstore

import (
	"sync"
)

// DB is the whole dataset: the Redis-compatible keyspace (strings and
// Redis hashes, which share key names) and the kvstore's own engines, each a
// keyspace of its own. Every method expects mu to be held by the caller: the
// connection locks once per batch, not once per command.
type DB struct {
	mu sync.RWMutex

	strs   table             // Redis strings
	hashes map[string]*rhash // Redis hashes, keyed like strs
	hash   table             // kvstore hash engine: HSET key value, HGET key…
	tree   table             // kvstore ordered engine: RSET key value, RGET key…
}

// rhash is a Redis hash: a field map under one key.
type rhash struct {
	fields map[string][]byte
}

// Allocators for the engines' records.
const (
	// AllocGo stores each key and value as its own Go allocation.
	AllocGo = "go"
	// AllocPool packs records into arenas outside the Go heap, indexed by
	// pointer-free tables (the C kvstore's "mypool").
	AllocPool = "pool"
)

func newDB(alloc string) *DB {
	db := &DB{hashes: make(map[string]*rhash)}
	if alloc == AllocGo {
		db.strs, db.hash, db.tree = newMapTable(), newMapTable(), newTreeTable()
	} else {
		db.strs, db.hash, db.tree = newPoolHash(), newPoolHash(), newPoolTree()
	}
	return db
}

// size is DBSIZE: keys in every keyspace.
func (db *DB) size() int {
	return db.strs.len() + len(db.hashes) + db.hash.len() + db.tree.len()
}

func (db *DB) flush() {
	db.strs.clear()
	db.hash.clear()
	db.tree.clear()
	clear(db.hashes)
}

// keyType is what the Redis keyspace holds under a key.
type keyType int

const (
	typeNone keyType = iota
	typeString
	typeHash
)

func (db *DB) typeOf(key []byte) keyType {
	if _, ok := db.strs.get(key); ok {
		return typeString
	}
	if len(db.hashes) > 0 {
		if _, ok := db.hashes[string(key)]; ok {
			return typeHash
		}
	}
	return typeNone
}

// delRedis deletes key from the Redis keyspace, whatever its type.
func (db *DB) delRedis(key []byte) bool {
	if db.strs.del(key) {
		return true
	}
	if len(db.hashes) > 0 {
		if _, ok := db.hashes[string(key)]; ok {
			delete(db.hashes, string(key))
			return true
		}
	}
	return false
}

// arenas are the pool arenas of the engines.
func (db *DB) arenas() []*arena {
	var as []*arena
	for _, t := range []table{db.strs, db.hash, db.tree} {
		switch t := t.(type) {
		case *poolHash:
			as = append(as, t.ar)
		case *poolTree:
			as = append(as, t.ar)
		}
	}
	return as
}

// takeLarge returns n bytes for a large record: a kept one of the string
// table's (see arena.freeLarge), or new memory.
func (db *DB) takeLarge(n int) []byte {
	if t, ok := db.strs.(*poolHash); ok {
		if b := t.ar.takeKept(n); b != nil {
			return b
		}
	}
	return largeMem(n)
}

// offer lets the next large record made adopt rec rather than copy its
// value into new memory (see arena.newLarge); nil withdraws the offer.
func (db *DB) offer(rec []byte) {
	for _, a := range db.arenas() {
		a.offered = rec
	}
}

// arenaBytes is the memory held by pool arenas outside the Go heap.
func (db *DB) arenaBytes() int64 {
	var n int64
	for _, t := range []table{db.strs, db.hash, db.tree} {
		switch t := t.(type) {
		case *poolHash:
			n += t.ar.bytes()
		case *poolTree:
			n += t.ar.bytes() + t.nodes.bytes()
		}
	}
	return n
}
