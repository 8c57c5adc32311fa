package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/resp"
	"golang.org/x/sys/unix"
)

// ErrNotEmpty is wrapped by Prefill's error when the server holds keys
// before the prefill (DBSIZE is not 0).
var ErrNotEmpty = errors.New("server not empty")

// Prefill's batching.
const (
	// PrefillMSetKeys is the most keys of one MSET command: from 16 keys
	// on the per-command cost is amortized and larger batches gave no more
	// (BenchmarkPrefill in package runner); 64 keeps the keys an error
	// reply names few.
	PrefillMSetKeys = 64
	// prefillBatchBytes bounds the requests of one batch, so that large
	// values do not make huge buffers; a batch holds at least one key.
	prefillBatchBytes = 4 << 20
)

// PrefillConfig is cfg as Prefill uses it, defaults filled in: every key
// written once, in order (ModeSet, keyspace.Sequential, Requests = Keyspace),
// with no warmup, no time bound, no rate limit and no verification.
// Run with it writes the same keys and values as Prefill, one request per
// key on cfg's connections, through the measuring machinery.
func PrefillConfig(cfg Config) Config {
	cfg.Mode = ModeSet
	cfg.KeyPattern = keyspace.Sequential
	cfg.Zipf = 0
	cfg.Requests = cfg.Keyspace
	cfg.Duration, cfg.Warmup, cfg.WarmupRequests, cfg.Rate = 0, 0, 0, 0
	cfg.VerifyGet = false
	cfg.MultiKeyGet = 0 // the read's shape, not the writes'
	cfg.StartAt = time.Time{}
	return cfg
}

// Prefill writes every key of cfg's keyspace once, in order, with cfg's
// value size and seed, so that a read run with the same seed finds and
// verifies every key. The server must be empty: Prefill checks that DBSIZE
// is 0 before it writes (else the error wraps ErrNotEmpty) and equals the
// keyspace after (DBSIZE counts every keyspace of the kvstore); a server
// that does not know DBSIZE is not checked, and a warning says so.
//
// When the write command is SET (in any case) the keys go as MSET
// commands of up to PrefillMSetKeys keys; any other command (RSET, HSET)
// is sent once per key, and its EXIST replies (an insert-only command
// finding the key there) are counted as conflicts. One connection sends
// cfg.Pipeline keys per round trip, the next batch encoded while the
// server works on the last; cfg.Connections and cfg.Threads are not used.
//
// With cfg.Segments > 1, Prefill writes segment cfg.Segment's contiguous
// share of the keyspace, PrefillRange, and checks no DBSIZE: the other
// agents write theirs at the same time, so no one of them sees the server
// empty before or full after.
//
// The Result counts keys (Requests, Sent and Sets) and measures no latency
// (its Histogram is empty). Progress reports the phase "prefill", in keys.
// An error reply ends the prefill with a *ReplyError naming the command
// and its keys, unless cfg.ContinueOnError.
//
// When the run reads from replicas (Config.Replicas, ReadFromReplicas),
// Prefill then waits until they have received the keys (awaitReplicas).
func Prefill(ctx context.Context, cfg Config) (Result, error) {
	res, err := prefill(ctx, cfg)
	if err == nil && res.Config.readsReplicas() {
		var warns []error
		warns, err = awaitReplicas(ctx, res.Config)
		res.Warnings = append(res.Warnings, warns...)
	}
	return res, err
}

