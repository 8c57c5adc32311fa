package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestServeCrash kills "kvbench serve" with SIGKILL at a random moment while
// a client writes, restarts it on the same log, and checks that every
// acknowledged write is there: under every policy a write's record reaches
// the kernel before its reply, so a killed process loses nothing it
// acknowledged.
func TestServeCrash(t *testing.T) {
	for _, policy := range []string{"always", "everysec", "no"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(uint64(len(policy)), 7))
			var ackedIncrs, sentIncrs int64
			acked := map[string]string{}
			for round := range 20 {
				p := startServe(t, "--persist", policy, "--dir", dir)
				rdb := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, PoolSize: 1})
				c := context.Background()

				// What the previous rounds acknowledged survived the kill.
				got, err := rdb.Get(c, "counter").Int64()
				if err != nil && err != redis.Nil {
					t.Fatalf("round %d: GET counter: %v", round, err)
				}
				if got < ackedIncrs || got > sentIncrs {
					t.Fatalf("round %d: counter %d, but %d INCRs were acknowledged and %d sent", round, got, ackedIncrs, sentIncrs)
				}
				ackedIncrs, sentIncrs = got, got
				for k, v := range acked {
					if g, err := rdb.Get(c, k).Result(); err != nil || g != v {
						t.Fatalf("round %d: acknowledged %s = %q lost (got %q, %v)", round, k, v, g, err)
					}
				}

				// Write until the kill.
				var mu sync.Mutex
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						pipe := rdb.Pipeline()
						key := fmt.Sprintf("k:%d:%d", round, i)
						incr := pipe.Incr(c, "counter")
						set := pipe.Set(c, key, i, 0)
						mu.Lock()
						sentIncrs++
						mu.Unlock()
						pipe.Exec(c)
						mu.Lock()
						if incr.Err() == nil {
							ackedIncrs++
						}
						if set.Err() == nil {
							acked[key] = fmt.Sprint(i)
						}
						mu.Unlock()
						if incr.Err() != nil || set.Err() != nil {
							return
						}
					}
				}()
				time.Sleep(time.Duration(5+rng.IntN(60)) * time.Millisecond)
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait(t, time.Minute)
				wg.Wait()
				rdb.Close()
			}
			if ackedIncrs == 0 {
				t.Fatal("no write was ever acknowledged: the test tested nothing")
			}
		})
	}
}

// A log damaged in the middle stops "kvbench serve" with the file, the
// offset and the repair command; --repair --yes cuts it and the server
// starts again.
func TestServeDamagedLog(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "--persist", "no", "--dir", dir)
	rdb := redis.NewClient(&redis.Options{Addr: p.addr})
	for i := range 10 {
		rdb.Set(context.Background(), fmt.Sprint("k", i), i, 0)
	}
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t, time.Minute)

	log := filepath.Join(dir, "appendonly.aof.1.incr.aof")
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	os.WriteFile(log, data, 0o644)

	out, err := exec.Command(kvbenchBin, serveArgs("--port", "0", "--persist", "no", "--dir", dir)...).CombinedOutput()
	if err == nil {
		t.Fatalf("started on a damaged log:\n%s", out)
	}
	for _, want := range []string{log, "offset", "kvbench serve --repair --dir " + dir} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error output lacks %q:\n%s", want, out)
		}
	}
	repair := exec.Command(kvbenchBin, "serve", "--repair", "--dir", dir)
	repair.Stdin = strings.NewReader("no\n")
	if out, err := repair.CombinedOutput(); err == nil || !strings.Contains(string(out), "cancelled") {
		t.Fatalf("repair answered no: %v\n%s", err, out)
	}
	repair = exec.Command(kvbenchBin, "serve", "--repair", "--dir", dir)
	repair.Stdin = strings.NewReader("yes\n")
	if out, err := repair.CombinedOutput(); err != nil || !strings.Contains(string(out), "repaired") {
		t.Fatalf("repair answered yes: %v\n%s", err, out)
	}
	p = startServe(t, "--persist", "no", "--dir", dir)
	rdb = redis.NewClient(&redis.Options{Addr: p.addr})
	defer rdb.Close()
	if n := rdb.DBSize(context.Background()).Val(); n < 1 || n >= 10 {
		t.Fatalf("%d keys after the repair, want the records before the damage", n)
	}
}

