package kvstore

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// The crash states of the log, explored as ALICE does (Pillai et al.,
// "All File Systems Are Not Created Equal", OSDI 2014): a real server
// writes its log through recFS, which records every operation on the
// directory (creations, writes, truncations, fsyncs, renames, removals,
// fsyncs of the directory) while a client sends a burst of acknowledged
// writes with a rewrite in the middle. Then, for a crash after each
// operation, every state the file system may leave is built in a
// directory of its own and the real loader (New, and Repair where it
// refuses) is run on it. A state keeps what was fsynced before the crash
// and some of what was not: each prefix of the operations not yet
// fsynced; each write among them torn (its first bytes only, cut within a
// page); and the writes of files reordered, each one dropped alone or
// kept alone. Directory operations reach the disk in order, as the
// journaling file systems' do. The writes of zeros that fill a file ahead
// of its records (preallocChunk) are taken whole and in order: any subset
// of them leaves zeros at the end of the file, which the loader reads as
// it reads none, as the states that keep all of them or none show.
//
// In every state the keys loaded are a prefix of the writes sent, every
// write acknowledged under always is there, and under everysec every
// write acknowledged before the last fsync of the log is.

// fsOpKind is what a recorded operation does.
type fsOpKind int

const (
	opCreate fsOpKind = iota
	opWrite
	opTruncate
	opSync
	opRename
	opRemove
	opSyncDir
)

// fsOp is one recorded operation. Files are inodes (ino): a rename moves
// the name, not the data.
type fsOp struct {
	kind     fsOpKind
	name, to string // base names
	ino      int
	off      int64 // write
	data     []byte
	size     int64 // truncate
}

func (o fsOp) dirOp() bool { return o.kind == opCreate || o.kind == opRename || o.kind == opRemove }

// recFS is the operating system's files, every change recorded.
type recFS struct {
	osFS
	mu    sync.Mutex
	ops   []fsOp
	names map[string]int // base name → inode
	next  int
}

func newRecFS() *recFS { return &recFS{names: make(map[string]int)} }

// mark is how many operations have been recorded: a write acknowledged
// now was acknowledged after all of them.
func (r *recFS) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

func (r *recFS) OpenFile(name string, flag int) (logFile, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := openLogFile(name, flag)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(name)
	ino, ok := r.names[base]
	switch {
	case !ok:
		r.next++
		ino = r.next
		r.names[base] = ino
		r.ops = append(r.ops, fsOp{kind: opCreate, name: base, ino: ino})
	case flag&os.O_TRUNC != 0:
		r.ops = append(r.ops, fsOp{kind: opTruncate, ino: ino})
	}
	return &recFile{logFile: f, r: r, ino: ino}, nil
}

func (r *recFS) Rename(from, to string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.Rename(from, to); err != nil {
		return err
	}
	f, t := filepath.Base(from), filepath.Base(to)
	r.ops = append(r.ops, fsOp{kind: opRename, name: f, to: t, ino: r.names[f]})
	r.names[t] = r.names[f]
	delete(r.names, f)
	return nil
}

func (r *recFS) Remove(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.Remove(name); err != nil {
		return err
	}
	base := filepath.Base(name)
	r.ops = append(r.ops, fsOp{kind: opRemove, name: base})
	delete(r.names, base)
	return nil
}

func (r *recFS) SyncDir(dir string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := syncDir(dir); err != nil {
		return err
	}
	r.ops = append(r.ops, fsOp{kind: opSyncDir})
	return nil
}

type recFile struct {
	logFile
	r   *recFS
	ino int
	off int64 // for Write
}

func (f *recFile) WriteAt(p []byte, off int64) (int, error) {
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	n, err := f.logFile.WriteAt(p, off)
	if n > 0 {
		f.r.ops = append(f.r.ops, fsOp{kind: opWrite, ino: f.ino, off: off, data: slices.Clone(p[:n])})
	}
	return n, err
}

func (f *recFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *recFile) Truncate(size int64) error {
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	if err := f.logFile.Truncate(size); err != nil {
		return err
	}
	f.r.ops = append(f.r.ops, fsOp{kind: opTruncate, ino: f.ino, size: size})
	return nil
}

func (f *recFile) Sync() error {
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	if err := f.logFile.Sync(); err != nil {
		return err
	}
	f.r.ops = append(f.r.ops, fsOp{kind: opSync, ino: f.ino})
	return nil
}

// crashState is what a crash leaves: file contents by name.
type crashState map[string][]byte