func prefill(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := PrefillConfig(cfg).Normalize()
	res := Result{Config: cfg}
	res.Histogram, res.Errors = newHistogram(), map[string]int64{}
	if err != nil {
		return res, fmt.Errorf("invalid configuration: %w", err)
	}
	if cfg.Cluster {
		return prefillCluster(ctx, cfg)
	}
	l, err := dial(ctx, cfg.Addr, &cfg)
	if err != nil {
		return res, fmt.Errorf("prefill: connect to %s: %w", cfg.Addr, err)
	}
	defer l.close()
	defer lendProcs(1)()
	f := newFiller(ctx, l, &cfg)
	f.lo, f.hi = PrefillRange(cfg)

	var before int64
	checked := cfg.Segments <= 1
	if checked {
		before, checked, err = f.dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: DBSIZE on %s: %w", cfg.Addr, err)
		}
	}
	switch {
	case cfg.Segments > 1:
	case !checked:
		res.Warnings = append(res.Warnings, fmt.Errorf("prefill: %s does not answer DBSIZE: the keyspace was not checked to be empty before and full after", cfg.Addr))
	case before != 0:
		return res, fmt.Errorf("prefill: %w: DBSIZE on %s is %d before the prefill, want 0", ErrNotEmpty, cfg.Addr, before)
	}

	err = f.fill(&res)
	if cfg.Progress != nil {
		cfg.Progress(Progress{Phase: "prefill", Done: res.Requests, Total: f.hi - f.lo, Elapsed: res.Elapsed, Final: true})
	}
	if err != nil {
		return res, fmt.Errorf("prefill: %w", err)
	}
	if checked {
		after, _, err := f.dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: DBSIZE on %s: %w", cfg.Addr, err)
		}
		if after != cfg.Keyspace {
			return res, fmt.Errorf("prefill: DBSIZE on %s is %d after writing %d keys, want %d", cfg.Addr, after, res.Sets, cfg.Keyspace)
		}
	}
	return res, nil
}

// filler is Prefill's connection: a non-blocking socket written one batch
// of requests ahead of the replies it reads. Its system calls are raw, as
// the workers' are (see sys.go), and Prefill lends a P for the blocking
// one, ppoll(2): through the scheduler the prefill of the kvstore's RSET
// took 0.22-0.26 CPU seconds per million keys, raw 0.13-0.16.
type filler struct {
	ctx  context.Context
	cfg  *Config
	l    link
	mset bool // one MSET per perCmd keys, else one SetCmd per key

	// A command is cmdHead (or an MSET header), then per key keyHead,
	// the key digits, mid, the value, CRLF.
	cmdHead, keyHead, mid []byte
	width                 int
	perCmd, perBatch      int64
	sizes                 *keyspace.Sizes // Config.ValueSizes: mid is per key

	lo, hi int64 // the keys written: [lo, hi)

	rbuf []byte // received, unparsed: rbuf[r:]
	r    int
	last time.Time // the last bytes read or written
}

func newFiller(ctx context.Context, l link, cfg *Config) *filler {
	f := &filler{ctx: ctx, cfg: cfg, l: l, width: keyspace.KeyWidth(cfg.Keyspace), rbuf: make([]byte, 0, readBufSize)}
	f.mset = strings.EqualFold(cfg.SetCmd, "SET")
	f.perCmd = 1
	if f.mset {
		f.perCmd = PrefillMSetKeys
	} else {
		f.cmdHead = resp.AppendBulkString(resp.AppendArray(nil, 3), cfg.SetCmd)
	}
	f.keyHead = append(append(strconv.AppendInt([]byte{'$'}, int64(len(cfg.KeyPrefix)+f.width), 10), "\r\n"...), cfg.KeyPrefix...)
	f.mid = append(strconv.AppendInt([]byte("\r\n$"), int64(cfg.ValueSize), 10), "\r\n"...)
	f.sizes = keyspace.NewSizes(cfg.ValueSizes, cfg.Seed)
	perKey := int64(len(f.keyHead) + f.width + len(f.mid) + cfg.ValueSize + 2 + len(f.cmdHead))
	f.perBatch = max(1, min(int64(cfg.Pipeline), prefillBatchBytes/perKey))
	f.perCmd = min(f.perCmd, f.perBatch)
	return f
}

// build appends the commands writing keys [start, end).
func (f *filler) build(dst []byte, start, end int64) []byte {
	for i := start; i < end; {
		m := min(f.perCmd, end-i)
		if f.mset {
			dst = resp.AppendArray(dst, int(1+2*m))
			dst = append(dst, "$4\r\nMSET\r\n"...)
		} else {
			dst = append(dst, f.cmdHead...)
		}
		for ; m > 0; m-- {
			dst = append(dst, f.keyHead...)
			dst = keyspace.AppendDigits(dst, uint64(i), f.width)
			size := f.cfg.ValueSize
			if f.sizes != nil {
				size = f.sizes.Of(uint64(i))
				dst = append(strconv.AppendInt(append(dst, "\r\n$"...), int64(size), 10), '\r', '\n')
			} else {
				dst = append(dst, f.mid...)
			}
			if f.cfg.RandomData {
				dst = keyspace.AppendRandomValue(dst, f.cfg.Seed, uint64(i), size)
			} else {
				dst = keyspace.AppendValue(dst, f.cfg.Seed, i, size)
			}
			dst = append(dst, '\r', '\n')
			i++
		}
	}
	return dst
}

