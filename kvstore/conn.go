package kvstore

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// keepOutSize caps the reply buffer a connection keeps between batches; a
// larger one (a big MGET of small values) is dropped once written.
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
	batch   []call

	replyQueue      // the replies (see reply.go)
	discard    bool // over the output buffer limit: replies are dropped

	authed    bool
	reserved  int64    // memory promised to the request arriving (admit)
	active    int64    // Server.now at the last read or write: see Server.stale
	done      int64    // ... at the last complete request, while not authenticated
	replaying bool     // executes log records at start-up; has no socket
	dirty     bool     // the command being executed changed the dataset
	logBuf    []byte   // records of this batch's writes
	logEnd    int64    // stream position after this connection's last record
	acks      [][2]int // where in out the replies to logged writes are
	quit      bool     // QUIT or a protocol error: answer, then close
	shutdown  bool     // SHUTDOWN: close, then stop the server
	blocked   bool     // the socket is full: wait for EPOLLOUT before reading on
	queued    bool     // in the loop's list of connections to answer
	sink      uint64

	src  connSource
	ring ringConn // the io_uring loop's state (uringloop.go)

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
	cur uint64 // the prefetch's place in its lookup (see table.touch)
}

func newConn(s *Server, fd int, addr string) *conn {
	c := &conn{
		s:       s,
		fd:      fd,
		id:      s.nextID.Add(1),
		addr:    addr,
		created: time.Now(),
		authed:  s.cfg.RequirePass == "",
	}
	c.src.fd = fd
	c.rd = resp.NewReader(&c.src, s.cfg.Limits)
	c.rd.Unauthenticated(!c.authed)
	c.rd.Admit(admitMin, c.admit)
	c.active = s.now.Load()
	c.done = c.active
	c.info.Store(&clientInfo{})
	c.rd.Detach(detachMin, c.bigArg)
	return c
}

// admitMin is the smallest request whose memory is asked for before it is
// read (see conn.admit).
const admitMin = 64 << 10

// detachMin is the smallest argument read into memory of its own rather
// than into the connection's read buffer (Redis's PROTO_MBULK_BIG_ARG).
const detachMin = 32 << 10

// bigArg is the memory a large argument of n bytes is read into (see
// resp.Reader.Detach). The third argument of a request that would make a
// large record (SET key value) is read into one, its header and key left
// to fill, from the kept records of the string table, so that the SET
// adopts it rather than copying the value: that copy, into memory no
// cache held, was two thirds of a 256 KB SET's time.
func (c *conn) bigArg(args [][]byte, n int) []byte {
	noteHeap(n + 2)
	if c.src.ring && n >= inPlaceMin {
		c.l.receiveSingly(c)
	}
	if len(args) != 2 || !largeRecord(args[1], n) {
		return largeMem(n + 2)
	}
	head := recordHeader + len(args[1])
	db := c.s.db
	db.mu.Lock()
	b := db.takeLarge(head + n + 2)
	db.mu.Unlock()
	return b[head:]
}

// largeRecord reports whether key and a value of n bytes make a large
// record.
func largeRecord(key []byte, n int) bool { return recordHeader+len(key)+n > maxClassSize }

// connSource is what a connection's requests are read from: its
// non-blocking socket, where a read that would block returns unix.EAGAIN,
// or, under the io_uring loop, the bytes a receive delivered (data), after
// which it returns unix.EAGAIN.
type connSource struct {
	fd   int
	ring bool
	data []byte
	// Under the io_uring loop, want is the rest of what the reader asked
	// for when data ran out, and placed the bytes received straight into
	// it meanwhile (see loop.recvInPlace).
	want   []byte
	placed int
}

func (f *connSource) Read(p []byte) (int, error) {
	if f.ring {
		if f.placed > 0 {
			n := f.placed
			f.placed = 0
			if len(p) >= n && &p[0] == &f.want[0] {
				f.want = nil
				return n, nil // already there
			}
			f.data = f.want[:n] // the reader moved its buffer: copied below
		}
		if len(f.data) == 0 {
			f.want = p
			return 0, unix.EAGAIN
		}
		n := copy(p, f.data)
		f.data = f.data[n:]
		if len(f.data) == 0 {
			f.want = p[n:]
		}
		return n, nil
	}
	for {
		n, err := unix.Read(f.fd, p)
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
	c.active = c.s.now.Load()
	for more := true; more; {
		more = false
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
			if !c.authed {
				// One request at a time until the client authenticates:
				// the next is parsed under the limits that AUTH lifts.
				more = true
				break
			}
		}
		if len(c.batch) > 0 {
			c.exec()
			c.done = c.active
		}
		if perr != nil {
			c.protocolError(perr)
			break
		}
		c.syncReserved()
		if c.quit || c.shutdown {
			break
		}
	}
	c.l.queue(c)
	return true
}

// protocolError answers a malformed request and gives up on the connection,
// as Redis does: the stream cannot be resynchronised.
func (c *conn) protocolError(err error) {
	if errors.Is(err, errOOMRequest) {
		// Its bytes are not read: the stream cannot go on either.
		c.s.log.Warn("closing client: its request would pass the memory limit", "client", c.addr, "id", c.id)
		c.out = resp.AppendError(c.out, errOOM)
		c.quit = true
		c.l.queue(c)
		return
	}
	c.s.stats.protoErrors.Add(1)
	c.s.log.Warn("closing client after a protocol error", "client", c.addr, "id", c.id, "err", err)
	c.out = resp.AppendError(c.out, "ERR "+err.Error())
	c.quit = true
	c.l.queue(c)
}

