package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Default limits, Redis's own unless noted.
const (
	// DefaultMaxBulkLen is the largest bulk argument (proto-max-bulk-len).
	DefaultMaxBulkLen = 512 << 20
	// DefaultMaxInlineLen is the longest inline request, and the longest
	// header line of a multibulk request.
	DefaultMaxInlineLen = 64 << 10
	// DefaultMaxArgs is the most arguments one request may declare. Redis
	// accepts up to INT_MAX; 1 Mi is far beyond any real command and keeps a
	// declared count from meaning anything large.
	DefaultMaxArgs = 1 << 20
	// DefaultMaxQueryBuffer is the most bytes one incomplete request may
	// occupy (client-query-buffer-limit).
	DefaultMaxQueryBuffer = 1 << 30
)

// Limits on a request of a client that has not authenticated, Redis's:
// at most UnauthMaxArgs arguments of at most UnauthMaxBulkLen bytes each,
// so that a client without the password cannot make the server reserve
// memory for a large request or hold one open (see Reader.Unauthenticated).
const (
	UnauthMaxArgs    = 10
	UnauthMaxBulkLen = 16 << 10
)

// Limits bound what one client can make a server hold. A zero field means
// the default.
type Limits struct {
	MaxBulkLen     int64
	MaxInlineLen   int
	MaxArgs        int
	MaxQueryBuffer int64
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = DefaultMaxBulkLen
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = DefaultMaxInlineLen
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	if l.MaxQueryBuffer <= 0 {
		l.MaxQueryBuffer = DefaultMaxQueryBuffer
	}
	return l
}

// ProtocolError is a malformed or over-limit request. The stream cannot be
// resynchronised after one: the server replies with Error() and closes the
// connection.
type ProtocolError struct {
	Msg string
}

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// IsProtocolError reports whether err is (or wraps) a ProtocolError.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

// Command is one request. Args and Raw alias the Reader's buffer and stay
// valid until the next call to Fill.
type Command struct {
	// Args holds the command name and its arguments.
	Args [][]byte
	// Raw is the exact multibulk encoding of the request as received, nil
	// for an inline request or one with a detached argument.
	Raw []byte
	// Detached is the index of the argument read into memory from the
	// Reader's Detach function (the last one, if several), 0 if none.
	// That argument stays valid after Fill.
	Detached int
}

const (
	minBufSize  = 16 << 10 // one read's worth, as Redis's PROTO_IOBUF_LEN
	keepBufSize = 64 << 10 // larger buffers are dropped once empty...
	keepBigBuf  = 1 << 20  // ...unless no larger and lately needed (see quiet)
	quietFills  = 8
	// A read that fills the buffer doubles it, up to streamBufSize: a
	// client streaming large requests is read in a few large reads
	// rather than many 16 KB ones, each answered with its own write.
	streamBufSize = 256 << 10
	keepArgs      = 4096 // larger argument vectors are dropped once empty
)

// Reader parses requests from a stream. The usual loop is:
//
//	for {
//		if err := rd.Fill(); err != nil { ... }
//		for {
//			cmd, ok, err := rd.Next()
//			if err != nil { ... reply err, close ... }
//			if !ok { break }
//			... execute cmd, append its reply ...
//		}
//		... write the replies ...
//	}
//
// Next returns every complete request already buffered without reading, so a
// pipelined batch is executed in one pass and answered with one write.
type Reader struct {
	src    io.Reader
	lim    Limits
	unauth bool // the UnauthMax* limits apply
	buf    []byte
	r      int // unread bytes are buf[r:w]
	w      int
	off    int64 // stream offset of buf[0]
	err    error // sticky read error, returned once the buffer is drained

	// Admission of large requests (see Admit): admitted is how much of
	// the pending request's declared size fn has admitted.
	admitMin int64
	admit    func(n int64) error
	admitted int64

	argv [][]byte // arguments of the requests parsed since the last Fill

	// A multibulk request that is only partly buffered: it starts at buf[r],
	// declares pendN arguments, the first len(argv)-pendArg0 of which are
	// parsed, and parsing resumes at buf[pendPos]. The state only survives a
	// Fill that does not move the buffer; otherwise the request is parsed
	// again from its start, which happens O(log size) times per request.
	pend     bool
	pendN    int
	pendPos  int
	pendArg0 int

	// need is the size of the partly buffered request, as far as its
	// parsed bulk lengths tell.
	need int64
	// big says the last request did not fit in keepBufSize: the next one
	// likely will not either, and the buffer is kept for it.
	big bool
	// full says the last read filled the buffer: there was more to read.
	full bool
	// quiet counts the reads since one filled the buffer or a request was
	// big: a buffer over keepBufSize is dropped once empty after
	// quietFills of them.
	quiet int

	// Detached arguments (see Detach): the pending request's parsed
	// arguments are copies or detached (det), and dst[:dstN] of the
	// argument being read (with its CRLF) has arrived.
	detachMin int
	alloc     func(args [][]byte, n int) []byte
	det       bool
	detIdx    int
	detOwned  int // the pending request's first detOwned arguments are not in buf
	dst       []byte
	dstN      int
}