// PrefillRange is the keys [lo, hi) Prefill writes: the whole keyspace,
// or with cfg.Segments > 1 segment cfg.Segment's contiguous share, so
// that the segments together write every key once.
func PrefillRange(cfg Config) (lo, hi int64) {
	n := int64(max(cfg.Segments, 1))
	i := int64(cfg.Segment)
	if n == 1 || i < 0 || i >= n {
		return 0, cfg.Keyspace
	}
	share := func(i int64) int64 { // i*Keyspace/n without overflow
		q, r := cfg.Keyspace/n, cfg.Keyspace%n
		return i*q + i*r/n
	}
	return share(i), share(i + 1)
}

// fill writes keys [f.lo, f.hi), counting into res.
func (f *filler) fill(res *Result) error {
	cfg := f.cfg
	n := f.hi
	t0 := time.Now()
	lastReport := t0
	defer func() {
		res.Elapsed = time.Since(t0)
		res.Finish()
	}()
	// One batch is written ahead: while the client reads the replies to a
	// batch, the server has the next one queued (about 1.1 times the rate
	// of waiting for the replies first; BenchmarkPrefill).
	var buf []byte
	for start, sent := f.lo, f.lo; start < n; {
		for sent < min(start+2*f.perBatch, n) {
			next := min(sent+f.perBatch, n)
			buf = f.build(buf[:0], sent, next)
			if err := f.write(buf); err != nil {
				return err
			}
			res.Sent += next - sent
			sent = next
		}
		end := min(start+f.perBatch, n)
		if err := f.replies(res, start, end); err != nil {
			return err
		}
		start = end
		if cfg.Progress != nil && start < n {
			if now := time.Now(); now.Sub(lastReport) >= cfg.ProgressInterval {
				lastReport = now
				cfg.Progress(Progress{Phase: "prefill", Done: res.Requests, Total: n - f.lo, Elapsed: now.Sub(t0)})
			}
		}
	}
	return nil
}

// write writes b whole, reading what the server sends meanwhile.
func (f *filler) write(b []byte) error {
	for len(b) > 0 {
		n, err := f.l.write(rawSyscalls, b)
		switch {
		case n > 0:
			b = b[n:]
			f.last = time.Now()
		case errors.Is(err, unix.EAGAIN):
			// The server may be waiting for its replies to be read
			// before it reads more.
			if err := f.wait(unix.POLLOUT | unix.POLLIN); err != nil {
				return err
			}
			if _, err := f.read(); err != nil {
				return err
			}
		case errors.Is(err, unix.EINTR):
		case err != nil:
			return fmt.Errorf("write: %w", err)
		}
	}
	return nil
}

// read reads what has arrived into rbuf, without waiting, and reports
// how many bytes that was.
func (f *filler) read() (int, error) {
	if f.r > 0 && f.r == len(f.rbuf) {
		f.rbuf, f.r = f.rbuf[:0], 0
	}
	if cap(f.rbuf)-len(f.rbuf) < 4<<10 {
		if f.r > 0 {
			f.rbuf = f.rbuf[:copy(f.rbuf, f.rbuf[f.r:])]
			f.r = 0
		} else {
			f.rbuf = slices.Grow(f.rbuf, cap(f.rbuf))
		}
	}
	for {
		n, err := f.l.read(rawSyscalls, f.rbuf[len(f.rbuf):cap(f.rbuf)])
		switch {
		case n > 0:
			f.rbuf = f.rbuf[:len(f.rbuf)+n]
			f.last = time.Now()
			return n, nil
		case n == 0 && err == nil:
			return 0, errServerClosed
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case !errors.Is(err, unix.EINTR):
			return 0, fmt.Errorf("read: %w", err)
		}
	}
}