// TestServeAlwaysLogDamage: after kill -9 an always log is as long as the
// zeros filled ahead of its records. A byte flipped in those zeros is
// reported where it is, not as a malformed record where the records end;
// a byte flipped in a record is reported at that record. Repair says how
// much of what it drops is zeros, and keeps the records before the damage.
func TestServeAlwaysLogDamage(t *testing.T) {
	crashed := t.TempDir()
	p := startServe(t, "--persist", "always", "--dir", crashed)
	rdb := redis.NewClient(&redis.Options{Addr: p.addr})
	for i := range 10 {
		if err := rdb.Set(context.Background(), fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t, time.Minute)
	const name = "appendonly.aof.1.incr.aof"
	data, err := os.ReadFile(filepath.Join(crashed, name))
	if err != nil {
		t.Fatal(err)
	}
	recordsEnd := bytes.LastIndexFunc(data, func(r rune) bool { return r != 0 }) + 1
	if len(data) < 2<<20+1 || recordsEnd < 10*20 || recordsEnd > 10*60 {
		t.Fatalf("the crashed log is %d bytes, its records end at %d: want 10 records and the zeros after them", len(data), recordsEnd)
	}
	// recordAt is the offset of the record that holds byte i.
	recordAt := func(i int) int { return bytes.LastIndex(data[:i+1], []byte("\r\n*")) + 2 }

	for _, tt := range []struct {
		name     string
		flip     int
		damageAt int // the offset reported
		cut      int // where repair cuts
		say      []string
	}{
		{"in the zeros", 2 << 20, 2 << 20, recordsEnd, []string{
			fmt.Sprintf("offset %d: non-zero data in the zero-filled space after the records (byte 0x01, after %d zero bytes from offset %d", 2<<20, 2<<20-recordsEnd, recordsEnd)}},
		{"in a record", recordAt(recordsEnd/2) + 18, recordAt(recordsEnd / 2), recordAt(recordsEnd / 2), []string{"checksum mismatch"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			damaged := bytes.Clone(data)
			damaged[tt.flip] ^= 0x01
			if err := os.WriteFile(filepath.Join(dir, name), damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			manifest, _ := os.ReadFile(filepath.Join(crashed, "appendonly.aof.manifest"))
			if err := os.WriteFile(filepath.Join(dir, "appendonly.aof.manifest"), manifest, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(kvbenchBin, "serve", "--port", "0", "--persist", "always", "--dir", dir).CombinedOutput()
			if err == nil {
				t.Fatalf("started on a damaged log:\n%s", out)
			}
			for _, want := range append(tt.say, fmt.Sprintf("%s: offset %d: ", filepath.Join(dir, name), tt.damageAt)) {
				if !strings.Contains(string(out), want) {
					t.Errorf("start-up says\n%s\nwant %q", out, want)
				}
			}
			if tt.damageAt > recordsEnd && strings.Contains(string(out), "inline") {
				t.Errorf("the zeros read as a request:\n%s", out)
			}
			repair := exec.Command(kvbenchBin, "serve", "--repair", "--yes", "--dir", dir)
			out, err = repair.CombinedOutput()
			zeros := len(data) - recordsEnd
			if tt.damageAt > recordsEnd {
				zeros-- // the flipped byte is no zero
			}
			want := fmt.Sprintf("Repair cuts the file at offset %d, where they end, dropping %d bytes: %d of them zeros filled ahead of the records (preallocated space, no data), %d from the damage on.",
				tt.cut, len(data)-tt.cut, zeros, len(data)-tt.cut-zeros)
			if err != nil || !strings.Contains(string(out), want) {
				t.Fatalf("repair: %v\n%s\nwant %q", err, out, want)
			}
			if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() != int64(tt.cut) {
				t.Fatalf("after the repair: %v, %v bytes; want %d", err, st.Size(), tt.cut)
			}
			// The records before the damage are kept, each a key.
			kept := bytes.Count(data[:tt.cut], []byte("\r\n#")) // one checksum line a record
			if !strings.Contains(string(out), fmt.Sprintf("its %d valid records kept", kept)) {
				t.Errorf("repair does not say it kept %d records:\n%s", kept, out)
			}
			p := startServe(t, "--persist", "always", "--dir", dir)
			rdb := redis.NewClient(&redis.Options{Addr: p.addr})
			defer rdb.Close()
			if n := rdb.DBSize(context.Background()).Val(); n != int64(kept) {
				t.Errorf("%d keys after the repair, want the %d records before the damage", n, kept)
			}
		})
	}
}

// A log whose manifest is gone: "kvbench serve" refuses to start, naming
// the files and the repair, and changes nothing; --repair rebuilds the
// manifest and every key comes back.
func TestServeMissingManifest(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "--persist", "everysec", "--dir", dir)
	rdb := redis.NewClient(&redis.Options{Addr: p.addr})
	for i := range 100 {
		if err := rdb.Set(context.Background(), fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t, time.Minute)
	incr := filepath.Join(dir, "appendonly.aof.1.incr.aof")
	before, err := os.Stat(incr)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "appendonly.aof.manifest"))

	out, err := exec.Command(kvbenchBin, serveArgs("--port", "0", "--persist", "everysec", "--dir", dir)...).CombinedOutput()
	if err == nil {
		t.Fatalf("started without its manifest:\n%s", out)
	}
	for _, want := range []string{"appendonly.aof.manifest", "missing", "appendonly.aof.1.incr.aof (", "rebuild the manifest", "kvbench serve --repair --dir " + dir} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error output lacks %q:\n%s", want, out)
		}
	}
	if after, err := os.Stat(incr); err != nil || after.Size() != before.Size() {
		t.Fatalf("the refused start changed %s: %d bytes, then %v", incr, before.Size(), after)
	}
	repair := exec.Command(kvbenchBin, "serve", "--repair", "--yes", "--dir", dir)
	if out, err := repair.CombinedOutput(); err != nil || !strings.Contains(string(out), "repaired: wrote appendonly.aof.manifest") {
		t.Fatalf("repair: %v\n%s", err, out)
	}
	p = startServe(t, "--persist", "everysec", "--dir", dir)
	rdb = redis.NewClient(&redis.Options{Addr: p.addr})
	defer rdb.Close()
	if n := rdb.DBSize(context.Background()).Val(); n != 100 {
		t.Fatalf("%d keys after rebuilding the manifest, want 100", n)
	}
}
