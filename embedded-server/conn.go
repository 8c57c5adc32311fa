package kvstore

import (
	"net"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// keepOutSize caps the reply buffer a connection keeps between batches; a
// larger one (a big MGET, a 100 MB GET) is dropped once written.
const keepOutSize = 1 << 20

// conn is one client connection, served by one goroutine.
type conn struct {
	s       *Server
	nc      net.Conn
	id      int64
	addr    string
	created time.Time
	rd      *resp.Reader
	out     []byte
	batch   []call

	authed   bool
	name     string
	libName  string
	libVer   string
	quit     bool // QUIT: answer what came before it, then close
	shutdown bool // SHUTDOWN: close, then stop the server

	interrupted atomic.Bool
}

// call is one request of a batch with its resolved command.
type call struct {
	req resp.Command
	cmd *command
}

func newConn(s *Server, nc net.Conn) *conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &conn{
		s:       s,
		nc:      nc,
		id:      s.nextID.Add(1),
		addr:    nc.RemoteAddr().String(),
		created: time.Now(),
		rd:      resp.NewReader(nc, s.cfg.Limits),
		authed:  s.cfg.RequirePass == "",
	}
}

// interrupt makes the connection stop reading: its goroutine answers the
// requests it has read and returns.
func (c *conn) interrupt() {
	c.interrupted.Store(true)
	c.nc.SetReadDeadline(time.Now())
}

func (c *conn) serve() {
	defer c.nc.Close()
	for {
		if err := c.rd.Fill(); err != nil {
			if resp.IsProtocolError(err) {
				c.protocolError(err)
			}
			return
		}
		c.batch = c.batch[:0]
		var perr error
		for {
			req, ok, err := c.rd.Next()
			if err != nil {
				perr = err
				break
			}
			if !ok {
				break
			}
			c.batch = append(c.batch, call{req: req})
		}
		if len(c.batch) > 0 {
			c.exec()
		}
		if perr != nil {
			c.protocolError(perr)
			return
		}
		if !c.flush() || c.quit {
			return
		}
		if c.shutdown {
			c.nc.Close()
			go c.s.Close()
			return
		}
	}
}

// protocolError answers a malformed request and gives up on the connection,
// as Redis does: the stream cannot be resynchronised.
func (c *conn) protocolError(err error) {
	c.s.stats.protoErrors.Add(1)
	c.s.log.Warn("closing client after a protocol error", "client", c.addr, "id", c.id, "err", err)
	c.out = resp.AppendError(c.out, "ERR "+err.Error())
	c.flush()
}

// flush writes the batch's replies with one write.
func (c *conn) flush() bool {
	if len(c.out) == 0 {
		return true
	}
	n, err := c.nc.Write(c.out)
	c.s.stats.netOut.Add(int64(n))
	if cap(c.out) > keepOutSize {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	return err == nil
}

// exec runs a batch under one acquisition of the database lock: a read lock
// when every command of the batch only reads.
func (c *conn) exec() {
	mode := lockNone
	for i := range c.batch {
		cmd := lookup(c.batch[i].req.Args[0])
		c.batch[i].cmd = cmd
		if cmd != nil && cmd.lock > mode {
			mode = cmd.lock
		}
	}
	db := c.s.db
	switch mode {
	case lockWrite:
		db.mu.Lock()
	case lockRead:
		db.mu.RLock()
	}
	n := 0
	for i := range c.batch {
		n++
		c.call(&c.batch[i])
		if c.quit || c.shutdown {
			break
		}
	}
	switch mode {
	case lockWrite:
		db.mu.Unlock()
	case lockRead:
		db.mu.RUnlock()
	}
	c.s.stats.commands.Add(int64(n))
}

func (c *conn) call(cl *call) {
	args, cmd := cl.req.Args, cl.cmd
	switch {
	case cmd == nil:
		c.out = resp.AppendError(c.out, unknownCommand(args))
	case !c.authed && cmd.flags&flagNoAuth == 0:
		c.out = resp.AppendError(c.out, "NOAUTH Authentication required.")
	case !cmd.arityOK(len(args)):
		c.out = resp.AppendError(c.out, wrongArity(cmd.name))
	default:
		cmd.fn(c, args)
	}
}
