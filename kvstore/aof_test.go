package kvstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// startPersistent starts a server with a log in dir.
func startPersistent(t testing.TB, dir, policy string, mod ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Persist: policy, Dir: dir}
	for _, f := range mod {
		f(&cfg)
	}
	return startServer(t, cfg)
}

// writeEverything exercises every command that changes data.
func writeEverything(t *testing.T, rdb *redis.Client) {
	t.Helper()
	c := ctx(t)
	for _, cmd := range [][]any{
		{"SET", "s", "v1"}, {"SET", "s", "v2"}, {"SET", "gone", "x"}, {"DEL", "gone"},
		{"INCR", "n"}, {"INCRBY", "n", "41"}, {"DECR", "n"}, {"DECRBY", "n", "1"},
		{"MSET", "m1", "a", "m2", "b"}, {"APPEND", "app", "ab"}, {"APPEND", "app", "cd"},
		{"MOD", "m1", "A"}, {"SET", "bin", "a\r\n\x00b"},
		{"HSET", "e", "engine"}, {"HMOD", "e", "engine2"}, {"HSET", "e2", "x"}, {"HDEL", "e2"},
		{"RSET", "r", "tree"}, {"RMOD", "r", "tree2"}, {"RSET", "r2", "x"}, {"RDEL", "r2"},
		{"HSET", "h", "f1", "v1", "f2", "v2"}, {"HDEL", "h", "f2"},
		{"SET", "flushed", "x"}, {"FLUSHALL"}, // everything before is gone...
		{"SET", "s", "v2"}, {"INCRBY", "n", "40"}, {"MSET", "m1", "A", "m2", "b"},
		{"APPEND", "app", "abcd"}, {"SET", "bin", "a\r\n\x00b"}, {"HSET", "e", "engine2"},
		{"RSET", "r", "tree2"}, {"HSET", "h", "f1", "v1"},
	} {
		if err := rdb.Do(c, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
}

func checkEverything(t *testing.T, rdb *redis.Client) {
	t.Helper()
	c := ctx(t)
	for _, x := range []struct {
		cmd  []any
		want string
	}{
		{[]any{"GET", "s"}, "v2"}, {[]any{"GET", "n"}, "40"}, {[]any{"GET", "m1"}, "A"},
		{[]any{"GET", "m2"}, "b"}, {[]any{"GET", "app"}, "abcd"}, {[]any{"GET", "bin"}, "a\r\n\x00b"},
		{[]any{"HGET", "e"}, "engine2"}, {[]any{"RGET", "r"}, "tree2"}, {[]any{"HGET", "h", "f1"}, "v1"},
		{[]any{"DBSIZE"}, "9"},
	} {
		v, err := rdb.Do(c, x.cmd...).Result()
		if got := fmt.Sprint(v); err != nil || got != x.want {
			t.Errorf("%v = %q, %v; want %q", x.cmd, v, err, x.want)
		}
	}
}

func TestLogRoundTrip(t *testing.T) {
	for _, policy := range []string{PersistNo, PersistEverysec, PersistAlways} {
		for _, alloc := range []string{AllocPool, AllocGo} {
			t.Run(policy+"/"+alloc, func(t *testing.T) {
				dir := t.TempDir()
				withAlloc := func(c *Config) { c.Alloc = alloc }
				srv := startPersistent(t, dir, policy, withAlloc)
				writeEverything(t, newClient(t, srv))
				srv.Close()

				srv = startPersistent(t, dir, policy, withAlloc)
				rdb := newClient(t, srv)
				checkEverything(t, rdb)
				// Compact, write more, and load base plus increments.
				if err := rdb.Do(ctx(t), "SAVE").Err(); err != nil {
					t.Fatal(err)
				}
				rdb.Set(ctx(t), "after", "save", 0)
				srv.Close()
				srv = startPersistent(t, dir, policy, withAlloc)
				rdb = newClient(t, srv)
				if got := rdb.Get(ctx(t), "after").Val(); got != "save" {
					t.Fatalf("GET after = %q", got)
				}
				rdb.Del(ctx(t), "after")
				checkEverything(t, rdb)
				info := rdb.Info(ctx(t), "persistence").Val()
				for _, want := range []string{"aof_enabled:1", "aof_fsync:" + policy, "aof_last_bgrewrite_status:ok", "aof_loaded_keys:10", "aof_loaded_bytes:"} {
					if !strings.Contains(info, want) {
						t.Errorf("INFO persistence lacks %q:\n%s", want, info)
					}
				}
				cfg := rdb.ConfigGet(ctx(t), "*").Val()
				if cfg["appendonly"] != "yes" || cfg["appendfsync"] != policy || cfg["save"] != "" || cfg["dir"] != dir {
					t.Errorf("CONFIG GET = appendonly %q appendfsync %q save %q dir %q", cfg["appendonly"], cfg["appendfsync"], cfg["save"], cfg["dir"])
				}
			})
		}
	}
}

// buildLog writes n SETs through a server and returns the log file and the
// offsets at which its records start (and its length, last).
func buildLog(t *testing.T, dir string, n int) (string, []int64) {
	t.Helper()
	srv := startPersistent(t, dir, PersistNo)
	rdb := newClient(t, srv)
	for i := range n {
		rdb.Set(ctx(t), fmt.Sprint("k", i), fmt.Sprint("value-", i), 0)
	}
	srv.Close()
	path := filepath.Join(dir, incrName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for i := 0; i < len(data); {
		offs = append(offs, int64(i))
		j := bytes.Index(data[i:], []byte("\r\n#"))
		i += j + 3 + 8 + 2
	}
	if len(offs) != n {
		t.Fatalf("found %d records, want %d", len(offs), n)
	}
	return path, append(offs, int64(len(data)))
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, _ := os.ReadDir(from)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
	}
	return to
}

// Cutting the log at every byte offset inside its last record: the server
// starts, drops that record only, and says how much it dropped.
func TestLogTruncatedTail(t *testing.T) {
	src := t.TempDir()
	path, offs := buildLog(t, src, 5)
	last, end := offs[4], offs[5]
	for cut := last + 1; cut < end; cut++ {
		dir := copyDir(t, src)
		if err := os.Truncate(filepath.Join(dir, filepath.Base(path)), cut); err != nil {
			t.Fatal(err)
		}
		// The manifest as a crash leaves it: it says the records before
		// the last one were fsynced.
		crashManifest(t, dir, last)
		srv, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		rdb := newClient(t, srv)
		if n := rdb.DBSize(ctx(t)).Val(); n != 4 {
			t.Fatalf("cut at %d: %d keys, want 4", cut, n)
		}
		if err := rdb.Get(ctx(t), "k4").Err(); err != redis.Nil {
			t.Fatalf("cut at %d: the cut record was replayed", cut)
		}
		if info := rdb.Info(ctx(t), "persistence").Val(); !strings.Contains(info, fmt.Sprintf("aof_load_truncated_bytes:%d\r\n", cut-last)) {
			t.Fatalf("cut at %d: INFO does not report %d bytes dropped", cut, cut-last)
		}
		// The file was cut back, so what is appended now replays cleanly.
		rdb.Set(ctx(t), "new", "v", 0)
		srv.Close()
		srv, err = Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
		if err != nil {
			t.Fatalf("cut at %d, restart: %v", cut, err)
		}
		if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != 5 {
			t.Fatalf("cut at %d, restart: %d keys, want 5", cut, n)
		}
		srv.Close()
	}
}

// crashManifest writes the manifest of a log of one incremental file as a
// crash leaves it: synced bytes of it known fsynced (0: the manifest does
// not say, as those of earlier versions).
func crashManifest(t testing.TB, dir string, synced int64) {
	t.Helper()
	m := manifest{incrs: []int{1}}.withSynced(1, synced)
	if err := writeManifest(osFS{}, dir, m); err != nil {
		t.Fatal(err)
	}
}

// A log cut short before what the manifest says was fsynced is damage, not
// a torn tail, wherever the cut is: at a record boundary in the middle of
// the file, or inside a record. The start is refused with the offset where
// the records end; repair keeps them and says so in the manifest.
func TestLogCutBeforeSynced(t *testing.T) {
	src := t.TempDir()
	path, offs := buildLog(t, src, 8)
	if m, _, _ := readManifest(src); m.synced[1] != offs[8] {
		t.Fatalf("after a clean stop the manifest says %d bytes synced, want the file's %d", m.synced[1], offs[8])
	}
	for _, cut := range []int64{offs[4], offs[4] + 5, offs[7] + 3} {
		dir := copyDir(t, src)
		p := filepath.Join(dir, filepath.Base(path))
		if err := os.Truncate(p, cut); err != nil {
			t.Fatal(err)
		}
		valid := offs[slices.IndexFunc(offs, func(o int64) bool { return o > cut })-1]
		_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistEverysec, Dir: dir})
		var le *LogError
		if !errors.As(err, &le) || le.Truncated || le.Offset != valid || !strings.Contains(err.Error(), "synced") {
			t.Fatalf("cut at %d: err = %v, want damage where the records end, %d", cut, err, valid)
		}
		if st, _ := os.Stat(p); st.Size() != cut {
			t.Fatalf("cut at %d: the refused start changed the file to %d bytes", cut, st.Size())
		}
		var report bytes.Buffer
		if err := Repair(dir, resp.Limits{}, func(string) bool { return true }, &report); err != nil {
			t.Fatalf("cut at %d: repair: %v", cut, err)
		}
		srv := startPersistent(t, dir, PersistEverysec)
		want := int64(slices.Index(offs, valid))
		if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != want {
			t.Fatalf("cut at %d, repaired: %d keys, want %d", cut, n, want)
		}
		srv.Close()
	}
}

