package kvstore

import (
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// Persistence policies (--persist), named after Redis's appendfsync.
const (
	// PersistNone keeps no log.
	PersistNone = "none"
	// PersistNo writes each write's record to the kernel before its reply;
	// the kernel decides when it reaches the disk.
	PersistNo = "no"
	// PersistEverysec also fsyncs the log in the background every second.
	PersistEverysec = "everysec"
	// PersistAlways fsyncs the log before the replies of every batch, one
	// fsync shared by every connection served in the same round.
	PersistAlways = "always"
)

// Defaults for automatic compaction, Redis's auto-aof-rewrite-*.
const (
	DefaultAutoRewritePercentage = 100
	DefaultAutoRewriteMinSize    = 64 << 20
)

// The log is Redis's multi-part AOF: a base file holding the dataset as of
// the last rewrite (in a compact binary format, basefile.go, as Redis's is
// an RDB), the incremental files written since, and a manifest naming
// them, replaced atomically. Every record of an incremental file is a
// command in RESP followed by a checksum line, "#" and the CRC-32C of the
// command's bytes in eight hex digits: Redis's own loader skips lines
// starting with "#", and a flipped byte anywhere in a record is caught.
const (
	manifestName = "appendonly.aof.manifest"
	filePrefix   = "appendonly.aof."
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the log record of cmd to dst.
func appendRecord(dst []byte, cmd resp.Command) []byte {
	start := len(dst)
	if cmd.Raw != nil {
		dst = append(dst, cmd.Raw...)
	} else {
		dst = resp.AppendCommand(dst, cmd.Args...)
	}
	return appendChecksum(dst, crc32.Checksum(dst[start:], castagnoli))
}

func appendChecksum(dst []byte, crc uint32) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '#')
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hex[crc>>shift&0xf])
	}
	return append(dst, '\r', '\n')
}

// logFile is what the log writes through; tests put faults under it.
type logFile interface {
	Write(p []byte) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// preallocChunk is how far ahead of its records an incremental file is
// filled with zeros under the always policy. fdatasync of a write inside
// the file's size flushes the data alone; a write that grows the file also
// commits the filesystem's journal for the new size, which took 60% longer
// on the machine of BENCHMARKS.md. The loader takes a run of zero bytes at
// the end of a file for unused space (a record never ends in a zero byte).
const preallocChunk = 4 << 20

func openLogFile(name string, flag int) (logFile, error) {
	f, err := os.OpenFile(name, flag, 0o644)
	if err != nil {
		return nil, err
	}
	return dataSyncFile{f}, nil
}

// dataSyncFile syncs with fdatasync, as Redis does: an appended record
// needs its data and the file's size on disk, not its modification time.
type dataSyncFile struct{ *os.File }

func (f dataSyncFile) Sync() error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// reserver is a log file that can allocate space ahead of its records:
// the operating system's files (fallocate); a test's files need not.
type reserver interface {
	Reserve(off, n int64) error
}

// Reserve allocates n bytes from off, read as zeros, growing the file.
func (f dataSyncFile) Reserve(off, n int64) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	if cerr := raw.Control(func(fd uintptr) {
		for {
			if err = unix.Fallocate(int(fd), 0, off, n); err != unix.EINTR {
				return
			}
		}
	}); cerr != nil {
		return cerr
	}
	return err
}

// errMisconf prefixes the reply to a write the log could not take.
const errMisconf = "MISCONF Errors writing to the AOF file: "

