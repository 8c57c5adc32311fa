// Package prefill puts a server in the state a measured run reads:
// Prefill writes the whole keyspace of an empty server once, in order
// (with MSET when the write command is SET, to each key's master on a
// cluster), so that a later read run finds and verifies every key; SendN
// and FillTo send unmeasured requests through loadgen.Run (a workload's
// keys, redis-benchmark's containers). When the run reads from replicas,
// each returns once the replicas have what it wrote. It is a client of
// package loadgen, the engine, which does not import it.
package prefill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/link"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
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
// loadgen.Run with it writes the same keys and values as Prefill, one request per
// key on cfg's connections, through the measuring machinery.
func PrefillConfig(cfg loadgen.Config) loadgen.Config {
	cfg.Mode = loadgen.ModeSet
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
// commands of up to PrefillMSetKeys keys (as SET commands when the server
// answers that it has no MSET); any other command (RSET, HSET)
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
// An error reply ends the prefill with a *loadgen.ReplyError naming the command
// and its keys, unless cfg.ContinueOnError.
//
// When the run reads from replicas (Config.Replicas, ReadFromReplicas),
// Prefill then waits until they have received the keys (awaitReplicas).
func Prefill(ctx context.Context, cfg loadgen.Config) (loadgen.Result, error) {
	res, err := prefill(ctx, cfg)
	if err == nil && res.Config.ReadsReplicas() {
		var warns []error
		warns, err = awaitReplicas(ctx, res.Config)
		res.Warnings = append(res.Warnings, warns...)
	}
	return res, err
}

func prefill(ctx context.Context, cfg loadgen.Config) (loadgen.Result, error) {
	cfg, err := PrefillConfig(cfg).Normalize()
	res := loadgen.Result{Config: cfg}
	res.Histogram, res.Errors = measure.NewHistogram(), map[string]int64{}
	if err != nil {
		return res, fmt.Errorf("invalid configuration: %w", err)
	}
	if cfg.Cluster {
		return prefillCluster(ctx, cfg)
	}
	defer link.LendProcs(1)()
	dial := func(mset bool) (*filler, error) {
		l, err := link.Dial(ctx, cfg.Addr, cfg.Control(), false)
		if err != nil {
			return nil, fmt.Errorf("prefill: connect to %s: %w", cfg.Addr, err)
		}
		f := newFiller(ctx, l, &cfg, mset)
		f.lo, f.hi = PrefillRange(cfg)
		return f, nil
	}
	f, err := dial(strings.EqualFold(cfg.SetCmd, "SET"))
	if err != nil {
		return res, err
	}
	defer func() { f.close() }()

	var before int64
	checked := cfg.Segments <= 1
	if checked {
		before, checked, err = f.DBSize()
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
	if f.mset && res.Requests == 0 && noMSet(err) {
		// A server that has SET but not MSET (one that implements what
		// it is measured on alone) gets a SET per key, on a connection of
		// its own: the refused batches' replies stay with the first.
		f.close()
		if f, err = dial(false); err != nil {
			return res, err
		}
		res = loadgen.Result{Config: cfg}
		res.Histogram, res.Errors = measure.NewHistogram(), map[string]int64{}
		err = f.fill(&res)
	}
	if cfg.Progress != nil {
		cfg.Progress(loadgen.Progress{Phase: "prefill", Done: res.Requests, Total: f.hi - f.lo, Elapsed: res.Elapsed, Final: true})
	}
	if err != nil {
		return res, fmt.Errorf("prefill: %w", err)
	}
	if checked {
		after, _, err := f.DBSize()
		if err != nil {
			return res, fmt.Errorf("prefill: DBSIZE on %s: %w", cfg.Addr, err)
		}
		if after != cfg.Keyspace {
			return res, fmt.Errorf("prefill: DBSIZE on %s is %d after writing %d keys, want %d", cfg.Addr, after, res.Sets, cfg.Keyspace)
		}
	}
	return res, nil
}

// filler is Prefill's writer: the commands writing the keys, one batch
// ahead of the replies it reads, through a link.Pipe.
type filler struct {
	*link.Pipe
	l    link.Link // the connection, closed by close
	cfg  *loadgen.Config
	mset bool // one MSET per perCmd keys, else one SetCmd per key

	// A command is cmdHead (or an MSET header), then per key keyHead,
	// the key digits, mid, the value, CRLF.
	cmdHead, keyHead, mid []byte
	keys                  keyspace.Spec
	width                 int
	perCmd, perBatch      int64
	sizes                 *keyspace.Sizes // Config.ValueSizes: mid is per key

	lo, hi int64 // the keys written: [lo, hi)
}

// close closes the filler's connection.
func (f *filler) close() { f.l.Close() }

// noMSet reports whether err is a server's refusal of MSET as a command
// it does not have.
func noMSet(err error) bool {
	var re *loadgen.ReplyError
	return errors.As(err, &re) && re.Command == "MSET" && strings.Contains(strings.ToLower(re.Msg), "unknown command")
}

// newFiller returns the filler writing cfg's keys on l: as MSET commands
// when mset is set, else one cfg.SetCmd per key.
func newFiller(ctx context.Context, l link.Link, cfg *loadgen.Config, mset bool) *filler {
	f := &filler{Pipe: link.NewPipe(ctx, l, cfg.Timeout), l: l, cfg: cfg, keys: cfg.Keys()}
	f.width = f.keys.Width()
	f.mset = mset
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
			k := f.keys.Key(i)
			dst = append(dst, f.keyHead...)
			dst = keyspace.AppendDigits(dst, k, f.width)
			size := f.cfg.ValueSize
			if f.sizes != nil {
				size = f.sizes.Of(k)
				dst = append(strconv.AppendInt(append(dst, "\r\n$"...), int64(size), 10), '\r', '\n')
			} else {
				dst = append(dst, f.mid...)
			}
			if f.cfg.RandomData {
				dst = keyspace.AppendRandomValue(dst, f.cfg.Seed, k, size)
			} else {
				dst = keyspace.AppendValue(dst, f.cfg.Seed, int64(k), size)
			}
			dst = append(dst, '\r', '\n')
			i++
		}
	}
	return dst
}

// PrefillRange is the positions [lo, hi) of the keys Prefill writes
// (cfg.Keys().Key numbers them): the whole keyspace, or with
// cfg.Segments > 1 segment cfg.Segment's contiguous share, so that the
// segments together write every key once.
func PrefillRange(cfg loadgen.Config) (lo, hi int64) {
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
func (f *filler) fill(res *loadgen.Result) error {
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
			if err := f.Write(buf); err != nil {
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
				cfg.Progress(loadgen.Progress{Phase: "prefill", Done: res.Requests, Total: n - f.lo, Elapsed: now.Sub(t0)})
			}
		}
	}
	return nil
}

// replies reads the replies to the commands writing keys [start, end).
func (f *filler) replies(res *loadgen.Result, start, end int64) error {
	for i := start; i < end; i += f.perCmd {
		keys := min(f.perCmd, end-i)
		r, _, err := f.Reply()
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
	first := string(f.keys.AppendName(nil, f.cfg.KeyPrefix, f.keys.Key(i)))
	if !f.mset {
		return &loadgen.ReplyError{Command: f.cfg.SetCmd, Key: first, Msg: string(r.Data)}
	}
	last := string(f.keys.AppendName(nil, f.cfg.KeyPrefix, f.keys.Key(i+keys-1)))
	return &loadgen.ReplyError{Command: "MSET", Key: fmt.Sprintf("%s ... %s (%d keys)", first, last, keys), Msg: string(r.Data)}
}