// A manifest lost beside its log: the start is refused, naming the files,
// and nothing is changed; repair rebuilds the manifest from the files, and
// every key comes back. The same for files a rewrite left (the base, the
// increment after it, and the older files it replaced).
func TestLogMissingManifest(t *testing.T) {
	for _, rewritten := range []bool{false, true} {
		t.Run(fmt.Sprint("rewritten=", rewritten), func(t *testing.T) {
			dir := t.TempDir()
			srv := startPersistent(t, dir, PersistEverysec)
			rdb := newClient(t, srv)
			for i := range 50 {
				must(rdb.Set(ctx(t), fmt.Sprint("k", i), i, 0).Result())(t, "SET")
				if rewritten && i == 25 {
					must(rdb.Do(ctx(t), "SAVE").Result())(t, "SAVE")
				}
			}
			srv.Close()
			if rewritten {
				// An older file left beside them, as a crash after the
				// manifest named the base leaves it.
				os.WriteFile(filepath.Join(dir, incrName(1)), appendRecord(nil, resp.Command{Args: [][]byte{[]byte("SET"), []byte("old"), []byte("x")}}), 0o644)
			}
			os.Remove(filepath.Join(dir, manifestName))
			before := dirSizes(t, dir)
			_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistEverysec, Dir: dir})
			var le *LogError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), incrName(int(2-b2i(!rewritten)))) || le.Fix == "" {
				t.Fatalf("start without a manifest: err = %v", err)
			}
			if after := dirSizes(t, dir); !maps.Equal(before, after) {
				t.Fatalf("the refused start changed the directory: %v, then %v", before, after)
			}
			var question string
			if err := Repair(dir, resp.Limits{}, func(q string) bool { question += q; return true }, io.Discard); err != nil {
				t.Fatalf("repair: %v (asked %q)", err, question)
			}
			srv = startPersistent(t, dir, PersistEverysec)
			rdb = newClient(t, srv)
			if n := rdb.DBSize(ctx(t)).Val(); n != 50 {
				t.Fatalf("after rebuilding the manifest: %d keys, want 50 (asked %q)", n, question)
			}
		})
	}
}