// aofLog is the operation log. Records are appended under the database's
// write lock, so their order is the order the writes were applied; they
// reach the file in commit, called before the replies are written: one
// caller (the leader) writes everything appended so far with one write(2),
// and fsyncs it under the always policy, while the others wait for it.
type aofLog struct {
	dir    string
	policy string
	fs     logFS
	log    *slog.Logger

	mu       sync.Mutex
	cond     sync.Cond
	buf      []byte // appended, not yet written
	spare    []byte
	appended int64 // positions in the logical stream of records
	written  int64
	synced   int64
	flushing bool
	// err is the log's failure: writes are refused while it is set. After
	// a failed write, buf still holds the records that were not written,
	// and retry writes them as soon as the disk takes them; after a
	// failed fsync (whose pages the kernel may have dropped) only a
	// rewrite (needRewrite) makes the log whole again.
	err         error
	needRewrite bool
	failing     atomic.Bool // err != nil, for the write path's check
	errMsg      atomic.Pointer[string]
	retryAt     time.Time // next recovery by rewrite
	backoff     time.Duration

	closed  bool
	f       logFile // the newest incremental file
	seq     int     // its sequence number
	fsize   int64   // its bytes of good records
	fsynced int64   // how many of them are known fsynced
	alloc   int64   // its size, zeros past fsize included

	// The manifest: man names every file the log uses, as the one on
	// disk does; manDirty says its synced sizes are ahead of the disk's,
	// for saveSynced to write. manGen counts man's changes. manMu is held
	// by whoever writes the manifest, so that the writes happen in the
	// order of man's changes.
	man      manifest
	manDirty bool
	manGen   int64
	manMu    sync.Mutex
	savedAt  time.Time // saveSynced's last write

	// Compaction.
	baseSize     int64 // base file size at the last rewrite
	incrSize     int64 // bytes in incremental files since
	rewriting    bool
	recovering   bool // the rewrite under way is a recovery
	rewriteStart time.Time
	lastRewrite  struct {
		ok       bool
		duration time.Duration
		err      error
	}
	rewrites int64 // rewrites ended, failed ones included
	// rewriteFailures counts the automatic rewrites failed in a row;
	// the next waits rewriteAt (with backoff).
	rewriteFailures int
	rewriteAt       time.Time
	noRoom          bool // the cron has said a rewrite would not fit
	reserveFailed   bool // reserveAhead has said it cannot

	// Background fsync (everysec).
	fsyncBegan    atomic.Int64 // UnixNano of the fsync under way, 0 if none
	delayedFsyncs atomic.Int64
	// fsyncs counts the log's fsyncs, fsyncNanos their time (sync).
	fsyncs, fsyncNanos atomic.Int64

	// Start-up.
	loadTime      time.Duration
	loadedKeys    int
	loadedRecords int64
	loadedBytes   int64 // bytes of the records replayed
	truncated     int64
}

func newAOFLog(dir, policy string, fsys logFS, log *slog.Logger) *aofLog {
	a := &aofLog{dir: dir, policy: policy, fs: fsys, log: log}
	a.cond.L = &a.mu
	a.lastRewrite.ok = true
	return a
}

func (a *aofLog) path(name string) string { return filepath.Join(a.dir, name) }

// append adds records to the log and returns the stream position after
// them. The caller holds the database's write lock.
func (a *aofLog) append(records []byte) int64 {
	a.mu.Lock()
	a.buf = append(a.buf, records...)
	a.appended += int64(len(records))
	end := a.appended
	a.mu.Unlock()
	return end
}

// commit returns once the stream up to end has reached the kernel, and the
// disk too under the always policy, or with the error that stops it.
func (a *aofLog) commit(end int64) error {
	always := a.policy == PersistAlways
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		if a.written >= end && (!always || a.synced >= end) {
			return nil
		}
		if a.err != nil {
			return a.err
		}
		if a.flushing {
			a.cond.Wait()
			continue
		}
		a.flush()
	}
}

// flush writes everything appended so far with one write, and fsyncs it
// under the always policy: the leader's work of a commit, and a retry's.
// The caller holds mu, which flush releases while it writes; only the
// leader (flushing) touches the file, so fsize and alloc are stable until
// it is done. A failed write keeps the records in buf for retry; a write
// that succeeds while the log is failing heals it.
func (a *aofLog) flush() {
	always := a.policy == PersistAlways
	a.flushing = true
	data, target, f, at, alloc := a.buf, a.appended, a.f, a.fsize, a.alloc
	a.buf = a.spare[:0]
	a.mu.Unlock()
	alloc, err := a.writeOut(f, data, at, alloc)
	syncErr := false
	if err == nil && always {
		if err = a.sync(f); err != nil {
			err, syncErr = fmt.Errorf("fsync: %w", err), true
		}
	}
	a.mu.Lock()
	a.flushing = false
	a.alloc = alloc
	switch {
	case err != nil && !syncErr:
		// The records stay first in line, before those appended since.
		a.buf, a.spare = append(data, a.buf...), nil
		a.fail(err, false)
	case err != nil:
		a.spare = data[:0]
		a.fail(err, true)
	default:
		a.spare = data[:0]
		a.fsize += int64(len(data))
		a.incrSize += int64(len(data))
		a.written = target
		if always {
			a.synced = target
			a.fsynced = a.fsize
		}
		if a.err != nil && !a.needRewrite {
			a.heal("the records the disk refused are written")
		}
	}
	a.cond.Broadcast()
}

