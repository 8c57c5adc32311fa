package kvstore

import "github.com/kvbench/kvbench/pkg/resp"

// The kvstore engines' commands, one generic handler per verb, shared by
// the hash engine (HSET/HGET/…) and the ordered engine (RSET/RGET/…). Each
// is given the engine it works on.

func engineSet(eng func(*DB) table) func(*conn, [][]byte) {
	return func(c *conn, args [][]byte) {
		if eng(c.s.db).put(args[1], args[2], putNew) {
			c.changed()
			c.out = resp.AppendOK(c.out)
		} else {
			c.out = resp.AppendError(c.out, errExist)
		}
	}
}

func engineGet(eng func(*DB) table) func(*conn, [][]byte) {
	return func(c *conn, args [][]byte) {
		if v, ok := eng(c.s.db).get(args[1]); ok {
			c.s.stats.hits.Add(1)
			c.appendValue(v)
		} else {
			c.s.stats.misses.Add(1)
			c.out = resp.AppendNull(c.out)
		}
	}
}

func engineDel(eng func(*DB) table) func(*conn, [][]byte) {
	return func(c *conn, args [][]byte) {
		ok := eng(c.s.db).del(args[1])
		if ok {
			c.changed()
		}
		c.out = resp.AppendInt(c.out, b2i(ok))
	}
}

func engineMod(eng func(*DB) table) func(*conn, [][]byte) {
	return func(c *conn, args [][]byte) {
		if eng(c.s.db).put(args[1], args[2], putExisting) {
			c.changed()
			c.out = resp.AppendOK(c.out)
		} else {
			c.out = resp.AppendError(c.out, errNoExist)
		}
	}
}

func engineExist(eng func(*DB) table) func(*conn, [][]byte) {
	return func(c *conn, args [][]byte) {
		_, ok := eng(c.s.db).get(args[1])
		c.out = resp.AppendInt(c.out, b2i(ok))
	}
}