// dirSizes maps each file of dir to its size.
func dirSizes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sizes := make(map[string]int64)
	for _, e := range entries {
		info, _ := e.Info()
		sizes[e.Name()] = info.Size()
	}
	return sizes
}

// A manifest naming an incremental file that is missing refuses the start,
// naming it; repair drops it (and the files after it) from the manifest,
// and the files before it load.
func TestLogMissingIncr(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistEverysec, func(c *Config) { c.AutoRewritePercentage = -1 })
	rdb := newClient(t, srv)
	for i := range 10 {
		must(rdb.Set(ctx(t), fmt.Sprint("k", i), i, 0).Result())(t, "SET")
	}
	// A rewrite whose base could not be written leaves the log in a
	// second incremental file.
	must(0, srv.aof.claimRewrite())(t, "claim")
	next := must(srv.prepareRewrite())(t, "prepare")
	srv.db.mu.Lock()
	snap := must(srv.switchLog(next))(t, "switch")
	snap.release()
	srv.db.mu.Unlock()
	srv.endRewrite(errors.New("no base (test)"))
	for i := 10; i < 20; i++ {
		must(rdb.Set(ctx(t), fmt.Sprint("k", i), i, 0).Result())(t, "SET")
	}
	srv.Close()
	os.Remove(filepath.Join(dir, incrName(2)))
	before := dirSizes(t, dir)
	_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistEverysec, Dir: dir})
	var le *LogError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), incrName(2)+", and the log cannot be replayed") {
		t.Fatalf("start with a file missing: err = %v", err)
	}
	if after := dirSizes(t, dir); !maps.Equal(before, after) {
		t.Fatalf("the refused start changed the directory: %v, then %v", before, after)
	}
	if err := Repair(dir, resp.Limits{}, func(string) bool { return true }, io.Discard); err != nil {
		t.Fatalf("repair: %v", err)
	}
	rdb = newClient(t, startPersistent(t, dir, PersistEverysec))
	if n := rdb.DBSize(ctx(t)).Val(); n != 10 {
		t.Fatalf("after dropping the missing file: %d keys, want the first file's 10", n)
	}
}

// A flipped byte anywhere in a record that is not the last one refuses the
// start, naming the file and the record's offset; repair cuts the log
// there and the server starts with the records before it.
func TestLogCorruptMiddle(t *testing.T) {
	src := t.TempDir()
	path, offs := buildLog(t, src, 5)
	rec := 2
	for pos := offs[rec]; pos < offs[rec+1]; pos++ {
		dir := copyDir(t, src)
		p := filepath.Join(dir, filepath.Base(path))
		data, _ := os.ReadFile(p)
		data[pos] ^= 0x20
		os.WriteFile(p, data, 0o644)
		_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
		var le *LogError
		if !errors.As(err, &le) || le.Truncated || le.Offset < offs[rec] || le.Offset >= offs[rec+1] {
			t.Fatalf("byte %d (record at %d) flipped: err = %v, want a LogError inside the record", pos, offs[rec], err)
		}
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not name the file", err)
		}
		if pos != offs[rec]+7 {
			continue // repair is tested once
		}
		if err := Repair(dir, resp.Limits{}, func(string) bool { return false }, io.Discard); !errors.Is(err, ErrRepairCancelled) {
			t.Fatalf("refused repair: %v", err)
		}
		var report bytes.Buffer
		var question string
		if err := Repair(dir, resp.Limits{}, func(q string) bool { question = q; return true }, &report); err != nil {
			t.Fatalf("repair: %v", err)
		}
		if !strings.Contains(question, fmt.Sprintf("offset %d", offs[rec])) || !strings.Contains(report.String(), "repaired") {
			t.Fatalf("repair question %q, report %q", question, report.String())
		}
		srv, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
		if err != nil {
			t.Fatalf("start after repair: %v", err)
		}
		if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != int64(rec) {
			t.Fatalf("after repair: %d keys, want %d", n, rec)
		}
		srv.Close()
	}
}

// Redis's aof-race test: INCRs from several clients while the log is
// rewritten again and again; after a restart the counter equals the number
// of acknowledged INCRs.
func TestRewriteRacingWrites(t *testing.T) {
	for _, alloc := range []string{AllocPool, AllocGo} {
		t.Run(alloc, func(t *testing.T) {
			dir := t.TempDir()
			srv := startPersistent(t, dir, PersistEverysec, func(c *Config) { c.Alloc = alloc })
			var acked atomic.Int64
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rdb := newClient(t, srv)
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						pipe := rdb.Pipeline()
						for range 10 {
							pipe.Incr(context.Background(), "counter")
						}
						pipe.Set(context.Background(), fmt.Sprint("w", w, ":", i), i, 0)
						cmds, _ := pipe.Exec(context.Background())
						for _, c := range cmds[:10] {
							if c.Err() == nil {
								acked.Add(1)
							}
						}
					}
				}()
			}
			admin := newClient(t, srv)
			for range 10 {
				err := admin.Do(ctx(t), "BGREWRITEAOF").Err()
				if err != nil && !strings.Contains(err.Error(), "already in progress") {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			close(stop)
			wg.Wait()
			srv.Close()
			srv = startPersistent(t, dir, PersistEverysec, func(c *Config) { c.Alloc = alloc })
			got, err := newClient(t, srv).Get(ctx(t), "counter").Int64()
			if err != nil || got != acked.Load() {
				t.Fatalf("counter = %d, %v; %d INCRs acknowledged", got, err, acked.Load())
			}
		})
	}
}