// retry writes the records that a failed write left in the buffer: a log
// that failed for want of space accepts writes again as soon as they fit,
// without a rewrite of the whole dataset. The server's cron calls it.
func (a *aofLog) retry() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil || a.needRewrite || a.flushing || a.closed || a.f == nil {
		return
	}
	a.flush()
}

// heal ends the log's failure; the caller holds mu.
func (a *aofLog) heal(why string) {
	a.log.Info("the operation log is healthy again: accepting writes", "why", why)
	a.err, a.needRewrite = nil, false
	a.failing.Store(false)
}

// writeOut writes data into f at offset at, where the good records end,
// first filling the file with zeros ahead of it under the always policy
// (see preallocChunk); it returns the file's new size. After a short write
// it cuts the file back to at, so that no partial record is left in the
// middle of the log.
func (a *aofLog) writeOut(f logFile, data []byte, at, alloc int64) (int64, error) {
	if len(data) == 0 {
		return alloc, nil
	}
	end := at + int64(len(data))
	if a.policy == PersistAlways && end > alloc {
		grown, err := extendWithZeros(f, alloc, end+preallocChunk)
		if err != nil {
			// Not fatal: the records go past the zeros, and the sync
			// costs what it costs without preallocation.
			a.log.Warn("cannot preallocate the log", "err", err)
		}
		alloc = max(alloc, grown)
	}
	n, err := f.WriteAt(data, at)
	if err == nil && n < len(data) {
		err = errors.New("short write")
	}
	if err != nil {
		if n > 0 {
			if terr := f.Truncate(at); terr != nil {
				a.log.Error("cannot cut a partial record off the log: the next start will drop it", "err", terr)
			}
			alloc = at
		}
		return alloc, fmt.Errorf("write: %w", err)
	}
	return max(alloc, end), nil
}

var zeros [64 << 10]byte

// extendWithZeros writes zeros into f from from to to and returns how far
// it got.
func extendWithZeros(f logFile, from, to int64) (int64, error) {
	for from < to {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), to-from)], from)
		from += int64(n)
		if err != nil {
			return from, err
		}
	}
	return from, nil
}

// fail puts the log in its failing state: writes are refused with MISCONF
// until retry has written what the disk refused or, after a failed fsync
// (needRewrite), a rewrite has written the whole dataset afresh. The
// caller holds mu.
func (a *aofLog) fail(err error, needRewrite bool) {
	if a.err == nil {
		how := "retrying the write"
		if needRewrite {
			how = "rewriting it"
		}
		a.log.Error("the operation log failed: refusing writes until it is whole again", "err", err, "recovery", how)
		a.backoff = time.Second
		a.retryAt = time.Now().Add(a.backoff)
	}
	a.err = err
	a.needRewrite = a.needRewrite || needRewrite
	a.recovering = false
	msg := err.Error()
	a.errMsg.Store(&msg)
	a.failing.Store(true)
}

// errText is the failing log's error, for MISCONF replies.
func (a *aofLog) errText() string {
	if p := a.errMsg.Load(); p != nil {
		return *p
	}
	return "unknown error"
}

// appendedNow is the stream's position: every byte appended so far.
func (a *aofLog) appendedNow() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appended
}

// ackedPos is how far the stream may be acknowledged: written, or synced
// under the always policy.
func (a *aofLog) ackedPos() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.policy == PersistAlways {
		return a.synced
	}
	return a.written
}

// syncNow fsyncs what has been written: the everysec policy's background
// fsync, and shutdown's last one.
func (a *aofLog) syncNow() error {
	a.mu.Lock()
	target, f, size, synced, closed := a.written, a.f, a.fsize, a.synced, a.closed
	a.mu.Unlock()
	if closed || target <= synced {
		return nil
	}
	a.fsyncBegan.Store(time.Now().UnixNano())
	err := a.sync(f)
	a.fsyncBegan.Store(0)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f != f || a.closed {
		return nil // switched meanwhile (the switch synced the old file), or closed
	}
	if err != nil {
		a.fail(fmt.Errorf("fsync: %w", err), true)
		return err
	}
	a.synced = max(a.synced, target)
	a.fsynced = max(a.fsynced, size)
	return nil
}

// saveSyncedEvery is how often saveSynced writes the manifest at most.
const saveSyncedEvery = time.Second

