package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestServeFaultTable measures what "kvbench serve" does under each fault
// of the table in docs/serve.md, as an operator would cause it, on real
// processes, and prints the table (markdown) to the file that
// KVBENCH_FAULT_TABLE names. It is opt-in (make fault-table): it takes a
// few minutes, opens 12,000 connections, and its full-disk and read-only
// rows mount small tmpfs file systems, which needs root (they are marked
// so without it).
func TestServeFaultTable(t *testing.T) {
	out := os.Getenv("KVBENCH_FAULT_TABLE")
	if out == "" {
		t.Skip("KVBENCH_FAULT_TABLE=FILE measures the fault table of docs/serve.md into FILE (make fault-table)")
	}
	type row struct{ fault, did, lost, message string }
	rows := []row{}
	add := func(fault, did, lost, message string) {
		t.Logf("%s | %s | %s | %s", fault, did, lost, message)
		rows = append(rows, row{fault, did, lost, message})
	}
	c := context.Background()
	const keys = 96000
	val := strings.Repeat("v", 100)

	// A log of 96,000 keys, written under everysec, the server killed.
	killedLog := func(t *testing.T) (dir string, acked int) {
		dir = t.TempDir()
		p := startServe(t, "--persist", "everysec", "--dir", dir)
		acked = writeKeys(t, p.addr, "k", 0, keys, val)
		time.Sleep(1500 * time.Millisecond) // an everysec fsync, and its record in the manifest
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.wait(t, time.Minute)
		return dir, acked
	}
	incr1 := "appendonly.aof.1.incr.aof"
	manifest := "appendonly.aof.manifest"

	t.Run("missing manifest", func(t *testing.T) {
		dir, acked := killedLog(t)
		size := fileSize(t, filepath.Join(dir, incr1))
		os.Remove(filepath.Join(dir, manifest))
		code, msg := serveFails(t, "--persist", "everysec", "--dir", dir)
		after := fileSize(t, filepath.Join(dir, incr1))
		repair(t, dir)
		n := keysAfterStart(t, "everysec", dir, acked)
		add("missing manifest (increment file of 14 MB beside it)",
			fmt.Sprintf("refused to start (exit %d); %s left at %d bytes (was %d); `--repair` rebuilt the manifest from the files: %d keys back", code, incr1, after, size, n),
			fmt.Sprint(acked-n), msg)
	})

	t.Run("missing increment file", func(t *testing.T) {
		dir := t.TempDir()
		p := startServe(t, "--persist", "everysec", "--dir", dir)
		acked := writeKeys(t, p.addr, "k", 0, keys/2, val)
		rdb := redis.NewClient(&redis.Options{Addr: p.addr})
		if err := rdb.Do(c, "SAVE").Err(); err != nil {
			t.Fatal(err)
		}
		rdb.Close()
		acked += writeKeys(t, p.addr, "k", keys/2, keys, val)
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, time.Minute)
		m, _ := os.ReadFile(filepath.Join(dir, manifest))
		incr := regexp.MustCompile(`appendonly\.aof\.\d+\.incr\.aof`).FindString(string(m))
		os.Remove(filepath.Join(dir, incr))
		code, msg := serveFails(t, "--persist", "everysec", "--dir", dir)
		repair(t, dir)
		n := keysAfterStart(t, "everysec", dir, acked)
		add("missing increment file (deleted after a rewrite: base + increment of 48,000 keys each)",
			fmt.Sprintf("refused to start (exit %d), naming it; `--repair` dropped it from the manifest: the base's %d keys load", code, n),
			fmt.Sprintf("%d: the deleted file's, none more", acked-n), msg)
	})

	t.Run("log cut at a record boundary mid-file", func(t *testing.T) {
		dir, acked := killedLog(t)
		path := filepath.Join(dir, incr1)
		data, _ := os.ReadFile(path)
		cut := recordStart(data, len(data)/2)
		os.Truncate(path, int64(cut))
		code, msg := serveFails(t, "--persist", "everysec", "--dir", dir)
		repair(t, dir)
		n := keysAfterStart(t, "everysec", dir, acked)
		add("log cut at a record boundary mid-file (half of it gone)",
			fmt.Sprintf("refused to start (exit %d): the manifest says more was fsynced; `--repair` kept the %d records before the cut", code, n),
			fmt.Sprintf("0 by the server; %d cut off by the fault", acked-n), msg)
	})

	t.Run("torn last record", func(t *testing.T) {
		dir, acked := killedLog(t)
		path := filepath.Join(dir, incr1)
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString("*3\r\n$3\r\nSET\r\n$6\r\nunackd\r\n$100\r\nvvvv") // a write the crash tore: never acknowledged
		f.Close()
		p := startServe(t, "--persist", "everysec", "--dir", dir)
		n := present(t, p.addr, acked)
		warn := firstLine(p.log.String(), "cut short")
		add("torn last record (half a record after a kill -9)",
			fmt.Sprintf("started; dropped the torn record with a warning; %d keys", n), fmt.Sprint(acked-n), warn)
	})

	t.Run("flipped byte", func(t *testing.T) {
		dir, acked := killedLog(t)
		path := filepath.Join(dir, incr1)
		data, _ := os.ReadFile(path)
		data[len(data)/2] ^= 0x01
		os.WriteFile(path, data, 0o644)
		code, msg := serveFails(t, "--persist", "everysec", "--dir", dir)
		repair(t, dir)
		n := keysAfterStart(t, "everysec", dir, acked)
		add("flipped byte in the middle of the log",
			fmt.Sprintf("refused to start (exit %d) with the file, the offset and `--repair`; repair kept the %d records before it", code, n),
			fmt.Sprintf("0 by the server; %d after the damage, dropped by --repair", acked-n), msg)
	})

	t.Run("full disk, then 10% freed", func(t *testing.T) {
		dir, ok := mountTmpfs(t, "24m")
		if !ok {
			add("full disk, then 10% freed", "not measured: mounting a tmpfs needs root", "", "")
			return
		}
		filler := filepath.Join(dir, "filler")
		os.WriteFile(filler, make([]byte, 6<<20), 0o644)
		p := startServe(t, "--persist", "everysec", "--dir", dir)
		acked := writeKeys(t, p.addr, "k", 0, 10*keys, val)
		rdb := redis.NewClient(&redis.Options{Addr: p.addr})
		defer rdb.Close()
		refused := rdb.Set(c, "refused", "x", 0).Err()
		log := fileSize(t, filepath.Join(dir, incr1))
		needs := infoValue(t, rdb, "persistence", "aof_rewrite_needs_bytes")
		freed := log / 10
		os.Truncate(filler, 6<<20-freed)
		began := time.Now()
		for rdb.Set(c, "after", "y", 0).Err() != nil {
			if time.Since(began) > 30*time.Second {
				t.Fatal("writes not accepted 30 s after space was freed")
			}
			time.Sleep(10 * time.Millisecond)
		}
		resumed := time.Since(began)
		rewrites := infoValue(t, rdb, "persistence", "aof_rewrites")
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, time.Minute)
		n := keysAfterStart(t, "everysec", dir, acked)
		add("full disk (a 24 MB tmpfs), then 10% of the log's size freed",
			fmt.Sprintf("refused writes with MISCONF after %d acknowledged (log %d bytes; INFO aof_rewrite_needs_bytes:%s); %d bytes freed: writes accepted %v later, through %s rewrites; after a restart %d of the acknowledged keys are there",
				acked, log, needs, freed, resumed.Round(time.Millisecond), rewrites, n),
			fmt.Sprint(acked-n), strings.TrimSpace(fmt.Sprint(refused)))
	})

	t.Run("read-only directory", func(t *testing.T) {
		dir, ok := mountTmpfs(t, "1m", "ro")
		if !ok {
			add("read-only directory", "not measured: mounting a tmpfs needs root", "", "")
			return
		}
		code, msg := serveFails(t, "--persist", "everysec", "--dir", dir)
		add("read-only directory (a tmpfs mounted ro)", fmt.Sprintf("refused to start (exit %d), saying why; wrote nothing", code), "0 (nothing acknowledged)", msg)
	})

	t.Run("maxmemory reached", func(t *testing.T) {
		p := startServe(t, "--maxmemory", "64mb")
		acked := writeKeys(t, p.addr, "k", 0, 10*keys, strings.Repeat("v", 1000))
		rdb := redis.NewClient(&redis.Options{Addr: p.addr})
		defer rdb.Close()
		refused := rdb.Set(c, "refused", "x", 0).Err()
		used := infoValue(t, rdb, "memory", "used_memory")
		get := rdb.Get(c, "k0").Err()
		n := present(t, p.addr, acked)
		add("maxmemory reached (--maxmemory 64mb, 1 KB values)",
			fmt.Sprintf("accepted %d writes, then refused writes at used_memory %s; GET answered (%v); the %d acknowledged keys there", acked, used, errOr(get, "ok"), n),
			fmt.Sprint(acked-n), strings.TrimSpace(fmt.Sprint(refused)))
	})

	t.Run("10,000 idle connections", func(t *testing.T) {
		p := startServe(t, "--timeout", "3", "--maxclients", "10100")
		conns := make([]net.Conn, 0, 10000)
		defer func() {
			for _, nc := range conns {
				nc.Close()
			}
		}()
		for range 10000 {
			nc, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
			if err != nil {
				t.Fatalf("connection %d: %v", len(conns), err)
			}
			conns = append(conns, nc)
		}
		rdb := redis.NewClient(&redis.Options{Addr: p.addr, PoolSize: 1})
		defer rdb.Close()
		waitUntil(t, "10,000 clients connected", func() bool { return infoValue(t, rdb, "clients", "connected_clients") == "10001" })
		used := infoValue(t, rdb, "memory", "used_memory")
		rss := infoValue(t, rdb, "memory", "used_memory_rss")
		began := time.Now()
		t0 := time.Now()
		setErr := rdb.Set(c, "probe", "v", 0).Err()
		probe := time.Since(t0)
		// The probe client is busy: it asks every 100 ms.
		for {
			if infoValue(t, rdb, "clients", "connected_clients") == "1" {
				break
			}
			if time.Since(began) > 60*time.Second {
				t.Fatal("idle clients still connected after 60 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
		add("10,000 idle connections (--timeout 3)",
			fmt.Sprintf("served another client meanwhile (SET in %v, %v); used_memory %s, RSS %s with them; closed all 10,000 within %v of being counted",
				probe.Round(time.Microsecond), errOr(setErr, "ok"), used, rss, time.Since(began).Round(100*time.Millisecond)),
			"0", "none (closed idle, as Redis's timeout; INFO client_timeout_disconnections)")
	})

	t.Run("pre-AUTH large bulk x2000", func(t *testing.T) {
		p := startServe(t, "--requirepass", "secret", "--maxclients", "10100")
		rdb := redis.NewClient(&redis.Options{Addr: p.addr, Password: "secret", PoolSize: 1})
		defer rdb.Close()
		before := infoValue(t, rdb, "memory", "used_memory")
		replies := map[string]int{}
		conns := make([]net.Conn, 0, 2000)
		for range 2000 {
			nc, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, nc)
			nc.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048576\r\nvvvvvvvv"))
		}
		during := infoValue(t, rdb, "memory", "used_memory")
		closed := 0
		for _, nc := range conns {
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(nc)
			line, _ := br.ReadString('\n')
			replies[strings.TrimSpace(line)]++
			if _, err := br.ReadByte(); err != nil {
				closed++
			}
			nc.Close()
		}
		held := "not held"
		nc, _ := net.Dial("tcp", p.addr)
		nc.Write([]byte("*1\r\n$400000000\r\n"))
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, _ := bufio.NewReader(nc).ReadString('\n'); !strings.Contains(line, "unauthenticated bulk length") {
			held = "answered " + strings.TrimSpace(line)
		}
		nc.Close()
		msg := ""
		for r := range replies {
			msg = r
		}
		add("pre-AUTH large bulk x2,000 (each declares 1 MiB)",
			fmt.Sprintf("each refused at its header and closed (%d of 2000 closed, %d distinct replies); used_memory %s before, %s with the 2,000 connected; a pre-AUTH `$400000000` header: refused at once, %s",
				closed, len(replies), before, during, held),
			"0", msg)
	})

	t.Run("a client that never reads", func(t *testing.T) {
		p := startServe(t)
		rdb := redis.NewClient(&redis.Options{Addr: p.addr})
		defer rdb.Close()
		if err := rdb.Set(c, "big", strings.Repeat("x", 1<<20), 0).Err(); err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		var req bytes.Buffer
		for range 1000 {
			req.WriteString("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
		}
		began := time.Now()
		go nc.Write(req.Bytes()) // and never read
		waitUntil(t, "the client closed", func() bool {
			return infoValue(t, rdb, "stats", "client_output_buffer_limit_disconnections") == "1"
		})
		rss := infoValue(t, rdb, "memory", "used_memory_rss")
		add("a client that never reads (1,000 pipelined GETs of a 1 MB value)",
			fmt.Sprintf("closed it at the 512 MiB output buffer limit, %v after its requests; RSS then %s; the others served",
				time.Since(began).Round(time.Millisecond), rss),
			"0", "none (INFO client_output_buffer_limit_disconnections:1)")
	})

	t.Run("crash states", func(t *testing.T) {
		cmd := exec.Command("go", "test", "-count=1", "-run", "^TestCrashStates$", "-v", "../../kvstore/")
		outb, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("TestCrashStates: %v\n%s", err, outb)
		}
		re := regexp.MustCompile(`(always|everysec): (\d+) operations recorded for (\d+) acknowledged writes; (\d+) distinct crash states loaded \((\d+) refused at start and loaded after --repair\); acknowledged writes lost: (\d+)`)
		var did, lost []string
		for _, m := range re.FindAllStringSubmatch(string(outb), -1) {
			did = append(did, fmt.Sprintf("%s: %s crash states from %s recorded operations (%s refused, then loaded after `--repair`)", m[1], m[4], m[2], m[5]))
			lost = append(lost, m[1]+": "+m[6])
		}
		add("crash states (TestCrashStates: 120 acknowledged writes and a rewrite; each prefix of the unsynced writes, torn within a page, reordered)",
			strings.Join(did, "; "), strings.Join(lost, ", "), "(the loader's: none when loaded; a hole in the unsynced tail refused with its offset)")
	})

	var b strings.Builder
	b.WriteString("| fault | what the server did | acknowledged writes lost | message |\n|---|---|---|---|\n")
	dirs := regexp.MustCompile(`/tmp/(TestServeFaultTable[^/]*/\d+|kvbench-tmpfs-\d+)`)
	for _, r := range rows {
		msg := dirs.ReplaceAllString(strings.ReplaceAll(r.message, "|", "\\|"), "DIR")
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.fault, r.did, r.lost, msg)
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeKeys sets prefix<i> for i in [from, to) in pipelines of 1,000 until
// a write is refused, and returns how many were acknowledged.
func writeKeys(t *testing.T, addr, prefix string, from, to int, val string) int {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	acked := 0
	for i := from; i < to; i += 1000 {
		pipe := rdb.Pipeline()
		cmds := make([]*redis.StatusCmd, 0, 1000)
		for j := i; j < min(i+1000, to); j++ {
			cmds = append(cmds, pipe.Set(context.Background(), prefix+strconv.Itoa(j), val, 0))
		}
		pipe.Exec(context.Background())
		for _, cmd := range cmds {
			if cmd.Err() != nil {
				return acked
			}
			acked++
		}
	}
	return acked
}

// serveFails runs "kvbench serve" expecting it to refuse to start, and
// returns its exit code and the first line of what it said.
func serveFails(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kvbenchBin, serveArgs(append([]string{"--port", "0"}, args...)...)...).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("kvbench serve %v started (or did not run: %v):\n%s", args, err, out)
	}
	return ee.ExitCode(), firstLine(string(out), "")
}