// openFS is the operating system's files, opened through open.
type openFS struct {
	osFS
	open func(name string, flag int) (logFile, error)
}

func (f openFS) OpenFile(name string, flag int) (logFile, error) { return f.open(name, flag) }

// faultyFile fails writes (or fsyncs) while its switch is on.
type faultyFile struct {
	logFile
	failWrite, failSync *atomic.Bool
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if f.failWrite.Load() {
		// A partial write, then the error, as a full disk does.
		n, _ := f.logFile.Write(p[:len(p)/2])
		return n, errors.New("no space left on device (injected)")
	}
	return f.logFile.Write(p)
}

func (f *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if f.failWrite.Load() {
		n, _ := f.logFile.WriteAt(p[:len(p)/2], off)
		return n, errors.New("no space left on device (injected)")
	}
	return f.logFile.WriteAt(p, off)
}

func (f *faultyFile) Sync() error {
	if f.failSync.Load() {
		return errors.New("input/output error (injected)")
	}
	return f.logFile.Sync()
}

func TestLogWriteFailure(t *testing.T) {
	for _, fault := range []string{"write", "fsync"} {
		t.Run(fault, func(t *testing.T) {
			dir := t.TempDir()
			var failWrite, failSync atomic.Bool
			open := func(name string, flag int) (logFile, error) {
				f, err := openLogFile(name, flag)
				if err != nil {
					return nil, err
				}
				return &faultyFile{logFile: f, failWrite: &failWrite, failSync: &failSync}, nil
			}
			srv := startPersistent(t, dir, PersistAlways, func(c *Config) { c.fs = openFS{open: open} })
			rdb := newClient(t, srv)
			c := ctx(t)
			for i := range 10 {
				if err := rdb.Set(c, fmt.Sprint("k", i), i, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if fault == "write" {
				failWrite.Store(true)
			} else {
				failSync.Store(true)
			}
			wantErr(t, "SET while failing", rdb.Set(c, "bad", "x", 0).Err(), "MISCONF")
			wantErr(t, "next SET", rdb.Set(c, "bad2", "x", 0).Err(), "MISCONF")
			wantErr(t, "RSET", rdb.Do(c, "RSET", "r", "x").Err(), "MISCONF")
			if got, err := rdb.Get(c, "k3").Result(); err != nil || got != "3" {
				t.Fatalf("GET while failing = %q, %v", got, err)
			}
			info := rdb.Info(c, "persistence").Val()
			if !strings.Contains(info, "aof_last_write_status:err") {
				t.Fatalf("INFO does not show the failure:\n%s", info)
			}
			// Heal the disk: the server rewrites the log and accepts writes.
			failWrite.Store(false)
			failSync.Store(false)
			waitFor(t, "writes accepted again", func() bool { return rdb.Set(c, "good", "y", 0).Err() == nil })
			srv.Close()
			srv = startPersistent(t, dir, PersistAlways)
			rdb = newClient(t, srv)
			for i := range 10 {
				if got := rdb.Get(c, fmt.Sprint("k", i)).Val(); got != strconv.Itoa(i) {
					t.Fatalf("acknowledged k%d = %q after restart", i, got)
				}
			}
			if got := rdb.Get(c, "good").Val(); got != "y" {
				t.Fatalf("acknowledged write after recovery lost: %q", got)
			}
			if err := rdb.Get(c, "bad2").Err(); err != redis.Nil {
				t.Fatalf("a write refused before it was applied exists: %v", err)
			}
		})
	}
}

// ioRecorder notes every write and fsync of the files it wraps, in order.
type ioRecorder struct {
	logFile
	name   string
	events *[]string
	mu     *sync.Mutex
}

func (f *ioRecorder) note(what string) {
	f.mu.Lock()
	*f.events = append(*f.events, what+" "+f.name)
	f.mu.Unlock()
}

func (f *ioRecorder) WriteAt(p []byte, off int64) (int, error) {
	f.note("write")
	return f.logFile.WriteAt(p, off)
}

func (f *ioRecorder) Sync() error {
	f.note("sync")
	return f.logFile.Sync()
}

// A rewrite fsyncs the old incremental file after its last write and
// before the first write of the new one, whatever the policy: no record
// may reach the disk ahead of an older one.
func TestSwitchSyncsOldFileFirst(t *testing.T) {
	for _, policy := range []string{PersistNo, PersistEverysec} {
		t.Run(policy, func(t *testing.T) {
			var (
				mu     sync.Mutex
				events []string
			)
			open := func(name string, flag int) (logFile, error) {
				f, err := openLogFile(name, flag)
				if err != nil {
					return nil, err
				}
				return &ioRecorder{logFile: f, name: filepath.Base(name), events: &events, mu: &mu}, nil
			}
			srv := startPersistent(t, t.TempDir(), policy, func(c *Config) { c.fs = openFS{open: open} })
			rdb := newClient(t, srv)
			c := ctx(t)
			for i := range 20 {
				must(rdb.Set(c, fmt.Sprint("k", i), i, 0).Result())(t, "SET")
			}
			// startRewrite's steps, with a write between each.
			must(0, srv.aof.claimRewrite())(t, "claim")
			next := must(srv.prepareRewrite())(t, "prepare")
			must(rdb.Set(c, "meanwhile", "1", 0).Result())(t, "SET")
			srv.db.mu.Lock()
			snap, err := srv.switchLog(next)
			srv.db.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			must(rdb.Set(c, "after", "1", 0).Result())(t, "SET")
			srv.endRewrite(srv.finishRewrite(snap, next.seq))
			srv.db.mu.Lock()
			snap.release()
			srv.db.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			firstNew := slices.Index(events, "write "+incrName(2))
			if firstNew < 0 {
				t.Fatalf("no write reached %s: %v", incrName(2), events)
			}
			old := events[:firstNew]
			lastOldWrite, lastOldSync := -1, -1
			for i, e := range old {
				switch e {
				case "write " + incrName(1):
					lastOldWrite = i
				case "sync " + incrName(1):
					lastOldSync = i
				}
			}
			if lastOldWrite < 0 || lastOldSync < lastOldWrite {
				t.Fatalf("%s was not fsynced after its last write and before %s's first: %v", incrName(1), incrName(2), events)
			}
		})
	}
}

// A failed fsync of the old incremental file at the switch fails the log
// until a rewrite has recovered it; reads go on, and nothing acknowledged
// is lost.
func TestSwitchSyncFailure(t *testing.T) {
	dir := t.TempDir()
	var failWrite, failSync atomic.Bool
	open := func(name string, flag int) (logFile, error) {
		f, err := openLogFile(name, flag)
		if err != nil || filepath.Base(name) != incrName(1) {
			return f, err
		}
		return &faultyFile{logFile: f, failWrite: &failWrite, failSync: &failSync}, nil
	}
	// Under no, the rewrite's are the only fsyncs there are.
	srv := startPersistent(t, dir, PersistNo, func(c *Config) { c.fs = openFS{open: open} })
	rdb := newClient(t, srv)
	c := ctx(t)
	for i := range 10 {
		must(rdb.Set(c, fmt.Sprint("k", i), i, 0).Result())(t, "SET")
	}
	failSync.Store(true)
	must(rdb.BgRewriteAOF(c).Result())(t, "BGREWRITEAOF")
	waitFor(t, "writes refused", func() bool { return rdb.Set(c, "x", "1", 0).Err() != nil })
	wantErr(t, "SET after the failed fsync", rdb.Set(c, "x", "1", 0).Err(), "MISCONF")
	if got := rdb.Get(c, "k3").Val(); got != "3" {
		t.Fatalf("GET while failing = %q", got)
	}
	if info := rdb.Info(c, "persistence").Val(); !strings.Contains(info, "aof_last_bgrewrite_status:err") {
		t.Fatalf("INFO does not show the failed rewrite:\n%s", info)
	}
	failSync.Store(false)
	waitFor(t, "writes accepted again", func() bool { return rdb.Set(c, "good", "y", 0).Err() == nil })
	srv.Close()
	rdb = newClient(t, startPersistent(t, dir, PersistNo))
	for i := range 10 {
		if got := rdb.Get(c, fmt.Sprint("k", i)).Val(); got != strconv.Itoa(i) {
			t.Fatalf("acknowledged k%d = %q after restart", i, got)
		}
	}
	if got := rdb.Get(c, "good").Val(); got != "y" {
		t.Fatalf("acknowledged write after recovery lost: %q", got)
	}
}

// A rewrite names its new incremental file in the manifest before the log
// switches to it. A crash in between, even one that cut the old file's
// last record, leaves a log that loads: the empty file at the end holds no
// record, so the cut one is the log's last, and is dropped.
func TestPreparedFileNotSwitched(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistEverysec)
	rdb := newClient(t, srv)
	c := ctx(t)
	must(rdb.Set(c, "before", "1", 0).Result())(t, "SET")
	must(0, srv.aof.claimRewrite())(t, "claim")
	next, err := srv.prepareRewrite()
	if err != nil {
		t.Fatal(err)
	}
	must(rdb.Set(c, "meanwhile", "2", 0).Result())(t, "SET")
	// The files as a crash now would leave them (the page cache is the
	// file), and half of a record being written.
	crashed := copyDir(t, dir)
	f, err := os.OpenFile(filepath.Join(crashed, incrName(1)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	partial := appendRecord(nil, resp.Command{Args: [][]byte{[]byte("SET"), []byte("lost"), []byte("3")}})
	must(f.Write(partial[:len(partial)/2]))(t, "partial record")
	f.Close()
	next.f.Close()
	srv.endRewrite(nil)
	srv.Close()

	srv = startPersistent(t, crashed, PersistEverysec)
	rdb = newClient(t, srv)
	if m := srv.aof.man; m.lastIncr() != next.seq {
		t.Fatalf("manifest %+v: the prepared file %d is not the last", m, next.seq)
	}
	if srv.aof.truncated != int64(len(partial)/2) {
		t.Fatalf("%d bytes cut off the old file, want the partial record's %d", srv.aof.truncated, len(partial)/2)
	}
	must(rdb.Set(c, "after", "4", 0).Result())(t, "SET")
	srv.Close()

	rdb = newClient(t, startPersistent(t, crashed, PersistEverysec))
	for k, want := range map[string]string{"before": "1", "meanwhile": "2", "after": "4"} {
		if got := rdb.Get(c, k).Val(); got != want {
			t.Errorf("%s = %q after restarts, want %q", k, got, want)
		}
	}
	if n := rdb.Exists(c, "lost").Val(); n != 0 {
		t.Error("the cut record was applied")
	}
}

func TestDataDirNotWritable(t *testing.T) {
	if os.Getuid() == 0 {
		// root writes anywhere; a file where the directory should be
		// fails for everyone.
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, nil, 0o644)
		_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: filepath.Join(f, "sub")})
		if err == nil || !strings.Contains(err.Error(), "data directory") {
			t.Fatalf("err = %v", err)
		}
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("err = %v", err)
	}
}

