package kvstore

import (
	"crypto/subtle"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// redisCompatVersion is the Redis version whose commands and replies the
// kvstore follows; tools that check redis_version see this one.
const redisCompatVersion = "7.0.0"

func cmdPing(c *conn, args [][]byte) {
	if len(args) == 2 {
		c.appendBulk(args[1])
		return
	}
	c.out = resp.AppendSimple(c.out, "PONG")
}

func cmdEcho(c *conn, args [][]byte) { c.appendBulk(args[1]) }

func cmdQuit(c *conn, _ [][]byte) {
	c.out = resp.AppendOK(c.out)
	c.quit = true
}

func cmdSelect(c *conn, args [][]byte) {
	n, ok := parseStrictInt(args[1])
	switch {
	case !ok:
		c.out = resp.AppendError(c.out, errNotInteger)
	case n != 0:
		c.out = resp.AppendError(c.out, errDBIndex)
	default:
		c.out = resp.AppendOK(c.out)
	}
}

// cmdAuth is AUTH password or AUTH default password: there is one user.
func cmdAuth(c *conn, args [][]byte) {
	user, pass := []byte("default"), args[len(args)-1]
	if len(args) == 3 {
		user = args[1]
	}
	if c.s.cfg.RequirePass == "" {
		c.out = resp.AppendError(c.out, errNoPassword)
		return
	}
	if !c.checkPassword(user, pass) {
		c.out = resp.AppendError(c.out, errWrongPass)
		return
	}
	c.out = resp.AppendOK(c.out)
}

// checkPassword authenticates the connection if user and pass are right.
func (c *conn) checkPassword(user, pass []byte) bool {
	ok := string(user) == "default" &&
		subtle.ConstantTimeCompare(pass, []byte(c.s.cfg.RequirePass)) == 1
	if ok {
		c.authed = true
		c.rd.Unauthenticated(false)
	}
	return ok
}

// cmdHello is HELLO [protover [AUTH user pass] [SETNAME name]]. Only RESP2
// is spoken: HELLO 3 answers -NOPROTO, which makes clients such as go-redis
// fall back to RESP2. The reply is Redis's map, flattened into an array.
func cmdHello(c *conn, args [][]byte) {
	if len(args) >= 2 {
		v, ok := parseStrictInt(args[1])
		if !ok {
			c.out = resp.AppendError(c.out, "ERR Protocol version is not an integer or out of range")
			return
		}
		if v != 2 {
			c.out = resp.AppendError(c.out, errNoProto)
			return
		}
	}
	var name []byte
	setName := false
	for i := 2; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case equalFold(args[i], "auth") && more >= 2:
			if c.s.cfg.RequirePass == "" {
				c.out = resp.AppendError(c.out, errNoPassword)
				return
			}
			if !c.checkPassword(args[i+1], args[i+2]) {
				c.out = resp.AppendError(c.out, errWrongPass)
				return
			}
			i += 2
		case equalFold(args[i], "setname") && more >= 1:
			name, setName = args[i+1], true
			i++
		default:
			c.out = resp.AppendError(c.out, "ERR Syntax error in HELLO option '"+string(truncate(args[i], 128))+"'")
			return
		}
	}
	if !c.authed {
		c.out = resp.AppendError(c.out, errHelloNoAuth)
		return
	}
	if setName {
		if !validClientName(name) {
			c.out = resp.AppendError(c.out, errClientName)
			return
		}
		c.setInfo(func(i *clientInfo) { i.name = string(name) })
	}
	c.out = resp.AppendArray(c.out, 14)
	c.out = resp.AppendBulkString(c.out, "server")
	c.out = resp.AppendBulkString(c.out, "kvstore")
	c.out = resp.AppendBulkString(c.out, "version")
	c.out = resp.AppendBulkString(c.out, redisCompatVersion)
	c.out = resp.AppendBulkString(c.out, "proto")
	c.out = resp.AppendInt(c.out, 2)
	c.out = resp.AppendBulkString(c.out, "id")
	c.out = resp.AppendInt(c.out, c.id)
	c.out = resp.AppendBulkString(c.out, "mode")
	c.out = resp.AppendBulkString(c.out, "standalone")
	c.out = resp.AppendBulkString(c.out, "role")
	c.out = resp.AppendBulkString(c.out, "master")
	c.out = resp.AppendBulkString(c.out, "modules")
	c.out = resp.AppendArray(c.out, 0)
}