// firstLine is the first line of out that holds want, without the
// "Error: " of the command line and cut at 300 characters.
func firstLine(out, want string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, want) && strings.TrimSpace(line) != "" {
			line = strings.TrimPrefix(strings.TrimSpace(line), "Error: ")
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			return line
		}
	}
	return ""
}

func repair(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command(kvbenchBin, "serve", "--repair", "--yes", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("repair: %v\n%s", err, out)
	}
}

// keysAfterStart starts a server on dir and returns how many of the
// acknowledged keys k0 to k<acked-1> it has.
func keysAfterStart(t *testing.T, policy, dir string, acked int) int {
	t.Helper()
	p := startServe(t, "--persist", policy, "--dir", dir)
	defer func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, time.Minute)
	}()
	return present(t, p.addr, acked)
}

// present counts the keys k0 to k<n-1> that the server at addr has.
func present(t *testing.T, addr string, n int) int {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	found := 0
	for i := 0; i < n; i += 1000 {
		pipe := rdb.Pipeline()
		var cmds []*redis.IntCmd
		for j := i; j < min(i+1000, n); j++ {
			cmds = append(cmds, pipe.Exists(context.Background(), "k"+strconv.Itoa(j)))
		}
		if _, err := pipe.Exec(context.Background()); err != nil {
			t.Fatalf("EXISTS: %v", err)
		}
		for _, c := range cmds {
			found += int(c.Val())
		}
	}
	return found
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// recordStart is the offset of the first record of a log that starts at
// or after at.
func recordStart(data []byte, at int) int {
	i := bytes.Index(data[at:], []byte("\r\n*3\r\n$3\r\nSET"))
	return at + i + 2
}

func infoValue(t *testing.T, rdb *redis.Client, section, name string) string {
	t.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// waitUntil polls cond for up to a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mountTmpfs mounts a tmpfs of size (with more options) on a new
// directory, unmounted at the end of the test; ok is false when that is
// not allowed (not root).
func mountTmpfs(t *testing.T, size string, opts ...string) (string, bool) {
	t.Helper()
	if os.Getuid() != 0 {
		return "", false
	}
	dir, err := os.MkdirTemp("", "kvbench-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	o := strings.Join(append([]string{"size=" + size}, opts...), ",")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", o, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("mount: %v: %s", err, out)
		os.Remove(dir)
		return "", false
	}
	t.Cleanup(func() {
		exec.Command("umount", dir).Run()
		os.Remove(dir)
	})
	return dir, true
}