// Detach makes the Reader read every bulk argument of min bytes or more
// that is not yet buffered whole straight into memory from alloc, rather
// than into its buffer: no copy afterwards, and no buffer growing to the
// request's size. alloc gets the request's arguments so far and the
// argument's length n, and returns n+2 bytes (the argument and its CRLF).
// As Redis reads its large arguments into their own objects
// (PROTO_MBULK_BIG_ARG); unlike Redis, a declared length is trusted up
// front only up to detachMax bytes (the buffer a large request keeps
// anyway): larger arguments grow the buffer as far as their bytes arrive.
func (r *Reader) Detach(min int, alloc func(args [][]byte, n int) []byte) {
	r.detachMin, r.alloc = min, alloc
}

// Admit makes the Reader ask fn before it holds n more bytes of a request
// of min bytes or more whose bytes are still arriving: as soon as its
// declared lengths say how large it is, before any of that is allocated.
// An error from fn fails the request: Next returns it, and the Reader is
// unusable after it, as after a ProtocolError.
func (r *Reader) Admit(min int, fn func(n int64) error) {
	r.admitMin, r.admit = int64(min), fn
}

// Admitted is how much of the pending request's declared size Admit's
// function has admitted: 0 once the request is complete.
func (r *Reader) Admitted() int64 { return r.admitted }

// Unauthenticated applies (on) or lifts the limits on a client that has
// not authenticated: a larger count or length fails the request with
// Redis's "unauthenticated multibulk length" or "unauthenticated bulk
// length". It applies to the requests Next parses from then on.
func (r *Reader) Unauthenticated(on bool) { r.unauth = on }

// detachMax is the largest argument Detach reads into memory of its own.
const detachMax = keepBigBuf

// NewReader returns a Reader reading from src under lim.
func NewReader(src io.Reader, lim Limits) *Reader {
	return &Reader{src: src, lim: lim.WithDefaults()}
}

// Buffered reports how many received bytes are not yet consumed by Next.
func (r *Reader) Buffered() int { return r.w - r.r }

// Peek returns the buffered bytes Next has not consumed, without copying:
// valid until the next call to Next or Fill.
func (r *Reader) Peek() []byte { return r.buf[r.r:r.w] }

// Discard consumes up to n buffered bytes, as if Next had, and returns how
// many it consumed. Use it between requests only.
func (r *Reader) Discard(n int) int {
	n = min(n, r.w-r.r)
	r.r += n
	return n
}

// Offset reports how many bytes of the stream Next has consumed: the offset
// of the next request.
func (r *Reader) Offset() int64 { return r.off + int64(r.r) }

// Fill reads more bytes from the source, blocking until at least one
// arrives. It invalidates every Command returned so far. A read error is
// returned only once the buffered bytes hold no complete request.
func (r *Reader) Fill() error {
	if r.err != nil {
		return r.err
	}
	if r.dst != nil {
		return r.fillDetached()
	}
	r.release()
	n, err := r.src.Read(r.buf[r.w:])
	r.full = n > 0 && r.w+n == len(r.buf)
	if r.full || r.big {
		r.quiet = 0
	} else {
		r.quiet++
	}
	r.w += n
	if err != nil {
		if n > 0 {
			r.err = err
			return nil
		}
		return err
	}
	return nil
}

// fillDetached reads the detached argument being received.
func (r *Reader) fillDetached() error {
	r.release()
	n, err := r.src.Read(r.dst[r.dstN:])
	r.dstN += n
	r.off += int64(n)
	if r.dstN == len(r.dst) {
		if r.dst[len(r.dst)-2] != '\r' || r.dst[len(r.dst)-1] != '\n' {
			r.err = protoErr("bulk string not terminated by CRLF")
			return r.err
		}
		r.argv = append(r.argv, r.dst[:len(r.dst)-2:len(r.dst)-2])
		r.detIdx = len(r.argv) - 1 - r.pendArg0
		r.detOwned = r.detIdx + 1
		r.dst = nil
	}
	if err != nil && n > 0 {
		r.err = err
		return nil
	}
	return err
}