// cmdClient is CLIENT ID | GETNAME | SETNAME name | SETINFO attr value |
// INFO | LIST.
func cmdClient(c *conn, args [][]byte) {
	sub := args[1]
	switch {
	case equalFold(sub, "id") && len(args) == 2:
		c.out = resp.AppendInt(c.out, c.id)
	case equalFold(sub, "getname") && len(args) == 2:
		if name := c.info.Load().name; name == "" {
			c.out = resp.AppendNull(c.out)
		} else {
			c.out = resp.AppendBulkString(c.out, name)
		}
	case equalFold(sub, "setname") && len(args) == 3:
		if !validClientName(args[2]) {
			c.out = resp.AppendError(c.out, errClientName)
			return
		}
		c.setInfo(func(i *clientInfo) { i.name = string(args[2]) })
		c.out = resp.AppendOK(c.out)
	case equalFold(sub, "setinfo") && len(args) == 4:
		switch {
		case !validClientName(args[3]):
			c.out = resp.AppendError(c.out, "ERR "+string(args[2])+" cannot contain spaces, newlines or special characters.")
		case equalFold(args[2], "lib-name"):
			c.setInfo(func(i *clientInfo) { i.libName = string(args[3]) })
			c.out = resp.AppendOK(c.out)
		case equalFold(args[2], "lib-ver"):
			c.setInfo(func(i *clientInfo) { i.libVer = string(args[3]) })
			c.out = resp.AppendOK(c.out)
		default:
			c.out = resp.AppendError(c.out, "ERR Unrecognized option '"+string(truncate(args[2], 128))+"'")
		}
	case equalFold(sub, "info") && len(args) == 2:
		c.out = resp.AppendBulkString(c.out, c.describe())
	case equalFold(sub, "list") && len(args) == 2:
		c.out = resp.AppendBulkString(c.out, c.s.clientList())
	case equalFold(sub, "id"), equalFold(sub, "getname"), equalFold(sub, "setname"),
		equalFold(sub, "setinfo"), equalFold(sub, "info"), equalFold(sub, "list"):
		c.out = resp.AppendError(c.out, "ERR wrong number of arguments for 'client|"+string(toLower(sub))+"' command")
	default:
		c.out = resp.AppendError(c.out, unknownSubcommand(sub, "client"))
	}
}

// validClientName accepts what Redis accepts: printable ASCII, no spaces.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// setInfo replaces the connection's CLIENT LIST attributes.
func (c *conn) setInfo(change func(*clientInfo)) {
	i := *c.info.Load()
	change(&i)
	c.info.Store(&i)
}

// describe is the connection's line in CLIENT LIST. It may run on any loop.
func (c *conn) describe() string {
	i := c.info.Load()
	return "id=" + strconv.FormatInt(c.id, 10) +
		" addr=" + c.addr +
		" name=" + i.name +
		" age=" + strconv.FormatInt(int64(time.Since(c.created).Seconds()), 10) +
		" db=0 lib-name=" + i.libName +
		" lib-ver=" + i.libVer + "\n"
}

func (s *Server) clientList() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []byte
	for c := range s.conns {
		out = append(out, c.describe()...)
	}
	return string(out)
}

func cmdDBSize(c *conn, _ [][]byte) {
	c.out = resp.AppendInt(c.out, int64(c.s.db.size()))
}

// cmdFlushAll is FLUSHALL/FLUSHDB [ASYNC|SYNC]: there is one database, and
// the flush is always synchronous.
func cmdFlushAll(c *conn, args [][]byte) {
	if len(args) == 2 && !equalFold(args[1], "async") && !equalFold(args[1], "sync") {
		c.out = resp.AppendError(c.out, errSyntax)
		return
	}
	c.s.db.flush()
	c.changed()
	c.out = resp.AppendOK(c.out)
}

// cmdShutdown is SHUTDOWN [NOSAVE|SAVE|NOW|FORCE]. As with Redis, a
// successful SHUTDOWN answers nothing: the connection closes and the
// server stops.
func cmdShutdown(c *conn, args [][]byte) {
	save := false
	if len(args) == 2 {
		opt := args[1]
		if !equalFold(opt, "nosave") && !equalFold(opt, "save") && !equalFold(opt, "now") && !equalFold(opt, "force") {
			c.out = resp.AppendError(c.out, errSyntax)
			return
		}
		save = equalFold(opt, "save")
	}
	c.s.log.Info("SHUTDOWN requested", "client", c.addr, "save", save)
	if save && c.s.aof != nil {
		if err := c.s.saveLocked(); err != nil {
			c.s.log.Error("SHUTDOWN SAVE: the rewrite failed; not shutting down", "err", err)
			c.out = resp.AppendError(c.out, "ERR Errors trying to SHUTDOWN. Check logs.")
			return
		}
	}
	c.shutdown = true
}

func toLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		out[i] = ch
	}
	return out
}