// The log compacts itself once the increments outgrow the base.
func TestAutoRewrite(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistNo, func(c *Config) {
		c.AutoRewriteMinSize = 4 << 10
		c.AutoRewritePercentage = 100
	})
	rdb := newClient(t, srv)
	val := strings.Repeat("x", 100)
	for i := range 100 { // ~14 KB of records, the same 10 keys over and over
		rdb.Set(ctx(t), fmt.Sprint("k", i%10), val, 0)
	}
	waitFor(t, "an automatic rewrite", func() bool {
		info := rdb.Info(ctx(t), "persistence").Val()
		return strings.Contains(info, "aof_base_size:") && !strings.Contains(info, "aof_base_size:0\r\n") && strings.Contains(info, "aof_rewrite_in_progress:0")
	})
	m, _, err := readManifest(dir)
	if err != nil || m.base == 0 || len(m.incrs) != 1 {
		t.Fatalf("manifest after the rewrite: %+v, %v", m, err)
	}
	srv.Close()
	srv = startPersistent(t, dir, PersistNo)
	if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != 10 {
		t.Fatalf("%d keys after a restart, want 10", n)
	}
}

// Under the always policy the incremental file is filled with zeros ahead
// of its records. A crash leaves them there, possibly after a torn record:
// the loader takes the zeros for unused space and drops the torn record.
func TestLogPreallocatedTail(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistAlways)
	rdb := newClient(t, srv)
	for i := range 5 {
		rdb.Set(ctx(t), fmt.Sprint("k", i), fmt.Sprint("value-", i), 0)
	}
	path := filepath.Join(dir, incrName(1))
	st, _ := os.Stat(path)
	records, _ := fileDataEnd(path)
	if st.Size() < records+preallocChunk/2 {
		t.Fatalf("log file is %d bytes for %d bytes of records: not preallocated", st.Size(), records)
	}
	// What a crash leaves: the file as it is now, zeros included.
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if st, _ := os.Stat(path); st.Size() != records {
		t.Fatalf("after a clean close the file is %d bytes, want its %d bytes of records", st.Size(), records)
	}

	last := int64(bytes.LastIndex(crashed[:records-1], []byte("\r\n*")) + 2)
	for _, cut := range []int64{records, last + 1, last + 9, records - 1} {
		torn := append(bytes.Clone(crashed[:cut]), make([]byte, 1<<20)...)
		if err := os.WriteFile(path, torn, 0o644); err != nil {
			t.Fatal(err)
		}
		crashManifest(t, dir, 0) // before the log said how much was fsynced
		srv := startPersistent(t, dir, PersistAlways)
		rdb := newClient(t, srv)
		want := int64(4)
		if cut == records {
			want = 5
		}
		if n := rdb.DBSize(ctx(t)).Val(); n != want {
			t.Fatalf("records cut at %d then zeros: %d keys, want %d", cut, n, want)
		}
		rdb.Set(ctx(t), "k4", "value-4", 0) // the next record goes where the cut one began
		srv.Close()
		srv = startPersistent(t, dir, PersistAlways)
		if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != 5 {
			t.Fatalf("cut at %d, after a write and a restart: %d keys", cut, n)
		}
		srv.Close()
	}
}