// detach moves the pending request out of the buffer: its parsed
// arguments are copied, and the bulk argument of l bytes starting at
// buf[data] is read into memory from alloc from now on.
func (r *Reader) detach(arg0, data int, l int64) {
	r.own(arg0)
	r.det = true
	r.dst = r.alloc(r.argv[arg0:], int(l))[:l+2]
	r.dstN = copy(r.dst, r.buf[data:r.w])
	r.off += int64(r.dstN)
	// A read that filled the buffer with this argument is no reason to
	// grow the buffer: the argument's other bytes go to dst.
	r.full = false
	// The request's bytes are consumed: it continues after the argument.
	r.r, r.w = r.w-r.dstN, r.w-r.dstN
	r.need = 0
	if r.dstN == len(r.dst) {
		r.argv = append(r.argv, r.dst[:l:l])
		r.detIdx = len(r.argv) - 1 - arg0
		r.detOwned = r.detIdx + 1
		r.dst = nil
	}
}

// own copies the pending request's arguments that are in the buffer out of
// it.
func (r *Reader) own(arg0 int) {
	size := 0
	for _, a := range r.argv[arg0+r.detOwned:] {
		size += len(a)
	}
	buf := make([]byte, 0, size)
	for i, a := range r.argv[arg0+r.detOwned:] {
		buf = append(buf, a...)
		r.argv[arg0+r.detOwned+i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	r.detOwned = len(r.argv) - arg0
}

// release drops consumed bytes and arguments and makes room for a read.
func (r *Reader) release() {
	if r.pend {
		n := copy(r.argv, r.argv[r.pendArg0:])
		r.argv = r.argv[:n]
		r.pendArg0 = 0
	} else {
		if cap(r.argv) > keepArgs {
			r.argv = nil
		}
		r.argv = r.argv[:0]
	}
	if r.r == r.w {
		r.off += int64(r.r)
		r.r, r.w = 0, 0
		switch {
		case r.streaming():
			r.buf = make([]byte, 2*len(r.buf))
		case r.buf == nil || cap(r.buf) > keepBigBuf || cap(r.buf) > keepBufSize && r.quiet > quietFills:
			r.buf = make([]byte, minBufSize)
		}
		return
	}
	if r.r > 0 {
		r.moved()
		r.off += int64(r.r)
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if r.w == len(r.buf) || r.streaming() {
		// Doubling, as far as the pending request needs: a declared length
		// is trusted no further than the bytes already received.
		size := int64(2 * len(r.buf))
		if r.need > int64(len(r.buf)) && r.need < size {
			size = r.need
		}
		size = min(size, r.lim.MaxQueryBuffer)
		if size <= int64(len(r.buf)) {
			// Next has already failed the request for its size; a caller
			// that keeps reading gets the same answer.
			r.err = protoErr("request exceeds the query buffer limit (%d bytes)", r.lim.MaxQueryBuffer)
			return
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.w])
		r.buf = nb
		r.moved()
	}
}

// streaming reports whether the buffer should double because the last
// read filled it.
func (r *Reader) streaming() bool {
	return r.full && len(r.buf) < streamBufSize && int64(2*len(r.buf)) <= r.lim.MaxQueryBuffer
}

// moved forgets the partial parse of a pending request whose bytes are about
// to move; Next parses it again from its start.
func (r *Reader) moved() {
	if r.pend && !r.det {
		r.pend = false
		r.argv = r.argv[:r.pendArg0]
	}
}

// Next returns the next complete buffered request. ok is false when the
// buffer holds no complete request: call Fill. Empty requests (a blank
// inline line, *0) are skipped, as Redis does. After a ProtocolError the
// Reader is unusable.
func (r *Reader) Next() (cmd Command, ok bool, err error) {
	for r.r < r.w || r.det && r.dst == nil {
		if r.pend || r.buf[r.r] == TypeArray {
			cmd, ok, err = r.multibulk()
		} else {
			cmd, ok, err = r.inline()
		}
		if err != nil {
			r.err = err
			return Command{}, false, err
		}
		if !ok || len(cmd.Args) > 0 {
			return cmd, ok, nil
		}
	}
	return Command{}, false, nil
}

// line finds the CRLF-terminated line starting at buf[p], returning the
// index of its CR, or -1 if it is not complete yet.
func (r *Reader) line(p int, what string) (int, error) {
	nl := bytes.IndexByte(r.buf[p:r.w], '\n')
	if nl < 0 {
		if r.w-p > r.lim.MaxInlineLen {
			return -1, protoErr("too big %s string", what)
		}
		return -1, nil
	}
	if nl == 0 || r.buf[p+nl-1] != '\r' {
		return -1, protoErr("%s line not terminated by CRLF", what)
	}
	return p + nl - 1, nil
}

func (r *Reader) multibulk() (Command, bool, error) {
	start := r.r
	var n, p, arg0 int
	if r.pend {
		n, p, arg0 = r.pendN, r.pendPos, r.pendArg0
		if r.det {
			p = r.r
		}
	} else {
		cr, err := r.line(start+1, "mbulk count")
		if cr < 0 {
			return Command{}, false, err
		}
		v, ok := parseInt(r.buf[start+1 : cr])
		if !ok || v > int64(r.lim.MaxArgs) {
			return Command{}, false, protoErr("invalid multibulk length")
		}
		if r.unauth && v > UnauthMaxArgs {
			return Command{}, false, protoErr("unauthenticated multibulk length")
		}
		p = cr + 2
		if v <= 0 {
			r.r = p
			return Command{}, true, nil
		}
		n, arg0 = int(v), len(r.argv)
	}
	for len(r.argv)-arg0 < n {
		if p >= r.w {
			return r.suspend(n, p, arg0)
		}
		if c := r.buf[p]; c != TypeBulk {
			return Command{}, false, protoErr("expected '$', got '%s'", printable(c))
		}
		cr, err := r.line(p+1, "bulk count")
		if cr < 0 {
			if err != nil {
				return Command{}, false, err
			}
			return r.suspend(n, p, arg0)
		}
		l, ok := parseInt(r.buf[p+1 : cr])
		if !ok || l < 0 || l > r.lim.MaxBulkLen {
			return Command{}, false, protoErr("invalid bulk length")
		}
		if r.unauth && l > UnauthMaxBulkLen {
			return Command{}, false, protoErr("unauthenticated bulk length")
		}
		data := cr + 2
		end := int64(data) + l + 2
		if end-int64(start) > r.lim.MaxQueryBuffer {
			return Command{}, false, protoErr("request exceeds the query buffer limit (%d bytes)", r.lim.MaxQueryBuffer)
		}
		if size := end - int64(start); end > int64(r.w) && r.admit != nil && size >= r.admitMin && size > r.admitted {
			if err := r.admit(size - r.admitted); err != nil {
				return Command{}, false, err
			}
			r.admitted = size
		}
		if end > int64(r.w) && r.alloc != nil && l >= int64(r.detachMin) && l <= detachMax {
			r.detach(arg0, data, l)
			if r.dst != nil {
				return r.suspend(n, r.r, arg0)
			}
			p = r.r
			continue
		}
		if end > int64(r.w) {
			r.need = end - int64(start)
			return r.suspend(n, p, arg0)
		}
		e := int(end)
		if r.buf[e-2] != '\r' || r.buf[e-1] != '\n' {
			return Command{}, false, protoErr("bulk string not terminated by CRLF")
		}
		r.argv = append(r.argv, r.buf[data:e-2:e-2])
		p = e
	}
	r.pend = false
	r.need = 0
	r.admitted = 0
	r.r = p
	args := r.argv[arg0:len(r.argv):len(r.argv)]
	if r.det {
		r.det, r.detOwned = false, 0
		return Command{Args: args, Detached: r.detIdx}, true, nil
	}
	r.big = p-start > keepBufSize
	return Command{Args: args, Raw: r.buf[start:p:p]}, true, nil
}

func (r *Reader) suspend(n, p, arg0 int) (Command, bool, error) {
	if r.det {
		// A detached request is never parsed again: what is parsed is
		// consumed.
		r.own(arg0)
		r.r = p
	}
	r.pend, r.pendN, r.pendPos, r.pendArg0 = true, n, p, arg0
	return Command{}, false, nil
}

func (r *Reader) inline() (Command, bool, error) {
	b := r.buf[r.r:r.w]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > r.lim.MaxInlineLen {
			return Command{}, false, protoErr("too big inline request")
		}
		return Command{}, false, nil
	}
	if nl > r.lim.MaxInlineLen {
		return Command{}, false, protoErr("too big inline request")
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	arg0 := len(r.argv)
	var err error
	r.argv, err = SplitInline(r.argv, line)
	if err != nil {
		return Command{}, false, err
	}
	if len(r.argv)-arg0 > r.lim.MaxArgs {
		return Command{}, false, protoErr("too many arguments in inline request")
	}
	r.r += nl + 1
	return Command{Args: r.argv[arg0:len(r.argv):len(r.argv)]}, true, nil
}

// parseInt parses a RESP length or integer: an optional '-' and 1 to 18
// decimal digits, nothing else. Hand-written because strconv needs a string
// and would allocate one.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func printable(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(rune(c))
	}
	return fmt.Sprintf("\\x%02x", c)
}