// flush writes the pending replies. It reports false when the connection
// is finished (written out after QUIT, or broken); when the socket is full,
// or the connection has had its share of this round, it keeps the rest and
// marks the connection blocked.
func (c *conn) flush() bool {
	c.active = c.s.now.Load() // see Server.stale
	done, err := c.writeOut()
	if err != nil {
		return false
	}
	c.blocked = !done
	return !done || !c.quit && !c.shutdown
}

// exec runs a batch under one acquisition of the database lock: a read lock
// when every command of the batch only reads.
func (c *conn) exec() {
	mode := lockNone
	var name []byte // the last name looked up: a pipeline repeats it
	var cmd *command
	for i := range c.batch {
		if n := c.batch[i].req.Args[0]; i == 0 || !bytes.Equal(n, name) {
			name, cmd = n, lookup(n)
		}
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
	t0 := time.Since(c.s.start) // the monotonic clock alone
	if len(c.batch) >= prefetchMin && mode != lockNone {
		c.prefetch()
	}
	aof := c.s.aof
	limit := int(c.s.cfg.OutputBufferLimit)
	n := 0
	for i := range c.batch {
		n++
		cl := &c.batch[i]
		c.dirty = false
		start := c.position()
		c.call(cl)
		if c.dirty && aof != nil {
			c.logBuf = appendRecord(c.logBuf, cl.req)
			c.acks = append(c.acks, [2]int{start, c.position()})
		}
		if c.discard || c.pending() > limit {
			c.overLimit()
		}
		if c.quit || c.shutdown {
			break
		}
	}
	if len(c.logBuf) > 0 {
		c.logEnd = aof.append(c.logBuf)
		c.logBuf = c.logBuf[:0]
	}
	took := time.Since(c.s.start) - t0
	switch mode {
	case lockWrite:
		db.mu.Unlock()
	case lockRead:
		db.mu.RUnlock()
	}
	c.s.stats.commands.Add(int64(n))
	c.s.cmdStats.record(c.batch, n, took)
}

// prefetchMin is the smallest batch worth prefetching.
const prefetchMin = 4

// prefetch touches what the lookup of every key of the batch will read,
// one step of every lookup a pass (index slots, then records), so that
// their cache misses overlap instead of queueing one behind the other as
// the commands run (see table.touch; the ordered engine's tree prefetches
// its own buffered inserts). The caller holds the lock.
func (c *conn) prefetch() {
	var sink uint64
	for i := range c.batch {
		c.batch[i].cur = 0
	}
	for pass, more := 0, true; more; pass++ {
		more = false
		for i := range c.batch {
			cl := &c.batch[i]
			if cl.cmd == nil || cl.cmd.keys == nil || len(cl.req.Args) < 2 || pass > 0 && cl.cur == doneTouching {
				continue
			}
			if t := cl.cmd.keys(c.s.db, cl.req.Args); t != nil {
				s, m := t.touch(cl.req.Args[1], pass, &cl.cur, cl.cmd.flags&flagWrite != 0)
				sink += s
				if m {
					more = true
				} else {
					cl.cur = doneTouching
				}
			}
		}
	}
	c.sink = sink
}

// doneTouching marks a lookup whose prefetch is complete.
const doneTouching = ^uint64(0)

func (c *conn) call(cl *call) {
	args, cmd := cl.req.Args, cl.cmd
	switch {
	case cmd == nil:
		c.out = resp.AppendError(c.out, unknownCommand(args))
	case !c.authed && cmd.flags&flagNoAuth == 0:
		c.out = resp.AppendError(c.out, "NOAUTH Authentication required.")
	case !cmd.arityOK(len(args)):
		c.out = resp.AppendError(c.out, wrongArity(cmd.name))
	case cmd.flags&flagWrite != 0 && c.s.aof != nil && c.s.aof.failing.Load():
		c.out = resp.AppendError(c.out, errMisconf+c.s.aof.errText())
	case cmd.flags&flagDenyOOM != 0 && c.s.oom():
		c.out = resp.AppendError(c.out, errOOM)
	case c.s.cluster != nil && c.route(cmd, args):
	case cl.req.Detached == 2 && cmd.flags&flagWrite != 0 && largeRecord(args[1], len(args[2])):
		// The value was read into a record of its own (see bigArg).
		head := recordHeader + len(args[1])
		n := head + len(args[2])
		rec := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(args[2])), -head)), n+2)[:n]
		c.s.db.offer(rec)
		cmd.fn(c, args)
		c.s.db.offer(nil)
	default:
		cmd.fn(c, args)
	}
}

// changed records that the command being executed changed the dataset:
// its request goes to the log.
func (c *conn) changed() { c.dirty = true }

// failWrites replaces the replies to this round's logged writes with the
// log's error: they were applied, but the log could not take them, so they
// must not be acknowledged.
func (c *conn) failWrites(err error) {
	msg := errMisconf + err.Error()
	c.flatten()
	out := make([]byte, 0, len(c.out))
	prev := 0
	for _, a := range c.acks {
		out = append(out, c.out[prev:a[0]]...)
		out = resp.AppendError(out, msg)
		prev = a[1]
	}
	c.out = append(out, c.out[prev:]...)
}