// Under the no and everysec policies space is reserved ahead of the
// records in the background; appends go into it, a clean close cuts it
// off, and a crash image with it starts with every record.
func TestLogReservedAhead(t *testing.T) {
	for _, policy := range []string{PersistNo, PersistEverysec} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			srv := startPersistent(t, dir, policy)
			rdb := newClient(t, srv)
			path := filepath.Join(dir, incrName(1))
			size := func() int64 {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				return st.Size()
			}
			rdb.Set(ctx(t), "k0", "value-0", 0)
			for deadline := time.Now().Add(time.Minute); size() < minLogReserve; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("log file still %d bytes after a minute: nothing reserved", size())
				}
			}
			reserved := size()
			for i := 1; i < 5; i++ {
				rdb.Set(ctx(t), fmt.Sprint("k", i), fmt.Sprint("value-", i), 0)
			}
			records, _ := fileDataEnd(path)
			if got := size(); got < reserved || records >= reserved {
				t.Fatalf("file %d bytes, %d of records: appends did not go into the %d bytes reserved", got, records, reserved)
			}
			crashed, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			srv.Close()
			if got := size(); got != records {
				t.Fatalf("after a clean close the file is %d bytes, want its %d bytes of records", got, records)
			}
			if err := os.WriteFile(path, crashed, 0o644); err != nil {
				t.Fatal(err)
			}
			crashManifest(t, dir, 0)
			srv = startPersistent(t, dir, policy)
			if n := newClient(t, srv).DBSize(ctx(t)).Val(); n != 5 {
				t.Fatalf("from the file with its reserved space: %d keys, want 5", n)
			}
			srv.Close()
		})
	}
}