// build applies the operations ops[i] for which keep(i) is true, in
// order; the write ops[torn], if kept, only its first tornLen bytes.
func build(ops []fsOp, keep func(i int) bool, torn int, tornLen int) crashState {
	names := make(map[string]int)
	data := make(map[int][]byte)
	for i, o := range ops {
		if !keep(i) {
			continue
		}
		switch o.kind {
		case opCreate:
			names[o.name] = o.ino
			if _, ok := data[o.ino]; !ok {
				data[o.ino] = nil
			}
		case opWrite:
			b := o.data
			if i == torn {
				b = b[:tornLen]
			}
			d := data[o.ino]
			if end := int(o.off) + len(b); end > len(d) {
				d = append(d, make([]byte, end-len(d))...)
			}
			copy(d[o.off:], b)
			data[o.ino] = d
		case opTruncate:
			d := data[o.ino]
			if int(o.size) <= len(d) {
				d = d[:o.size]
			} else {
				d = append(d, make([]byte, int(o.size)-len(d))...)
			}
			data[o.ino] = d
		case opRename:
			if ino, ok := names[o.name]; ok {
				names[o.to] = ino
				delete(names, o.name)
			}
		case opRemove:
			delete(names, o.name)
		}
	}
	st := make(crashState, len(names))
	for n, ino := range names {
		st[n] = data[ino]
	}
	return st
}

func (st crashState) hash() uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range st {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		fmt.Fprintf(&h, "%s\x00%d\x00", n, len(st[n]))
		h.Write(st[n])
	}
	return h.Sum64()
}

var hashSeed = maphash.MakeSeed()

// crashStates calls fn with every state a crash after ops[:k] may leave
// (see the comment at the top), some of them more than once.
func crashStates(ops []fsOp, k int, fn func(crashState)) {
	// What is durable: a file's writes before its last fsync, the
	// directory's changes before its last fsync.
	lastSync := make(map[int]int)
	lastSyncDir := -1
	for i, o := range ops[:k] {
		switch o.kind {
		case opSync:
			lastSync[o.ino] = i
		case opSyncDir:
			lastSyncDir = i
		}
	}
	durable := func(i int) bool {
		o := ops[i]
		switch {
		case o.dirOp():
			return i < lastSyncDir
		case o.kind == opWrite || o.kind == opTruncate:
			s, ok := lastSync[o.ino]
			return ok && i < s
		}
		return true // fsyncs: nothing to apply
	}
	var volatile []int
	for i := range ops[:k] {
		if !durable(i) {
			volatile = append(volatile, i)
		}
	}
	inPrefix := func(p int) func(int) bool {
		return func(i int) bool {
			if i >= k {
				return false
			}
			if durable(i) {
				return true
			}
			j, _ := slices.BinarySearch(volatile, i)
			return j < p
		}
	}
	// Each prefix of the volatile operations (of a run of zeros, the
	// whole run or none).
	for p := 0; p <= len(volatile); p++ {
		if p > 0 && p < len(volatile) && zeroWrite(ops[volatile[p-1]]) && zeroWrite(ops[volatile[p]]) {
			continue
		}
		fn(build(ops, inPrefix(p), -1, 0))
	}
	for j, v := range volatile {
		o := ops[v]
		if o.kind != opWrite && o.kind != opTruncate || zeroWrite(o) {
			continue
		}
		// Torn: the first bytes of the write, cut within a page, and
		// nothing after it.
		if o.kind == opWrite {
			for _, n := range tornLengths(o) {
				keep := inPrefix(j)
				fn(build(ops, func(i int) bool { return i == v || keep(i) }, v, n))
			}
		}
		// Reordered: this one dropped alone, or kept alone (with the
		// directory's changes before it).
		fn(build(ops, func(i int) bool { return i < k && i != v }, -1, 0))
		fn(build(ops, func(i int) bool {
			return i < k && (durable(i) || i == v || ops[i].dirOp() && i < v)
		}, -1, 0))
	}
}

// zeroWrite reports whether o writes nothing but zeros.
func zeroWrite(o fsOp) bool {
	return o.kind == opWrite && !slices.ContainsFunc(o.data, func(b byte) bool { return b != 0 })
}

