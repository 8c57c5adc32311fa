package kvstore

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// Compaction writes the dataset as a new base file while the server goes on
// serving, as Redis's BGREWRITEAOF does with a fork. Under the database's
// write lock it takes a point-in-time snapshot (pool arenas are frozen,
// B-trees are copy-on-write, hash maps are cloned) and starts a new
// incremental file for the writes that follow; a goroutine then writes the
// snapshot to a temporary file, fsyncs it, renames it into place and
// replaces the manifest. A crash at any point leaves a manifest that names
// a complete log.

var errRewriteRunning = errors.New("ERR Background append only file rewriting already in progress")

// dbSnapshot is the dataset at one instant, readable without the lock.
type dbSnapshot struct {
	strs, hash, tree snapshot
	hashes           map[string]map[string][]byte
}

// snapshot copies the dataset; the caller holds the write lock. Redis hash
// field values are never modified in place, so cloning each field map is
// enough.
func (db *DB) snapshot() *dbSnapshot {
	s := &dbSnapshot{
		strs:   db.strs.snapshot(),
		hash:   db.hash.snapshot(),
		tree:   db.tree.snapshot(),
		hashes: make(map[string]map[string][]byte, len(db.hashes)),
	}
	for k, h := range db.hashes {
		s.hashes[k] = maps.Clone(h.fields)
	}
	return s
}

// release gives back what the snapshot holds; the caller holds the write
// lock.
func (s *dbSnapshot) release() {
	s.strs.release()
	s.hash.release()
	s.tree.release()
}

// writeTo writes the snapshot as a compact base file (basefile.go).
func (s *dbSnapshot) writeTo(w io.Writer) error {
	b := newBaseWriter(w)
	s.strs.scan(func(k, v []byte) bool { b.add('S', k, nil, v); return b.err == nil })
	s.hash.scan(func(k, v []byte) bool { b.add('H', k, nil, v); return b.err == nil })
	s.tree.scan(func(k, v []byte) bool { b.add('R', k, nil, v); return b.err == nil })
	for k, fields := range s.hashes {
		key := []byte(k)
		for f, v := range fields {
			if b.err != nil {
				return b.err
			}
			b.add('F', key, []byte(f), v)
		}
	}
	return b.close()
}

// startRewrite begins a compaction in the background. The caller holds the
// database's write lock; the compaction takes it again, briefly, to switch
// files and snapshot the dataset.
func (s *Server) startRewrite() error {
	if err := s.aof.claimRewrite(); err != nil {
		return err
	}
	go func() {
		next, err := s.prepareRewrite()
		if err != nil {
			s.endRewrite(err)
			return
		}
		s.db.mu.Lock()
		t0 := time.Now()
		snap, err := s.switchLog(next)
		if err == nil {
			s.forks.rewriteBegan(snap, time.Since(t0))
		}
		s.db.mu.Unlock()
		if err != nil {
			s.endRewrite(err)
			return
		}
		yieldToLoops() // after the switch: a thread of low priority holding the lock would stop the loops
		err = s.finishRewrite(snap, next.seq)
		s.db.mu.Lock()
		s.forks.rewriteEnded(snap)
		snap.release()
		s.db.mu.Unlock()
		s.endRewrite(err)
	}()
	return nil
}

// saveLocked rewrites the log and waits for it; the caller holds the write
// lock.
func (s *Server) saveLocked() (err error) {
	if err := s.aof.claimRewrite(); err != nil {
		return err
	}
	defer func() { s.endRewrite(err) }()
	next, err := s.prepareRewrite()
	if err != nil {
		return err
	}
	t0 := time.Now()
	snap, err := s.switchLog(next)
	if err != nil {
		return err
	}
	s.forks.rewriteBegan(snap, time.Since(t0))
	defer func() {
		s.forks.rewriteEnded(snap)
		snap.release()
	}()
	return s.finishRewrite(snap, next.seq)
}

// claimRewrite marks a rewrite under way, or says one already is. Until
// endRewrite, nothing else changes the manifest.
func (a *aofLog) claimRewrite() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rewriting {
		return errRewriteRunning
	}
	a.rewriting, a.rewriteStart = true, time.Now()
	return nil
}

// endRewrite records how a rewrite ended.
func (s *Server) endRewrite(err error) {
	a := s.aof
	a.mu.Lock()
	a.rewriting = false
	a.lastRewrite.ok, a.lastRewrite.err = err == nil, err
	a.lastRewrite.duration = time.Since(a.rewriteStart)
	a.rewrites++
	if err != nil {
		// The automatic rewrites wait, longer after each failure: each
		// attempt leaves a new incremental file in the manifest.
		a.rewriteFailures++
		a.rewriteAt = time.Now().Add(min(time.Second<<min(a.rewriteFailures-1, 6), time.Minute))
	} else {
		a.rewriteFailures = 0
	}
	a.mu.Unlock()
	if err != nil {
		s.log.Error("log rewrite failed", "err", err)
	}
}