// TestRewriteRacingOverwrites rewrites the log again and again while one
// client overwrites, appends to and deletes keys of every engine (records
// that change in place, grow into new records or are freed, and a FLUSHALL
// in the middle) with the pool allocator, whose snapshots freeze the arena
// rather than copy it. After a restart the dataset is what the client was
// told it is. (Whether a change lands while a snapshot is out depends on
// timing; TestTables checks frozen arenas deterministically.)
func TestRewriteRacingOverwrites(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistNo)
	rdb := newClient(t, srv)
	c := ctx(t)
	rng := rand.New(rand.NewPCG(7, 7))
	type engine struct{ set, get string }
	engines := []engine{{"SET", "GET"}, {"HMOD", "HGET"}, {"RMOD", "RGET"}}
	model := map[string]map[string]string{"GET": {}, "HGET": {}, "RGET": {}}
	insert := map[string]string{"HGET": "HSET", "RGET": "RSET"}
	for round := range 40 {
		pipe := rdb.Pipeline()
		for i := range 2000 {
			e := engines[rng.IntN(len(engines))]
			key := fmt.Sprintf("k%d", rng.IntN(3000))
			val := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(40))
			m := model[e.get]
			_, exists := m[key]
			switch {
			case i%4 == 0 && e.get == "GET":
				pipe.Do(c, "APPEND", key, val)
				m[key] += val
			case i%37 == 0 && exists:
				pipe.Do(c, map[string]string{"GET": "DEL", "HGET": "HDEL", "RGET": "RDEL"}[e.get], key)
				delete(m, key)
			case !exists && e.get != "GET":
				pipe.Do(c, insert[e.get], key, val)
				m[key] = val
			default:
				pipe.Do(c, e.set, key, val)
				m[key] = val
			}
		}
		if _, err := pipe.Exec(c); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := rdb.Do(c, "BGREWRITEAOF").Err(); err != nil && !strings.Contains(err.Error(), "already in progress") {
			t.Fatal(err)
		}
		if round == 20 {
			if err := rdb.FlushAll(c).Err(); err != nil {
				t.Fatal(err)
			}
			for _, m := range model {
				clear(m)
			}
		}
	}
	srv.Close()
	srv = startPersistent(t, dir, PersistNo)
	rdb = newClient(t, srv)
	total := 0
	for get, m := range model {
		total += len(m)
		for k, want := range m {
			if got, err := rdb.Do(c, get, k).Text(); err != nil || got != want {
				t.Fatalf("%s %s = %q, %v; want %q", get, k, got, err, want)
			}
		}
	}
	if n, err := rdb.DBSize(c).Result(); err != nil || int(n) != total {
		t.Fatalf("DBSIZE %d, %v; want %d", n, err, total)
	}
}

// gatedFile holds every fsync while hold is set, until the gate opens,
// and counts them.
type gatedFile struct {
	logFile
	hold  *atomic.Bool
	gate  <-chan struct{}
	syncs *atomic.Int64
}

func (f *gatedFile) Sync() error {
	if f.hold.Load() {
		<-f.gate
		f.syncs.Add(1)
	}
	return f.logFile.Sync()
}

// TestAlwaysSyncsBeforeReply: under the always policy no reply to a write
// leaves before the fsync of its record has returned, and the writes of
// the connections served in one round share one fsync (group commit).
func TestAlwaysSyncsBeforeReply(t *testing.T) {
	gate := make(chan struct{})
	var hold atomic.Bool
	var syncs atomic.Int64
	srv := startPersistent(t, t.TempDir(), PersistAlways, func(c *Config) {
		c.fs = openFS{open: func(name string, flag int) (logFile, error) {
			f, err := openLogFile(name, flag)
			if err != nil {
				return nil, err
			}
			return &gatedFile{logFile: f, hold: &hold, gate: gate, syncs: &syncs}, nil
		}}
		c.Loops = 1
	})
	const clients = 20
	conns := make([]*rawConn, clients)
	for i := range conns {
		conns[i] = dialRaw(t, srv)
	}
	// The first write starts an fsync that waits at the gate; the others
	// arrive meanwhile.
	hold.Store(true)
	for i, rc := range conns {
		rc.send(appendCmd(nil, "SET", fmt.Sprint("k", i), "v"))
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for _, rc := range conns {
		rc.nc.SetReadDeadline(deadline)
		var b [1]byte
		if n, err := rc.nc.Read(b[:]); n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a reply before the fsync returned: %q, %v", b[:n], err)
		}
	}
	close(gate)
	for _, rc := range conns {
		if got := rc.reply(); got != "+OK\r\n" {
			t.Fatalf("reply %q", got)
		}
	}
	// 20 writes waiting together: far fewer fsyncs than writes.
	if n := syncs.Load(); n < 1 || n > clients/2 {
		t.Fatalf("%d fsyncs for %d writes that arrived together", n, clients)
	}
}

// A record the replay refuses (a command that writes nothing, or one the
// database answers with an error) stops the start with a LogError at that
// record's offset, wherever it falls in the replay's batches: inside one,
// or last in the file.
func TestReplayRefusedRecord(t *testing.T) {
	const n = 200
	src := t.TempDir()
	path, offs := buildLog(t, src, n)
	cases := []struct {
		name string
		at   int // the record the refused one goes before
		rec  []string
		msg  string
	}{
		{"read command inside a batch", 100, []string{"GET", "k1"}, `"GET" is not a write command`},
		{"refused write inside a batch", 70, []string{"INCR", "k3"}, "not an integer"},
		{"refused write last", n, []string{"INCR", "k5"}, "not an integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			p := filepath.Join(dir, filepath.Base(path))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var args [][]byte
			for _, a := range tc.rec {
				args = append(args, []byte(a))
			}
			rec := appendRecord(nil, resp.Command{Args: args})
			data = append(data[:offs[tc.at]:offs[tc.at]], append(rec, data[offs[tc.at]:]...)...)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
			var le *LogError
			if !errors.As(err, &le) || le.Offset != offs[tc.at] || !strings.Contains(le.Msg, tc.msg) {
				t.Fatalf("err = %v, want a LogError at offset %d saying %q", err, offs[tc.at], tc.msg)
			}
		})
	}
}