// tornLengths are where a write is cut: within its first page, halfway,
// and at each page boundary inside it (up to a few).
func tornLengths(o fsOp) []int {
	const page = 4096
	n := len(o.data)
	cuts := []int{1, n / 2}
	first := page - int(o.off%page)
	for c, i := first, 0; c < n && i < 4; c, i = c+page, i+1 {
		cuts = append(cuts, c, c-page/2)
	}
	var out []int
	for _, c := range cuts {
		if c > 0 && c < n && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// crashResult is what the loader made of one state.
type crashResult struct {
	keys     int  // the writes loaded: a prefix of them
	repaired bool // the start was refused, and repair made it start
}

// loadState materializes st in dir and runs the real loader on it: New,
// then, if it refuses, Repair and New again. It returns how many of the
// n writes (SET k<i> <i>) were loaded, or an error if they are not a
// prefix of them or the log cannot be loaded at all.
func loadState(dir string, st crashState, policy string, n int) (crashResult, error) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.Remove(filepath.Join(dir, e.Name()))
	}
	for name, data := range st {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return crashResult{}, err
		}
	}
	var res crashResult
	s, err := New(Config{Persist: policy, Dir: dir})
	var le *LogError
	if errors.As(err, &le) && !le.NoRepair {
		res.repaired = true
		if rerr := Repair(dir, resp.Limits{}, func(string) bool { return true }, io.Discard); rerr != nil {
			return res, fmt.Errorf("refused (%v), and repair failed: %w", err, rerr)
		}
		s, err = New(Config{Persist: policy, Dir: dir})
	}
	if err != nil {
		return res, fmt.Errorf("does not load: %w", err)
	}
	defer s.closeAOF()
	for i := range n {
		v, ok := s.db.strs.get([]byte("k" + strconv.Itoa(i)))
		if !ok {
			res.keys = i
			break
		}
		if string(v) != strconv.Itoa(i) {
			return res, fmt.Errorf("k%d = %q", i, v)
		}
		res.keys = i + 1
	}
	if size := s.db.size(); size != res.keys {
		return res, fmt.Errorf("%d keys loaded, but only k0 to k%d are a prefix of the writes", size, res.keys-1)
	}
	return res, nil
}

func TestCrashStates(t *testing.T) {
	for _, policy := range []string{PersistAlways, PersistEverysec} {
		t.Run(policy, func(t *testing.T) {
			rec := newRecFS()
			srv := startPersistent(t, t.TempDir(), policy, func(c *Config) {
				c.fs = rec
				c.AutoRewritePercentage = -1
			})
			rc := dialRaw(t, srv)
			const n = 120
			ackAt := make([]int, n)
			for i := 0; i < n; {
				batch := 1 + i%4 // pipelines of 1 to 4: group commits of several records
				var req []byte
				for j := i; j < min(i+batch, n); j++ {
					req = resp.AppendCommandString(req, "SET", "k"+strconv.Itoa(j), strconv.Itoa(j))
				}
				rc.send(req)
				for j := i; j < min(i+batch, n); j++ {
					if got := rc.reply(); got != "+OK\r\n" {
						t.Fatalf("SET k%d: %q", j, got)
					}
					ackAt[j] = rec.mark()
				}
				i += batch
				switch {
				case i == n/2:
					// A rewrite: a new incremental file, a base, manifests.
					if got := rc.do("SAVE"); got != "+OK\r\n" {
						t.Fatalf("SAVE: %q", got)
					}
				case i%20 < batch && policy == PersistEverysec:
					srv.aof.syncNow() // the everysec tick
				}
				if i%30 < batch {
					srv.aof.saveSynced(true) // the cron's record of what is fsynced
				}
			}
			srv.Close()
			ops := rec.ops

			// must(k) counts the writes a crash after ops[:k] may not lose:
			// under always every one acknowledged, under everysec those
			// acknowledged before the last fsync of a log file.
			incr := make(map[int]bool) // the incremental files' inodes
			for _, o := range ops {
				if o.kind == opCreate && strings.HasSuffix(o.name, ".incr.aof") {
					incr[o.ino] = true
				}
			}
			must := func(k int) int {
				upTo := k
				if policy == PersistEverysec {
					upTo = -1
					for i, o := range ops[:k] {
						if o.kind == opSync && incr[o.ino] {
							upTo = i
						}
					}
				}
				m := 0
				for m < n && ackAt[m] <= upTo {
					m++
				}
				return m
			}
			dir := t.TempDir()
			seen := make(map[uint64]crashResult)
			var states, repaired, lost int
			for k := 0; k <= len(ops); k++ {
				need := must(k)
				crashStates(ops, k, func(st crashState) {
					h := st.hash()
					res, ok := seen[h]
					if !ok {
						var err error
						if res, err = loadState(dir, st, policy, n); err != nil {
							t.Fatalf("crash after operation %d of %d: %v", k, len(ops), err)
						}
						seen[h] = res
						states++
						if res.repaired {
							repaired++
						}
					}
					if res.keys < need {
						lost++
						t.Errorf("crash after operation %d: %d writes loaded, %d of them acknowledged must be", k, res.keys, need)
					}
				})
			}
			t.Logf("%s: %d operations recorded for %d acknowledged writes; %d distinct crash states loaded (%d refused at start and loaded after --repair); acknowledged writes lost: %d",
				policy, len(ops), n, states, repaired, lost)
		})
	}
}