// rewriteNeeds is how much free space a rewrite needs at most: a base
// holds each key and value once, in fewer bytes than any record that
// made it, so it is never larger than the log it replaces. The caller
// holds mu.
func (a *aofLog) rewriteNeeds() int64 { return a.baseSize + a.incrSize }

// freeSpace is the space left for an unprivileged user on dir's file
// system.
func freeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// nextFile is a new incremental file, already named by the manifest on
// disk, that the log has not switched to yet.
type nextFile struct {
	f   logFile
	seq int
	man manifest
}

// prepareRewrite does the slow part of a switch of files without the
// database's lock: it fsyncs the current file, which then holds only the
// records of the last few milliseconds unsynced, and it creates the file
// that will follow the snapshot and names it in the manifest. Done under
// the lock, the fsync of up to a second of records and the manifest's two
// fsyncs stopped every client for tens of milliseconds. An empty file at the end of
// the manifest is a valid log (the loader looks for a cut record in the
// last file that holds any), so a crash before the switch loses nothing.
func (s *Server) prepareRewrite() (nextFile, error) {
	a := s.aof
	a.mu.Lock()
	cur, f, failing := a.man, a.f, a.err != nil
	a.mu.Unlock()
	// Until an fsync is quick, so that the switch's has little left: under
	// no, the first syncs the whole file, and the records written
	// meanwhile would make the switch's sync a long one.
	for pass := 0; !failing && pass < 3; pass++ {
		began := time.Now()
		if f.Sync() != nil || time.Since(began) < 5*time.Millisecond {
			break // an error is the switch's to report: it syncs again
		}
	}
	seq := max(cur.base, cur.lastIncr()) + 1
	name := a.path(incrName(seq))
	nf, err := openNewLogFile(a.fs, name)
	if err != nil {
		return nextFile{}, fmt.Errorf("starting a new log file: %w", err)
	}
	a.manMu.Lock()
	defer a.manMu.Unlock()
	a.mu.Lock()
	m := a.man // saveSynced may have changed its sizes since
	a.mu.Unlock()
	m.incrs = append(slices.Clone(m.incrs), seq)
	if err := writeManifest(a.fs, a.dir, m); err != nil {
		// The file stays, empty: a manifest on disk may name it (a
		// rename that succeeded before the directory's fsync failed, or
		// an earlier prepare whose switch failed).
		nf.Close()
		return nextFile{}, fmt.Errorf("writing the manifest: %w", err)
	}
	a.mu.Lock()
	a.man = m
	a.manGen++
	a.mu.Unlock()
	return nextFile{nf, seq, m}, nil
}

// switchLog makes next the file that writes go to and snapshots the
// dataset that the files before it hold. The old file is fsynced first,
// whatever the policy, so that no record of the new file can reach the
// disk before an older one: the few milliseconds of records since
// prepareRewrite's fsync. The caller holds the database's write lock, and
// finishes the rewrite with finishRewrite.
func (s *Server) switchLog(next nextFile) (*dbSnapshot, error) {
	a := s.aof
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.flushing {
		a.cond.Wait()
	}
	// The manifest on disk names next since prepareRewrite.
	recovering := a.err != nil
	if recovering {
		// The records the log could not take are dropped from the
		// buffer below: only the snapshot, once written, holds them.
		a.needRewrite = true
	}
	old := a.f
	if !recovering {
		var err error
		if a.alloc, err = a.writeOut(old, a.buf, a.fsize, a.alloc); err == nil {
			a.fsize += int64(len(a.buf))
			a.incrSize += int64(len(a.buf))
			if err = old.Sync(); err != nil {
				err = fmt.Errorf("fsync: %w", err)
			}
		}
		if err != nil {
			// next stays in the manifest, empty, and the log goes on in
			// the old file until a rewrite recovers it.
			next.f.Close()
			a.fail(err, true)
			a.cond.Broadcast()
			return nil, err
		}
	}
	// Cut off the zeros ahead of the records and, if the log failed, any
	// partial record: what the log could not take is in memory and will be
	// in the snapshot.
	if a.alloc > a.fsize || recovering {
		if err := old.Truncate(a.fsize); err != nil {
			s.log.Warn("cannot cut the old log file back to its records", "err", err)
		}
	}
	old.Close()
	if !recovering {
		// Its records are fsynced, all of them: the manifest will say so.
		a.man = a.man.withSynced(a.seq, a.fsize)
		a.manDirty = true
		a.manGen++
	}
	// Everything appended so far is in the old file (or in the snapshot).
	a.buf = a.buf[:0]
	a.written, a.synced = a.appended, a.appended
	a.f, a.seq, a.fsize, a.fsynced, a.alloc = next.f, next.seq, 0, 0, 0
	a.recovering = recovering
	a.cond.Broadcast()
	return s.db.snapshot(), nil
}