// Records larger than a replay batch holds (a value past its bytes, an
// MSET past its arguments) are replayed alone, in their place among the
// small ones.
func TestReplayLargeRecords(t *testing.T) {
	dir := t.TempDir()
	srv := startPersistent(t, dir, PersistNo)
	rdb := newClient(t, srv)
	big := strings.Repeat("v", 200<<10)
	var pairs []any
	for i := range 300 {
		pairs = append(pairs, fmt.Sprint("m", i), fmt.Sprint("mv", i))
	}
	for i := range 300 {
		switch i {
		case 100:
			rdb.Set(ctx(t), "big", big, 0)
		case 150:
			rdb.MSet(ctx(t), pairs...)
		case 200:
			rdb.Set(ctx(t), "k5", "overwritten", 0)
		}
		rdb.Set(ctx(t), fmt.Sprint("k", i), fmt.Sprint("value-", i), 0)
	}
	srv.Close()
	srv = startPersistent(t, dir, PersistNo)
	rdb = newClient(t, srv)
	if n := rdb.DBSize(ctx(t)).Val(); n != 300+1+300 {
		t.Fatalf("%d keys after the replay, want %d", n, 601)
	}
	if v := rdb.Get(ctx(t), "big").Val(); v != big {
		t.Fatalf("the large value came back as %d bytes", len(v))
	}
	for _, kv := range [][2]string{{"m0", "mv0"}, {"m299", "mv299"}, {"k5", "overwritten"}, {"k299", "value-299"}} {
		if v := rdb.Get(ctx(t), kv[0]).Val(); v != kv[1] {
			t.Fatalf("%s = %q after the replay, want %q", kv[0], v, kv[1])
		}
	}
}

// budgetFS is a file system of limited size: a write past the budget
// writes what fits and fails with ENOSPC, as a full disk does.
type budgetFS struct {
	osFS
	mu     sync.Mutex
	budget int64
	sizes  map[string]int64
}

func newBudgetFS(budget int64) *budgetFS {
	return &budgetFS{budget: budget, sizes: make(map[string]int64)}
}

func (b *budgetFS) used() int64 {
	var n int64
	for _, s := range b.sizes {
		n += s
	}
	return n
}

// grow raises the budget by n bytes: space freed.
func (b *budgetFS) grow(n int64) {
	b.mu.Lock()
	b.budget += n
	b.mu.Unlock()
}

func (b *budgetFS) OpenFile(name string, flag int) (logFile, error) {
	f, err := openLogFile(name, flag)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(name)
	if err != nil {
		f.Close()
		return nil, err
	}
	b.mu.Lock()
	b.sizes[name] = st.Size()
	b.mu.Unlock()
	return &budgetFile{logFile: f, fs: b, name: name}, nil
}

func (b *budgetFS) Rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return err
	}
	b.mu.Lock()
	b.sizes[to] = b.sizes[from]
	delete(b.sizes, from)
	b.mu.Unlock()
	return nil
}

func (b *budgetFS) Remove(name string) error {
	b.mu.Lock()
	delete(b.sizes, name)
	b.mu.Unlock()
	return os.Remove(name)
}

type budgetFile struct {
	logFile
	fs   *budgetFS
	name string
	off  int64 // for Write
}

func (f *budgetFile) WriteAt(p []byte, off int64) (int, error) {
	b := f.fs
	b.mu.Lock()
	size := b.sizes[f.name]
	room := b.budget - b.used()
	n, full := len(p), false
	if grow := off + int64(len(p)) - size; grow > room {
		n, full = max(0, int(int64(len(p))-(grow-room))), true
	}
	if end := off + int64(n); end > size {
		b.sizes[f.name] = end
	}
	b.mu.Unlock()
	w, err := f.logFile.WriteAt(p[:n], off)
	if err == nil && full {
		err = unix.ENOSPC
	}
	return w, err
}

func (f *budgetFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *budgetFile) Truncate(size int64) error {
	if err := f.logFile.Truncate(size); err != nil {
		return err
	}
	f.fs.mu.Lock()
	f.fs.sizes[f.name] = size
	f.fs.mu.Unlock()
	return nil
}

// A full disk refuses writes with MISCONF; once a tenth of the log's size
// is free again, the records the disk refused are written and writes are
// accepted, without a rewrite (which would need room for the whole
// dataset: INFO says how much). Nothing acknowledged is lost.
func TestLogFullDiskResumes(t *testing.T) {
	for _, policy := range []string{PersistEverysec, PersistAlways} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			// Under always, the zeros filled ahead of the records take
			// the room first, and the records fill them.
			fsys := newBudgetFS(64 << 10)
			srv := startPersistent(t, dir, policy, func(c *Config) { c.fs = fsys })
			rdb := newClient(t, srv)
			c := ctx(t)
			val := strings.Repeat("v", 100)
			acked := 0
			var err error
			for ; acked < 100000; acked++ {
				if err = rdb.Set(c, fmt.Sprint("k", acked), val, 0).Err(); err != nil {
					break
				}
			}
			wantErr(t, "SET on a full disk", err, "MISCONF")
			wantErr(t, "next SET", rdb.Set(c, "refused", val, 0).Err(), "MISCONF")
			info := rdb.Info(c, "persistence").Val()
			for _, want := range []string{"aof_last_write_status:err", "aof_rewrite_needs_bytes:", "aof_rewrites:0\r\n"} {
				if !strings.Contains(info, want) {
					t.Fatalf("INFO persistence lacks %q:\n%s", want, info)
				}
			}
			fsys.mu.Lock()
			used := fsys.used()
			fsys.mu.Unlock()
			fsys.grow(used / 10)
			waitFor(t, "writes accepted again", func() bool { return rdb.Set(c, "after", "y", 0).Err() == nil })
			info = rdb.Info(c, "persistence").Val()
			if !strings.Contains(info, "aof_rewrites:0\r\n") || !strings.Contains(info, "aof_last_write_status:ok") {
				t.Fatalf("writes resumed through a rewrite, or the log still fails:\n%s", info)
			}
			srv.Close()
			rdb = newClient(t, startPersistent(t, dir, policy))
			for i := range acked {
				if got := rdb.Get(c, fmt.Sprint("k", i)).Val(); got != val {
					t.Fatalf("acknowledged k%d = %q after restart", i, got)
				}
			}
			if got := rdb.Get(c, "after").Val(); got != "y" {
				t.Fatalf("the write after the disk had room is lost: %q", got)
			}
			if rdb.Exists(c, "refused").Val() != 0 {
				t.Fatal("a write refused before it was applied exists")
			}
		})
	}
}
