package kvstore

import (
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// A connection's replies are queued as pieces written with writev: the
// reply buffer (out) for small replies, and two kinds of piece for large
// ones, so that no reply is ever copied to make room for another (growing
// one contiguous buffer copied a 16 KB GET pipeline's replies about twice
// over, and its garbage kept the collector busy: BENCHMARKS.md, "Large
// values"):
//
//   - values of zeroCopyMin bytes and more are not copied at all: the
//     piece is the value itself, written from where the table keeps it
//     after the lock is released. Such values live on the Go heap and are
//     never rewritten in place (see arena.rewritable), so the reference
//     pins them: a SET, DEL, FLUSHALL or rewrite meanwhile makes a new
//     value or drops the table's reference, never changes these bytes, and
//     the arena does not reuse a lent value's memory (see valuesLent).
//   - smaller values are copied under the lock, into blocks of blockSize
//     bytes taken from the loop's free list; a full block is queued and
//     the next one taken.
const (
	zeroCopyMin = maxClassSize
	blockSize   = 2 * maxClassSize // holds the largest copied reply
	// smallOut is how far a connection's own reply buffer grows before
	// large replies go to blocks.
	smallOut = 16 << 10
	// keptBlocks is the most free blocks a loop keeps.
	keptBlocks = 128
	// writeQuantum is the most bytes written to one connection per round
	// of its loop; the rest waits for the next one, so that a client
	// reading a large batch at full speed does not hold up the others.
	writeQuantum = 1 << 20
	// maxIovecs is Linux's IOV_MAX.
	maxIovecs = 1024
)

// DefaultOutputBufferLimit is the most bytes of replies the server holds
// for one client, written or not yet, before it closes the connection: the
// largest bulk string a client may send (proto-max-bulk-len) fits.
const DefaultOutputBufferLimit = resp.DefaultMaxBulkLen

// appendValue appends v, a value read from a table, as a bulk reply:
// without copying it when it is large (see above).
func (c *conn) appendValue(v []byte) {
	if len(v) < zeroCopyMin || c.l == nil {
		c.appendBulk(v)
		return
	}
	if c.discard || c.checkLimit(len(v)) {
		return
	}
	c.out = append(c.out, resp.TypeBulk)
	c.out = strconv.AppendInt(c.out, int64(len(v)), 10)
	c.out = append(c.out, "\r\n"...)
	c.seal()
	valuesLent.Add(1)
	c.segs = append(c.segs, v)
	c.qbytes += len(v)
	c.out = append(c.out, "\r\n"...)
}

// appendBulk appends a copy of v as a bulk reply, into a block when it is
// large.
func (c *conn) appendBulk(v []byte) {
	if c.discard {
		return
	}
	if n := len(v) + 16; len(c.out)+n > cap(c.out) && len(c.out)+n > smallOut && c.l != nil {
		if c.checkLimit(n) {
			return
		}
		c.nextBlock()
	}
	c.out = resp.AppendBulk(c.out, v)
}

// checkLimit reports whether n more bytes of replies would pass the output
// buffer limit; if so the replies are dropped (see overLimit), and so are
// those the command has yet to append: a single command cannot make the
// server hold more than the limit either.
func (c *conn) checkLimit(n int) bool {
	if c.pending()+n <= int(c.s.cfg.OutputBufferLimit) {
		return false
	}
	c.overLimit()
	return true
}

// seal queues the replies appended to out since the last seal.
func (q *replyQueue) seal() {
	if len(q.out) > q.mark {
		q.segs = append(q.segs, q.out[q.mark:len(q.out):len(q.out)])
		q.qbytes += len(q.out) - q.mark
		q.mark = len(q.out)
	}
}

// nextBlock queues out and continues in a block from the loop's free list.
func (c *conn) nextBlock() {
	c.seal()
	if c.own == nil {
		c.own = c.out // the connection's own buffer, back once all is written
	} else if cap(c.out) == blockSize {
		c.blocks = append(c.blocks, c.out)
	}
	c.out, c.mark = c.l.block(), 0
}

// replyQueue is a connection's queue of replies: segs[head][off:], the
// rest of segs, then out[mark:] (out[:mark] is in segs, or written).
// qbytes counts the bytes put in segs, written those written, since the
// queue was last empty. The io_uring loop moves a queue whole to the send
// it hands the kernel (ringConn.flight) and goes on filling an empty one.
type replyQueue struct {
	out     []byte
	mark    int
	segs    [][]byte
	head    int
	off     int
	qbytes  int
	written int
	own     []byte   // the connection's reply buffer while out is a block
	blocks  [][]byte // full blocks queued
}

// left is the bytes of q not yet written.
func (q *replyQueue) left() int { return q.qbytes + len(q.out) - q.mark - q.written }

// held is the memory q's buffers take: its reply buffer and blocks (the
// values it writes from where the table keeps them take none).
func (q *replyQueue) held() int {
	n := cap(q.out) + len(q.blocks)*blockSize
	if q.own != nil {
		n += cap(q.own)
	}
	return n
}

// pending is the bytes of replies held for the connection and not yet
// written: its queue's, and under the io_uring loop those of the send
// under way.
func (c *conn) pending() int { return c.left() + c.ring.flight.left() }

// position is where the next reply starts, counted from the first byte
// queued since the queue was last empty.
func (c *conn) position() int { return c.qbytes + len(c.out) - c.mark }

// flatten copies every reply not yet written into out alone. The caller
// must not have written any of them.
func (c *conn) flatten() {
	if len(c.segs) == 0 {
		return // out alone already, from mark (0: nothing written)
	}
	flat := make([]byte, 0, c.left())
	for _, s := range c.segs {
		flat = append(flat, s...)
	}
	flat = append(flat, c.out[c.mark:]...)
	c.reset()
	c.out = flat
	c.mark = 0
}

// overLimit drops the replies of a client the server holds too many for,
// and closes it once this round is over, as Redis does (it is not told:
// the stream has no room for a reply).
func (c *conn) overLimit() {
	if c.discard {
		return
	}
	c.s.stats.outputLimitClosed.Add(1)
	c.s.log.Warn("closing client over the output buffer limit", "client", c.addr, "id", c.id, "pending", c.pending(), "limit", c.s.cfg.OutputBufferLimit)
	c.reset()
	c.acks = c.acks[:0]
	c.quit = true
	c.discard = true
}

// writeOut writes queued replies, at most writeQuantum bytes of them. It
// reports whether all are written, and the write's error other than
// EAGAIN.
func (c *conn) writeOut() (done bool, err error) {
	if c.discard {
		c.reset()
		return true, nil
	}
	if len(c.segs) == 0 {
		return c.writePlain()
	}
	c.seal()
	budget := writeQuantum
	for c.head < len(c.segs) {
		iov := c.iovecs(c.l.iov[:0], budget)
		c.l.iov = iov
		w, err := writev(c.fd, iov)
		clear(iov) // no reference to a value outlives the write
		if w > 0 {
			c.s.stats.netOut.Add(int64(w))
			c.advance(w)
			budget -= w
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, nil
		case err != nil:
			return false, err
		}
		if budget <= 0 && c.head < len(c.segs) {
			return false, nil
		}
	}
	c.reset()
	if cap(c.out) > keepOutSize {
		c.out = nil
	}
	return true, nil
}

// writePlain is writeOut when every reply is in out: one write(2), no
// iovecs (the usual case: small replies). The bytes written move mark.
func (c *conn) writePlain() (done bool, err error) {
	for budget := writeQuantum; c.mark < len(c.out); {
		if budget <= 0 {
			return false, nil
		}
		n, err := unix.Write(c.fd, c.out[c.mark:min(len(c.out), c.mark+budget)])
		if n > 0 {
			c.s.stats.netOut.Add(int64(n))
			c.mark += n
			budget -= n
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, nil
		case err != nil:
			return false, err
		}
	}
	c.reset()
	if cap(c.out) > keepOutSize {
		c.out = nil
	}
	return true, nil
}

// iovecs appends to iov the queued pieces not yet written, at most
// maxIovecs of them and about budget bytes.
func (q *replyQueue) iovecs(iov []unix.Iovec, budget int) []unix.Iovec {
	n := 0
	for i := q.head; i < len(q.segs) && len(iov) < maxIovecs && n < budget; i++ {
		s := q.segs[i]
		if i == q.head {
			s = s[q.off:]
		}
		if len(s) == 0 {
			continue
		}
		v := unix.Iovec{Base: unsafe.SliceData(s)}
		v.SetLen(len(s))
		iov = append(iov, v)
		n += len(s)
	}
	return iov
}

// advance marks n more bytes of the pieces in segs written.
func (q *replyQueue) advance(n int) {
	q.written += n
	for n > 0 {
		left := len(q.segs[q.head]) - q.off
		if n < left {
			q.off += n
			return
		}
		n -= left
		q.segs[q.head] = nil
		q.head++
		q.off = 0
	}
	for q.head < len(q.segs) && len(q.segs[q.head]) == 0 {
		q.head++
	}
}

// reset empties the queue and out, giving the blocks back to the loop.
func (c *conn) reset() { c.replyQueue.reset(c.l) }

// reset empties q, giving its blocks back to l.
func (q *replyQueue) reset(l *loop) {
	clear(q.segs)
	q.segs = q.segs[:0]
	q.head, q.off, q.qbytes, q.written = 0, 0, 0, 0
	for _, b := range q.blocks {
		l.putBlock(b)
	}
	clear(q.blocks)
	q.blocks = q.blocks[:0]
	if q.own != nil {
		if cap(q.out) == blockSize {
			l.putBlock(q.out)
		}
		q.out, q.own = q.own, nil
	}
	q.out, q.mark = q.out[:0], 0
}

// block returns an empty reply block.
func (l *loop) block() []byte {
	if n := len(l.blocks); n > 0 {
		b := l.blocks[n-1]
		l.blocks[n-1] = nil
		l.blocks = l.blocks[:n-1]
		return b[:0]
	}
	return make([]byte, 0, blockSize)
}

func (l *loop) putBlock(b []byte) {
	if cap(b) == blockSize && len(l.blocks) < keptBlocks {
		l.blocks = append(l.blocks, b[:0])
	}
}

func writev(fd int, iov []unix.Iovec) (int, error) {
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(iov))), uintptr(len(iov)))
	if errno != 0 {
		return 0, syscall.Errno(errno)
	}
	return int(n), nil
}
