package mix

import "strings"

// readCommands are the commands that only read the dataset (Redis's
// @read category, with the kvstore's own reads): a replica serves them.
var readCommands = map[string]bool{
	"GET": true, "MGET": true, "GETRANGE": true, "SUBSTR": true, "STRLEN": true, "LCS": true,
	"EXISTS": true, "TYPE": true, "TTL": true, "PTTL": true, "EXPIRETIME": true, "PEXPIRETIME": true,
	"HGET": true, "HMGET": true, "HGETALL": true, "HKEYS": true, "HVALS": true, "HLEN": true,
	"HEXISTS": true, "HSTRLEN": true, "HRANDFIELD": true, "HSCAN": true,
	"LRANGE": true, "LLEN": true, "LINDEX": true, "LPOS": true,
	"SMEMBERS": true, "SCARD": true, "SISMEMBER": true, "SMISMEMBER": true, "SRANDMEMBER": true,
	"SINTER": true, "SUNION": true, "SDIFF": true, "SINTERCARD": true, "SSCAN": true,
	"ZRANGE": true, "ZREVRANGE": true, "ZRANGEBYSCORE": true, "ZREVRANGEBYSCORE": true,
	"ZRANGEBYLEX": true, "ZREVRANGEBYLEX": true, "ZSCORE": true, "ZMSCORE": true, "ZCARD": true,
	"ZCOUNT": true, "ZLEXCOUNT": true, "ZRANK": true, "ZREVRANK": true, "ZRANDMEMBER": true, "ZSCAN": true,
	"GETBIT": true, "BITCOUNT": true, "BITPOS": true, "PFCOUNT": true,
	"XRANGE": true, "XREVRANGE": true, "XLEN": true,
	"GEOPOS": true, "GEODIST": true, "GEOHASH": true, "GEOSEARCH": true,
	"DBSIZE": true, "KEYS": true, "SCAN": true, "RANDOMKEY": true, "DUMP": true, "OBJECT": true,
	// The kvstore's reads (package kvstore).
	"RGET": true, "REXIST": true, "EXIST": true, "HEXIST": true,
}

// IsRead reports whether command name (any case) only reads the
// dataset, so that a replica can serve it.
func IsRead(name string) bool { return readCommands[strings.ToUpper(name)] }

// Reads reports whether a command of a mix only reads: its command is
// one IsRead names and it has no dependent write (Then). A run that
// reads from replicas sends it to one; every other command goes to the
// master.
func Reads(c Command) bool { return len(c.Args) > 0 && len(c.Then) == 0 && IsRead(c.Args[0]) }

// Draws returns how many keys one request of pieces draws from its Keys
// (Plan.Append): one per key placeholder, and one for a value that comes
// before any key.
func Draws(pieces []Piece) int {
	n, drawn := 0, false
	for _, pc := range pieces {
		switch pc.kind {
		case phDigits, phKey:
			n, drawn = n+1, true
		case phData:
			if !drawn {
				n, drawn = n+1, true
			}
		}
	}
	return n
}
