package kvstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// A background snapshot (BGSAVE) writes the dataset to DumpName in the
// data directory while the server goes on serving, as Redis's BGSAVE
// writes dump.rdb from a forked child: under the write lock (the
// command's) the dataset is snapshotted as a rewrite snapshots it (pool
// arenas frozen, B-trees copy-on-write, maps cloned), and a goroutine
// writes the snapshot to a temporary file in the base file format
// (basefile.go), fsyncs it and renames it into place. It is a copy of the
// dataset, whatever the persistence policy, and the server does not read
// it at start: the log is what a restart replays.
//
// What it costs is reported as Redis reports its fork's: how long the
// clients were stopped to take it (latest_fork_usec: the kvstore forks
// nothing, its snapshot holds the write lock), and the memory it kept
// alive (rdb_last_cow_size: records replaced or deleted while it was
// written, which the pool allocator keeps until it is done, and the
// snapshot's bitmap); a log rewrite's the same (aof_last_cow_size).

// DumpName is the file BGSAVE writes in the data directory.
const DumpName = "dump.kvb"

var errSaveRunning = errors.New("ERR Background save already in progress")

// saver is the state of the background snapshots.
type saver struct {
	mu      sync.Mutex
	running bool
	began   time.Time
	snap    *dbSnapshot // the snapshot being written; read under the DB lock
	saves   int64       // snapshots written, failed ones included
	last    struct {
		ok       bool
		at       time.Time // when the last one ended
		okAt     time.Time // when the last one that succeeded ended
		duration time.Duration
		cow      int64 // its copy-on-write bytes; -1: not known
	}
	wg sync.WaitGroup // the goroutine writing a snapshot
}

// forks is what the snapshots of both kinds (BGSAVE, log rewrite) cost
// the clients: INFO's latest_fork_usec and the copy-on-write of the last
// rewrite.
type forks struct {
	mu       sync.Mutex
	latest   time.Duration // the last snapshot's pause under the write lock
	aofCOW   int64         // the last rewrite's copy-on-write bytes; -1: not known
	rewrites *dbSnapshot   // the rewrite's snapshot being written
}

// cow is the snapshot's copy-on-write bytes so far (dbSnapshot parts
// that know theirs); false when none does. The caller holds the DB lock.
func (s *dbSnapshot) cow() (int64, bool) {
	var sum int64
	known := false
	for _, p := range []snapshot{s.strs, s.hash, s.tree} {
		if n, ok := p.cow(); ok {
			sum, known = sum+n, true
		}
	}
	return sum, known
}

// startSave takes a snapshot and writes it in the background; the caller
// holds the DB's write lock.
func (s *Server) startSave() error {
	v := &s.saver
	v.mu.Lock()
	if v.running {
		v.mu.Unlock()
		return errSaveRunning
	}
	v.running, v.began = true, time.Now()
	v.mu.Unlock()
	t0 := time.Now()
	snap := s.db.snapshot()
	s.forks.setPause(time.Since(t0))
	v.mu.Lock()
	v.snap = snap
	v.mu.Unlock()
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		yieldToLoops()
		if s.cfg.beforeDump != nil {
			s.cfg.beforeDump()
		}
		err := s.writeDump(snap)
		s.db.mu.Lock()
		cow, known := snap.cow()
		snap.release()
		s.db.mu.Unlock()
		if !known {
			cow = -1
		}
		v.mu.Lock()
		v.running, v.snap = false, nil
		v.saves++
		v.last.ok, v.last.at, v.last.duration, v.last.cow = err == nil, time.Now(), time.Since(v.began), cow
		if err == nil {
			v.last.okAt = v.last.at
		}
		v.mu.Unlock()
		if err != nil {
			s.log.Error("background save failed", "err", err)
			return
		}
		s.log.Info("background save done", "file", DumpName, "took", time.Since(v.began).Round(time.Millisecond))
	}()
	return nil
}

// writeDump writes snap to DumpName: a temporary file, fsync, rename,
// fsync of the directory, so that the file is always a whole snapshot.
func (s *Server) writeDump(snap *dbSnapshot) error {
	dir, fsys := s.cfg.Dir, s.cfg.fs
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	final := filepath.Join(dir, DumpName)
	tmp := final + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			fsys.Remove(tmp)
		}
	}()
	if err := snap.writeTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync of %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return err
	}
	renamed = true
	return fsys.SyncDir(dir)
}

// backgroundNice is the nice value of the thread that writes a snapshot:
// on a machine whose processors the event loops and the clients keep
// busy, the kernel runs them first, as it would run a server before a
// forked child of lower priority.
const backgroundNice = 10

// yieldToLoops gives the calling goroutine a thread of its own at
// backgroundNice, for as long as it runs: the thread ends with it (a
// goroutine that exits locked to its thread takes the thread with it), so
// no other goroutine inherits the priority.
func yieldToLoops() {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), backgroundNice) // advisory: a refusal leaves it at the loops' priority
}

// waitSave waits for a background snapshot being written.
func (s *Server) waitSave() { s.saver.wg.Wait() }

// rewriteBegan records a rewrite's snapshot and its pause under the
// write lock (switchLog's, the switch of files included); the caller
// holds the lock.
func (f *forks) rewriteBegan(snap *dbSnapshot, pause time.Duration) {
	f.mu.Lock()
	f.latest, f.rewrites = pause, snap
	f.mu.Unlock()
}

// rewriteEnded records what the rewrite's snapshot cost before it is
// released; the caller holds the DB lock.
func (f *forks) rewriteEnded(snap *dbSnapshot) {
	cow, known := snap.cow()
	if !known {
		cow = -1
	}
	f.mu.Lock()
	f.aofCOW, f.rewrites = cow, nil
	f.mu.Unlock()
}

// setPause records a snapshot's pause under the write lock.
func (f *forks) setPause(d time.Duration) {
	f.mu.Lock()
	f.latest = d
	f.mu.Unlock()
}

// currentCOW is what the snapshots being written cost so far (INFO's
// current_cow_size); false when none is out or none knows. The caller
// holds the DB lock.
func (s *Server) currentCOW() (int64, bool) {
	var sum int64
	known := false
	s.saver.mu.Lock()
	snaps := []*dbSnapshot{s.saver.snap}
	s.saver.mu.Unlock()
	s.forks.mu.Lock()
	snaps = append(snaps, s.forks.rewrites)
	s.forks.mu.Unlock()
	for _, snap := range snaps {
		if snap == nil {
			continue
		}
		if n, ok := snap.cow(); ok {
			sum, known = sum+n, true
		}
	}
	return sum, known
}

// cmdBGSave is BGSAVE [SCHEDULE]: a background snapshot. SCHEDULE is
// accepted for Redis's clients: a snapshot does not wait for a rewrite
// under way, both run side by side.
func cmdBGSave(c *conn, args [][]byte) {
	if len(args) == 2 && !equalFold(args[1], "schedule") {
		c.out = resp.AppendError(c.out, "ERR syntax error")
		return
	}
	if err := c.s.startSave(); err != nil {
		c.out = resp.AppendError(c.out, err.Error())
		return
	}
	c.out = resp.AppendSimple(c.out, "Background saving started")
}

// cmdLastSave is LASTSAVE: the Unix time of the last snapshot written
// whole, or of the server's start when there has been none.
func cmdLastSave(c *conn, _ [][]byte) {
	v := &c.s.saver
	v.mu.Lock()
	at := v.last.okAt
	v.mu.Unlock()
	if at.IsZero() {
		at = c.s.start
	}
	c.out = resp.AppendInt(c.out, at.Unix())
}