// finishRewrite writes the base file seq from snap and makes it the log's
// base, then drops the files it replaces. Only its last step takes the
// log's lock, which every write's commit needs: writing the manifest under
// it stopped the clients for tens of milliseconds.
func (s *Server) finishRewrite(snap *dbSnapshot, seq int) error {
	a := s.aof
	began := time.Now()
	final := a.path(baseName(seq))
	tmp := final + ".tmp"
	// A temporary file of an earlier rewrite that failed is the
	// rewrite's own: never named by a manifest.
	f, err := a.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("creating the base file: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			a.fs.Remove(tmp)
		}
	}()
	if err := snap.writeTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the base file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync of the base file: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := a.fs.Rename(tmp, final); err != nil {
		return err
	}
	renamed = true
	if err := a.fs.SyncDir(a.dir); err != nil {
		return err
	}
	st, err := os.Stat(final)
	if err != nil {
		return err
	}
	// No other file changes under a rewrite (claimRewrite); the sizes
	// may.
	a.manMu.Lock()
	a.mu.Lock()
	old := a.man
	m := manifest{base: seq, incrs: []int{seq}}.withSynced(seq, a.fsynced)
	a.mu.Unlock()
	if err := writeManifest(a.fs, a.dir, m); err != nil {
		a.manMu.Unlock()
		return fmt.Errorf("writing the manifest: %w", err)
	}
	a.mu.Lock()
	a.man, a.manDirty = m.withSynced(seq, max(a.fsynced, m.synced[seq])), a.fsynced > m.synced[seq]
	a.manGen++
	a.baseSize, a.incrSize = st.Size(), a.fsize
	if a.recovering && a.err != nil {
		a.heal("the log was rewritten")
	}
	a.mu.Unlock()
	a.manMu.Unlock()
	for _, name := range old.files() {
		if name != incrName(seq) {
			a.fs.Remove(a.path(name))
		}
	}
	s.log.Info("log rewritten", "base", baseName(seq), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// maybeRewrite starts a rewrite when the log needs one: to recover from a
// failed fsync, or from a failed write that retry has not got through
// (with backoff), or because it grew past the automatic threshold. It
// starts none that the free space in the directory could not hold.
func (s *Server) maybeRewrite(now time.Time) {
	a := s.aof
	a.retry()
	a.saveSynced(false)
	a.mu.Lock()
	pct, minSize := s.cfg.AutoRewritePercentage, s.cfg.AutoRewriteMinSize
	var why string
	switch {
	case a.rewriting:
	case a.err != nil && now.After(a.retryAt):
		why = "recovering from a log failure"
		a.backoff = min(2*a.backoff, 30*time.Second)
		a.retryAt = now.Add(a.backoff)
	case a.err == nil && pct > 0 && a.incrSize >= minSize && a.incrSize*100 >= a.baseSize*int64(pct) && now.After(a.rewriteAt):
		why = fmt.Sprintf("the log grew to %d MiB, %d%% of its base", a.incrSize>>20, a.incrSize*100/max(a.baseSize, 1))
		if a.baseSize == 0 {
			why = fmt.Sprintf("the log grew to %d MiB with no base yet", a.incrSize>>20)
		}
	}
	needs := a.rewriteNeeds()
	a.mu.Unlock()
	if why == "" {
		return
	}
	if free, err := freeSpace(s.cfg.Dir); err == nil && free < needs {
		if !a.noRoom {
			a.noRoom = true
			s.log.Warn("not starting a log rewrite: the disk has too little free space", "why", why, "needs_bytes", needs, "free_bytes", free)
		}
		return
	}
	a.noRoom = false
	s.log.Info("starting a log rewrite", "why", why)
	s.db.mu.Lock()
	err := s.startRewrite()
	s.db.mu.Unlock()
	if err != nil && !errors.Is(err, errRewriteRunning) {
		s.log.Error("cannot start a log rewrite", "err", err)
	}
}

func cmdBGRewriteAOF(c *conn, _ [][]byte) {
	if c.s.aof == nil {
		c.out = resp.AppendError(c.out, errNoLog)
		return
	}
	if err := c.s.startRewrite(); err != nil {
		c.out = resp.AppendError(c.out, rewriteError(err))
		return
	}
	c.out = resp.AppendSimple(c.out, "Background append only file rewriting started")
}

// cmdSave rewrites the log synchronously: the server answers nothing else
// until the base file is on disk, as Redis's SAVE.
func cmdSave(c *conn, _ [][]byte) {
	if c.s.aof == nil {
		c.out = resp.AppendError(c.out, errNoLog)
		return
	}
	if err := c.s.saveLocked(); err != nil {
		c.out = resp.AppendError(c.out, rewriteError(err))
		return
	}
	c.out = resp.AppendOK(c.out)
}

const errNoLog = "ERR no operation log: kvbench serve runs with --persist none"

func rewriteError(err error) string {
	if errors.Is(err, errRewriteRunning) {
		return err.Error()
	}
	return "ERR log rewrite failed: " + err.Error()
}
