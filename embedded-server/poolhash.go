package kvstore

// poolHash is the pool allocator's hash table: records in an arena, found
// through a hashIndex.
type poolHash struct {
	ar  *arena
	idx hashIndex
}

func newPoolHash() *poolHash {
	return &poolHash{ar: newArena(), idx: newHashIndex()}
}

func (t *poolHash) touch(key []byte, pass int) uint64 { return t.idx.touch(t.ar, key, pass) }

func (t *poolHash) get(key []byte) ([]byte, bool) {
	r, ok := t.idx.lookup(t.ar, key)
	if !ok {
		return nil, false
	}
	return t.ar.val(r), true
}

func (t *poolHash) put(key, val []byte, mode putMode) bool {
	s, h, found := t.idx.slot(t.ar, key)
	switch {
	case found && mode == putNew, !found && mode == putExisting:
		return false
	case found && t.ar.fits(s.r, len(key), len(val)):
		t.ar.setVal(s.r, val)
	case found:
		old := s.r
		s.r = t.ar.newRecord(key, val)
		t.ar.free(old)
	default:
		t.idx.claim(s, h, t.ar.newRecord(key, val))
	}
	return true
}

func (t *poolHash) appendVal(key, suffix []byte) int {
	s, h, found := t.idx.slot(t.ar, key)
	if !found {
		t.idx.claim(s, h, t.ar.newRecord(key, suffix))
		return len(suffix)
	}
	r, n := t.ar.appendVal(s.r, suffix)
	if r != s.r {
		t.ar.free(s.r)
		s.r = r
	}
	return n
}

func (t *poolHash) del(key []byte) bool {
	r, ok := t.idx.remove(t.ar, key)
	if ok {
		t.ar.free(r)
	}
	return ok
}

func (t *poolHash) len() int { return t.idx.n }

func (t *poolHash) clear() {
	t.ar.reset()
	t.idx.reset()
}

func (t *poolHash) scan(fn func(key, val []byte) bool) {
	t.idx.refs(func(r ref) bool { return fn(t.ar.key(r), t.ar.val(r)) })
}

// snapshot returns a copy that can be scanned while t goes on changing.
func (t *poolHash) snapshot() table {
	return &poolHash{ar: t.ar.clone(), idx: t.idx.clone()}
}
