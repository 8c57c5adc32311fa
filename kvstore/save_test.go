package kvstore

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// TestBGSave: BGSAVE writes the dataset as it was when it answered,
// while the server goes on serving writes that replace it, under every
// allocator and policy (none included: a snapshot needs no log). The
// pool allocator's snapshot reports the records it kept alive
// (current_cow_size while it is written, rdb_last_cow_size after); the
// clients' pause is latest_fork_usec.
func TestBGSave(t *testing.T) {
	for _, alloc := range []string{AllocPool, AllocGo} {
		for _, policy := range []string{PersistNone, PersistEverysec} {
			t.Run(alloc+"/"+policy, func(t *testing.T) {
				dir := t.TempDir()
				hold, held := make(chan struct{}), make(chan struct{})
				srv := startServer(t, Config{Persist: policy, Dir: dir, Alloc: alloc, beforeDump: func() {
					close(held)
					<-hold
				}})
				rc := dialRaw(t, srv)
				const n = 3000
				writeBoth(t, rc, n, "RSET", "old-")
				if r := rc.do("BGSAVE"); r != "+Background saving started\r\n" {
					t.Fatalf("BGSAVE: %q", r)
				}
				<-held
				if r := rc.do("BGSAVE"); r != "-"+errSaveRunning.Error()+"\r\n" {
					t.Fatalf("a second BGSAVE while one runs: %q", r)
				}
				info := infoFields(t, rc, "persistence")
				if info["rdb_bgsave_in_progress"] != "1" {
					t.Fatalf("while the snapshot is written: rdb_bgsave_in_progress %q", info["rdb_bgsave_in_progress"])
				}
				// Writes go on, replacing every key with a longer value, then
				// inserting as many keys again (the index's shards grow) and
				// deleting half of the first ones.
				writeBoth(t, rc, n, "RMOD", "new-value-")
				var batch []byte
				for i := range 2 * n {
					batch = appendCmd(batch, "SET", "x"+strconv.Itoa(i), "v")
				}
				for i := 0; i < n; i += 2 {
					batch = appendCmd(batch, "DEL", "s"+strconv.Itoa(i))
				}
				rc.send(batch)
				for range 2*n + n/2 {
					if r := rc.reply(); r[0] == '-' {
						t.Fatalf("write during the snapshot: %q", r)
					}
				}
				info = infoFields(t, rc, "persistence")
				cow, hasCOW := info["current_cow_size"]
				if alloc == AllocPool {
					if c, err := strconv.ParseInt(cow, 10, 64); !hasCOW || err != nil || c < 2*n*16 {
						t.Errorf("pool: current_cow_size %q while %d records were replaced", cow, 2*n)
					}
				} else if hasCOW {
					t.Errorf("go allocator: current_cow_size %q: its cost is not known", cow)
				}
				close(hold)
				waitFor(t, "the snapshot written", func() bool {
					f := infoFields(t, rc, "persistence")
					return f["rdb_saves"] == "1" && f["rdb_bgsave_in_progress"] == "0"
				})
				info = infoFields(t, rc, "persistence")
				if info["rdb_last_bgsave_status"] != "ok" {
					t.Fatalf("rdb_last_bgsave_status %q", info["rdb_last_bgsave_status"])
				}
				if _, ok := info["rdb_last_cow_size"]; ok != (alloc == AllocPool) {
					t.Errorf("rdb_last_cow_size %q (reported: %v)", info["rdb_last_cow_size"], ok)
				}
				if _, err := strconv.ParseInt(infoFields(t, rc, "stats")["latest_fork_usec"], 10, 64); err != nil {
					t.Errorf("latest_fork_usec: %v", err)
				}
				got := map[string]string{}
				if _, err := scanBase(filepath.Join(dir, DumpName), resp.Limits{}, func(cmd resp.Command, _ int64) error {
					got[string(cmd.Args[1])] = string(cmd.Args[2])
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(got) != 2*n {
					t.Fatalf("the dump holds %d keys, want %d", len(got), 2*n)
				}
				for i := range n {
					k := strconv.Itoa(i)
					for _, key := range []string{"s" + k, "r" + k} {
						if got[key] != "old-"+k {
							t.Fatalf("the dump's %s is %q, want the value before BGSAVE, %q", key, got[key], "old-"+k)
						}
					}
				}
			})
		}
	}
}

// writeBoth writes keys s0… of the strings (SET) and r0… of the ordered
// engine (with its write command cmd), each the value prefix and its
// number, in one pipeline.
func writeBoth(t *testing.T, rc *rawConn, n int, cmd, prefix string) {
	t.Helper()
	var batch []byte
	for i := range n {
		k := strconv.Itoa(i)
		batch = appendCmd(batch, "SET", "s"+k, prefix+k)
		batch = appendCmd(batch, cmd, "r"+k, prefix+k)
	}
	rc.send(batch)
	for range 2 * n {
		if r := rc.reply(); r != "+OK\r\n" {
			t.Fatalf("%s %s…: %q", cmd, prefix, r)
		}
	}
}

// TestBGSaveSyntax: BGSAVE takes SCHEDULE alone; LASTSAVE is a time.
func TestBGSaveSyntax(t *testing.T) {
	srv := startServer(t, Config{Dir: t.TempDir()})
	rc := dialRaw(t, srv)
	if r := rc.do("BGSAVE", "NOW"); r != "-ERR syntax error\r\n" {
		t.Errorf("BGSAVE NOW: %q", r)
	}
	if r := rc.do("BGSAVE", "SCHEDULE", "X"); r[0] != '-' {
		t.Errorf("BGSAVE SCHEDULE X: %q", r)
	}
	before := rc.do("LASTSAVE")
	if r := rc.do("BGSAVE", "schedule"); r != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE SCHEDULE: %q", r)
	}
	waitFor(t, "the snapshot written", func() bool { return infoFields(t, rc, "persistence")["rdb_saves"] == "1" })
	if after := rc.do("LASTSAVE"); after < before || after[0] != ':' {
		t.Errorf("LASTSAVE %q, then %q after a save", before, after)
	}
}

// infoFields reads an INFO section's fields.
func infoFields(t testing.TB, rc *rawConn, section string) map[string]string {
	t.Helper()
	r := rc.do("INFO", section)
	m := map[string]string{}
	for _, line := range strings.Split(r, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	if len(m) == 0 {
		t.Fatalf("INFO %s: %q", section, r)
	}
	return m
}

// TestRewriteCost: a log rewrite reports what its snapshot cost, as a
// BGSAVE does: the clients' pause (latest_fork_usec) and, with the pool
// allocator, the records it kept alive (aof_last_cow_size).
func TestRewriteCost(t *testing.T) {
	srv := startPersistent(t, t.TempDir(), PersistNo)
	rc := dialRaw(t, srv)
	for i := range 100 {
		rc.do("SET", "k"+strconv.Itoa(i), "v")
	}
	if _, ok := infoFields(t, rc, "persistence")["aof_last_cow_size"]; ok {
		t.Error("aof_last_cow_size before any rewrite")
	}
	if r := rc.do("BGREWRITEAOF"); r[0] != '+' {
		t.Fatalf("BGREWRITEAOF: %q", r)
	}
	waitFor(t, "the rewrite done", func() bool {
		f := infoFields(t, rc, "persistence")
		return f["aof_rewrites"] == "1" && f["aof_rewrite_in_progress"] == "0"
	})
	if c, err := strconv.ParseInt(infoFields(t, rc, "persistence")["aof_last_cow_size"], 10, 64); err != nil || c <= 0 {
		t.Errorf("aof_last_cow_size after a rewrite: %d, %v (its bitmap at least)", c, err)
	}
	if _, err := strconv.ParseInt(infoFields(t, rc, "stats")["latest_fork_usec"], 10, 64); err != nil {
		t.Errorf("latest_fork_usec: %v", err)
	}
}