// saveSynced writes into the manifest how many bytes of the current file
// are known fsynced (see manifest), when that has grown, at most once every
// saveSyncedEvery unless now is set. A failure is logged, not fatal: the
// manifest keeps a smaller figure, which is still true.
func (a *aofLog) saveSynced(now bool) {
	a.manMu.Lock()
	defer a.manMu.Unlock()
	a.mu.Lock()
	m, gen, seq, n, dirty := a.man, a.manGen, a.seq, a.fsynced, a.manDirty
	due := now || time.Since(a.savedAt) >= saveSyncedEvery
	a.mu.Unlock()
	if !due || n <= m.synced[seq] && !dirty || len(m.incrs) == 0 {
		return
	}
	if n > m.synced[seq] {
		m = m.withSynced(seq, n)
	}
	if err := writeManifest(a.fs, a.dir, m); err != nil {
		a.log.Warn("cannot record in the manifest how much of the log is fsynced", "err", err)
		return
	}
	a.mu.Lock()
	a.savedAt = time.Now()
	if a.manGen == gen {
		a.man, a.manDirty = m, false
	}
	a.mu.Unlock()
}

// sync fsyncs f, counted with its time (the kvstore_aof_fsync metrics).
func (a *aofLog) sync(f logFile) error {
	t0 := time.Now()
	err := f.Sync()
	a.fsyncs.Add(1)
	a.fsyncNanos.Add(int64(time.Since(t0)))
	return err
}

// Space reserved ahead of the records of the no and everysec policies:
// twice what the last second appended, within these bounds.
const (
	minLogReserve = preallocChunk
	maxLogReserve = 256 << 20
)

// reserveAhead allocates space in the current file ahead of its records
// (see reserver), enough for twice rate, the bytes appended in the last
// second, when less than half of that is left. An append into space the
// filesystem has not allocated takes its block allocator's lock (ext4's
// i_data_sem), which writeback holds while the everysec fsync runs: the
// event loop's write stalled 20-30 ms once a second on the machine of
// BENCHMARKS.md. Into reserved space it takes no such lock. A failure
// (no room, a filesystem without fallocate) is not one: appends go on
// taking space as they write.
func (a *aofLog) reserveAhead(rate int64) {
	ahead := min(max(2*rate, minLogReserve), maxLogReserve)
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.flushing {
		a.cond.Wait()
	}
	r, ok := a.f.(reserver)
	if !ok || a.closed || a.err != nil || a.alloc >= a.fsize+ahead/2 {
		return
	}
	// As the leader, it alone touches the file until it is done: a
	// rewrite's switch of files or close waits, and so do appends.
	a.flushing = true
	from, to := a.alloc, a.fsize+ahead
	a.mu.Unlock()
	err := r.Reserve(from, to-from)
	a.mu.Lock()
	a.flushing = false
	if err == nil {
		a.alloc = to
	} else if !a.reserveFailed {
		a.reserveFailed = true
		a.log.Info("cannot reserve space ahead of the log: appends allocate as they write", "err", err)
	}
	a.cond.Broadcast()
}

// background reserves space ahead of the records once a second, and
// under the everysec policy fsyncs them, until stop is closed. An fsync
// still running after two seconds is reported, as Redis does.
func (a *aofLog) background(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := a.appendedNow()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := a.appendedNow()
		a.reserveAhead(now - last)
		last = now
		if a.policy != PersistEverysec {
			continue
		}
		if began := a.fsyncBegan.Load(); began != 0 {
			if d := time.Since(time.Unix(0, began)); d > 2*time.Second {
				a.delayedFsyncs.Add(1)
				a.log.Warn("asynchronous AOF fsync is taking too long (disk is busy?)", "running_for", d.Round(time.Millisecond))
			}
			continue
		}
		go a.syncNow()
	}
}

// close writes and fsyncs what is left, closes the file and records its
// size in the manifest.
func (a *aofLog) close() error {
	a.mu.Lock()
	for a.flushing {
		a.cond.Wait()
	}
	if a.err != nil && !a.needRewrite {
		a.flush() // a last try for what the disk refused
	}
	var err error
	if a.err == nil {
		if a.alloc, err = a.writeOut(a.f, a.buf, a.fsize, a.alloc); err == nil {
			a.fsize += int64(len(a.buf))
			a.buf = a.buf[:0]
			a.written = a.appended
			if err = a.sync(a.f); err == nil {
				a.fsynced = a.fsize
			}
		}
	}
	// The zeros ahead of the records are only for the running server.
	if err == nil && a.alloc > a.fsize {
		err = a.f.Truncate(a.fsize)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	a.closed = true
	a.mu.Unlock()
	a.saveSynced(true)
	return err
}
