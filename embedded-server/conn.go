package kvstore

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// keepOutSize caps the reply buffer a connection keeps between batches; a
// larger one (a big MGET, a 100 MB GET) is dropped once written.
const keepOutSize = 1 << 20

// conn is one client connection. Its event loop owns it: every field but
// info is touched by that loop's goroutine only.
type conn struct {
	s       *Server
	l       *loop
	fd      int
	id      int64
	addr    string
	created time.Time
	rd      *resp.Reader
	out     []byte // replies not yet written
	batch   []call

	authed   bool
	quit     bool // QUIT or a protocol error: answer, then close
	shutdown bool // SHUTDOWN: close, then stop the server
	blocked  bool // the socket is full: wait for EPOLLOUT before reading on
	queued   bool // in the loop's list of connections to answer
	sink     uint64

	// info is what CLIENT LIST shows of the connection, read by any loop.
	info atomic.Pointer[clientInfo]
}

// clientInfo is replaced, never modified, when the client names itself.
type clientInfo struct {
	name, libName, libVer string
}

// call is one request of a batch with its resolved command.
type call struct {
	req resp.Command
	cmd *command
}

func newConn(s *Server, fd int, addr string) *conn {
	c := &conn{
		s:       s,
		fd:      fd,
		id:      s.nextID.Add(1),
		addr:    addr,
		created: time.Now(),
		rd:      resp.NewReader(fdReader(fd), s.cfg.Limits),
		authed:  s.cfg.RequirePass == "",
	}
	c.info.Store(&clientInfo{})
	return c
}

// fdReader reads a non-blocking socket; a read that would block returns
// unix.EAGAIN.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// readable reads what the socket holds, executes every complete request
// and queues the connection for its replies. It reports false when the
// connection is finished.
func (c *conn) readable() bool {
	if err := c.rd.Fill(); err != nil {
		switch {
		case errors.Is(err, unix.EAGAIN):
			return true
		case resp.IsProtocolError(err):
			c.protocolError(err)
			return true
		}
		return false // EOF, reset
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
	}
	c.l.queue(c)
	return true
}

// protocolError answers a malformed request and gives up on the connection,
// as Redis does: the stream cannot be resynchronised.
func (c *conn) protocolError(err error) {
	c.s.stats.protoErrors.Add(1)
	c.s.log.Warn("closing client after a protocol error", "client", c.addr, "id", c.id, "err", err)
	c.out = resp.AppendError(c.out, "ERR "+err.Error())
	c.quit = true
	c.l.queue(c)
}

// flush writes the pending replies. It reports false when the connection
// is finished (written out after QUIT, or broken); when the socket is full
// it keeps the rest and marks the connection blocked.
func (c *conn) flush() bool {
	for len(c.out) > 0 {
		n, err := unix.Write(c.fd, c.out)
		if n > 0 {
			c.s.stats.netOut.Add(int64(n))
			c.out = c.out[n:]
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			c.blocked = true
			return true
		case err != nil:
			return false
		}
	}
	c.blocked = false
	if cap(c.out) > keepOutSize {
		c.out = nil
	} else {
		c.out = c.out[:0:cap(c.out)]
	}
	return !c.quit && !c.shutdown
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
	if len(c.batch) >= prefetchMin && mode != lockNone {
		c.prefetch()
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

// prefetchMin is the smallest batch worth prefetching.
const prefetchMin = 4

// prefetch touches the index slots, then the records, of every key of the
// batch, so that their cache misses overlap instead of queueing one behind
// the other as the commands run (see poolHash.touch). The caller holds the
// lock.
func (c *conn) prefetch() {
	var sink uint64
	for pass := range 2 {
		for i := range c.batch {
			cl := &c.batch[i]
			if cl.cmd == nil || cl.cmd.keys == nil || len(cl.req.Args) < 2 {
				continue
			}
			if t := cl.cmd.keys(c.s.db, cl.req.Args); t != nil {
				sink += t.touch(cl.req.Args[1], pass)
			}
		}
	}
	c.sink = sink
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