// wait waits until the socket is ready for events, ctx is done, or the
// server has sent nothing and taken nothing for the configured Timeout.
func (f *filler) wait(events int16) error {
	deadline := f.last.Add(f.cfg.Timeout)
	for {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("no reply for %v", f.cfg.Timeout)
		}
		if f.l.pending() {
			events |= unix.POLLOUT // TLS ciphertext to write (see link)
		}
		n, err := pollFd(rawSyscalls, f.l.fd, events, min(left, maxWait))
		switch {
		case errors.Is(err, unix.EINTR):
			// Most likely a preemption signal: yield, since a raw
			// system call is no preemption point.
			runtime.Gosched()
		case err != nil:
			return fmt.Errorf("poll: %w", err)
		case n > 0:
			return nil
		}
	}
}

// reply returns the next complete reply, waiting for it.
func (f *filler) reply() (resp.Reply, []byte, error) {
	for {
		b := f.rbuf[f.r:]
		if len(b) >= 5 && string(b[:5]) == "+OK\r\n" {
			f.r += 5
			return resp.Reply{Type: resp.TypeSimple, Data: b[1:3]}, b[:5], nil
		}
		r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if err != nil {
			return r, nil, err
		}
		if n > 0 && (r.Elements() > 0 || r.Type == resp.TypeAttribute) {
			n, err = resp.SkipReply(b, resp.DefaultMaxBulkLen)
			if err != nil {
				return r, nil, err
			}
		}
		if n > 0 && r.Type == resp.TypePush {
			f.r += n // out of band, not a reply
			continue
		}
		if n > 0 {
			f.r += n
			return r, b[:n], nil
		}
		for {
			m, err := f.read()
			if err != nil {
				return r, nil, err
			}
			if m > 0 {
				break
			}
			if err := f.wait(unix.POLLIN); err != nil {
				return r, nil, err
			}
		}
	}
}

// replies reads the replies to the commands writing keys [start, end).
func (f *filler) replies(res *Result, start, end int64) error {
	for i := start; i < end; i += f.perCmd {
		keys := min(f.perCmd, end-i)
		r, _, err := f.reply()
		if err != nil {
			return fmt.Errorf("%w (%d keys written and acknowledged)", err, res.Requests)
		}
		if r.IsError() {
			word := r.Data
			if j := bytes.IndexByte(word, ' '); j >= 0 {
				word = word[:j]
			}
			if !f.mset && string(word) == "EXIST" {
				res.Conflicts++
			} else {
				res.Errors[string(word)]++
				if !f.cfg.ContinueOnError {
					return f.replyError(r, i, keys)
				}
			}
		}
		res.Requests += keys
		res.Sets += keys
	}
	return nil
}

// replyError describes an error reply to the command writing keys
// [i, i+keys).
func (f *filler) replyError(r resp.Reply, i, keys int64) error {
	first := string(keyspace.AppendKey(nil, f.cfg.KeyPrefix, f.cfg.Keyspace, i))
	if !f.mset {
		return &ReplyError{Command: f.cfg.SetCmd, Key: first, Msg: string(r.Data)}
	}
	last := string(keyspace.AppendKey(nil, f.cfg.KeyPrefix, f.cfg.Keyspace, i+keys-1))
	return &ReplyError{Command: "MSET", Key: fmt.Sprintf("%s ... %s (%d keys)", first, last, keys), Msg: string(r.Data)}
}

// dbsize sends DBSIZE and returns the key count; ok is false when the
// server does not know the command (Redis's "ERR unknown command").
func (f *filler) dbsize() (n int64, ok bool, err error) {
	f.last = time.Now()
	if err := f.write([]byte("*1\r\n$6\r\nDBSIZE\r\n")); err != nil {
		return 0, false, err
	}
	r, raw, err := f.reply()
	switch {
	case err != nil:
		return 0, false, err
	case r.IsError() && bytes.HasPrefix(r.Data, []byte("ERR unknown command")):
		return 0, false, nil
	case r.IsError():
		return 0, false, fmt.Errorf("server replied %q", r.Data)
	case r.Type != resp.TypeInt:
		return 0, false, fmt.Errorf("unexpected reply %s", quote(raw))
	}
	return r.Int, true, nil
}
