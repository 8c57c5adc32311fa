package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/redis/go-redis/v9"
)

// monitorProcess is "redis-cli -p PORT MONITOR" writing to a file.
type monitorProcess struct {
	cmd  *exec.Cmd
	path string
}

// startMonitor runs redis-cli MONITOR against addr, its output in a file
// of dir, and waits for MONITOR's "OK".
func startMonitor(t *testing.T, addr, dir string) *monitorProcess {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not on PATH")
	}
	host, port, _ := strings.Cut(addr, ":")
	m := &monitorProcess{path: filepath.Join(dir, "monitor-"+port+".txt")}
	out, err := os.Create(m.path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	m.cmd = exec.Command(cli, "-h", host, "-p", port, "MONITOR")
	m.cmd.Stdout, m.cmd.Stderr = out, out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	m.waitLines(t, 1)
	return m
}

// waitLines waits until the capture holds n lines.
func (m *monitorProcess) waitLines(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		b, _ := os.ReadFile(m.path)
		if strings.Count(string(b), "\n") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("MONITOR capture %s: %d lines after a minute, want %d:\n%s", m.path, strings.Count(string(b), "\n"), n, b)
		}
		time.Sleep(10 * time.Millisecond) // bounded poll of redis-cli's output
	}
}

func (m *monitorProcess) stop() {
	if m.cmd.ProcessState == nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}

// sendAll sends each command on one new connection to addr, one at a
// time, and fails the test on an error reply.
func sendAll(t *testing.T, addr string, cmds [][]string) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(nc)
	for _, c := range cmds {
		if _, err := nc.Write(resp.AppendCommandString(nil, c...)); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil || strings.HasPrefix(line, "-") {
			t.Fatalf("%q: %q %v", c, line, err)
		}
		if line[0] == '$' && line != "$-1\r\n" {
			n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
			if _, err := rd.Discard(n + 2); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// clientSequences parses a MONITOR capture and returns each client's
// commands, RESP-encoded, in order, sorted.
func clientSequences(t *testing.T, path string) []string {
	t.Helper()
	cp, err := replay.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Unparsable != 0 || cp.Format != replay.Monitor {
		t.Fatalf("%s: %s, %d unparsable: %v", path, cp.Format, cp.Unparsable, cp.Errors)
	}
	seqs := make([]string, len(cp.Clients))
	for k, s := range cp.Assign(len(cp.Clients)) {
		for _, i := range s {
			seqs[k] += string(cp.Command(int(i)))
		}
	}
	slices.Sort(seqs)
	return seqs
}

// commandCalls returns INFO commandstats' calls per command.
func commandCalls(t *testing.T, rc *redis.Client) map[string]int {
	t.Helper()
	info, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, l := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		calls[strings.ToUpper(name)] = n
	}
	return calls
}

// replayDoc is the part of bench's JSON a replay test reads.
type replayDoc struct {
	Requests int64         `json:"requests"`
	Replay   *replay.Stats `json:"replay"`
	Commands []struct {
		Name     string `json:"command"`
		Requests int64  `json:"requests"`
	} `json:"commands"`
}

func decodeReplayDoc(t *testing.T, stdout string) replayDoc {
	t.Helper()
	var d replayDoc
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout)
	}
	if d.Replay == nil {
		t.Fatalf("no replay object:\n%s", stdout)
	}
	return d
}

// TestBenchReplayMonitorCapture: commands sent by two clients to one
// redis-server are captured by a real "redis-cli MONITOR", and
// "kvbench bench --replay" of the capture makes a second, fresh server
// receive the same commands: its own MONITOR capture holds the same
// commands, byte for byte and in each client's order; its commandstats
// count them; and its data is what they wrote (the binary value byte for
// byte). The JSON counts the capture's lines and names every command.
func TestBenchReplayMonitorCapture(t *testing.T) {
	src := testutil.StartRedis(t)
	dir := t.TempDir()
	mon := startMonitor(t, src.Addr, dir)
	binary := "\x00\xff\r\n\"\\ x\t\x7f end"
	a := [][]string{
		{"SET", "k:ex", "v", "EX", "1000"},
		{"HSET", "h", "f1", "v1", "f2", "with space", "f3", `quo"te`},
		{"LPUSH", "l", "a", "b", "c"},
		{"INCR", "counter"},
		{"SET", "bin", binary},
		{"MSET", "m1", "1", "m2", "2", "m3", "3"},
		{"INCR", "counter"},
		{"DEL", "m3"},
	}
	b := [][]string{
		{"SET", "b:1", "x"},
		{"GET", "b:1"},
		{"incr", "counter2"},
		{"DEL", "b:1"},
	}
	sendAll(t, src.Addr, a)
	sendAll(t, src.Addr, b)
	mon.waitLines(t, 1+len(a)+len(b))
	mon.stop()

	dst := testutil.StartRedis(t)
	check := startMonitor(t, dst.Addr, dir)
	_, port, _ := strings.Cut(dst.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "-p", port, "--replay", mon.path, "-c", "2", "-P", "4", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	check.waitLines(t, 1+len(a)+len(b))
	check.stop()
	if got, want := clientSequences(t, check.path), clientSequences(t, mon.path); !slices.Equal(got, want) {
		t.Errorf("the replayed server received\n%q\nwant\n%q", got, want)
	}

	d := decodeReplayDoc(t, stdout)
	if st := *d.Replay; st.Format != replay.Monitor || st.Lines != 13 || st.Commands != 12 || st.Skipped != 0 || st.Unparsable != 0 || st.Clients != 2 || st.File != mon.path {
		t.Errorf("replay %+v", st)
	}
	perName := map[string]int64{}
	for _, c := range d.Commands {
		perName[c.Name] = c.Requests
	}
	want := map[string]int64{"SET": 3, "HSET": 1, "LPUSH": 1, "INCR": 3, "MSET": 1, "DEL": 2, "GET": 1}
	if d.Requests != 12 || !maps.Equal(perName, want) {
		t.Errorf("requests %d, per command %v, want 12 and %v", d.Requests, perName, want)
	}

	rc := redis.NewClient(&redis.Options{Addr: dst.Addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	calls := commandCalls(t, rc)
	for name, n := range want {
		if calls[name] != int(n) {
			t.Errorf("commandstats %s: %d calls, want %d (all: %v)", name, calls[name], n, calls)
		}
	}
	ctx := context.Background()
	if v, err := rc.Get(ctx, "bin").Result(); err != nil || v != binary {
		t.Errorf("bin: %q %v, want %q", v, err, binary)
	}
	if h, err := rc.HGetAll(ctx, "h").Result(); err != nil || !maps.Equal(h, map[string]string{"f1": "v1", "f2": "with space", "f3": `quo"te`}) {
		t.Errorf("h: %v %v", h, err)
	}
	if ttl, err := rc.TTL(ctx, "k:ex").Result(); err != nil || ttl <= 0 || ttl > 1000*time.Second {
		t.Errorf("k:ex TTL %v %v, want the capture's EX 1000", ttl, err)
	}
	if l, err := rc.LRange(ctx, "l", 0, -1).Result(); err != nil || !slices.Equal(l, []string{"c", "b", "a"}) {
		t.Errorf("l: %v %v", l, err)
	}
	if n, err := rc.Get(ctx, "counter").Int(); err != nil || n != 2 {
		t.Errorf("counter %d %v, want 2", n, err)
	}
	if n, err := rc.Exists(ctx, "m1", "m2", "m3", "b:1").Result(); err != nil || n != 2 {
		t.Errorf("m1, m2 exist, m3 and b:1 deleted: %d %v", n, err)
	}
}

// TestBenchReplayInline: a file of inline commands, with each quoting
// form, is replayed in its order on one connection; the text report
// names the format and each command.
func TestBenchReplayInline(t *testing.T) {
	r := testutil.StartRedis(t)
	path := filepath.Join(t.TempDir(), "cmds.txt")
	text := `SET plain value
SET dq "two words \"quoted\" \x00\xff"
SET sq 'literal \n "kept"'
HSET h a 1 b '2 2'

RPUSH l x
rpush l y
GET plain
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "-p", port, "--replay", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"replay: " + path + " (inline): 8 lines, 7 commands, 0 skipped, 0 unparsable", "requests: 7", "RPUSH", "HSET"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	ctx := context.Background()
	for k, want := range map[string]string{"plain": "value", "dq": "two words \"quoted\" \x00\xff", "sq": `literal \n "kept"`} {
		if v, err := rc.Get(ctx, k).Result(); err != nil || v != want {
			t.Errorf("%s: %q %v, want %q", k, v, err, want)
		}
	}
	if l, err := rc.LRange(ctx, "l", 0, -1).Result(); err != nil || !slices.Equal(l, []string{"x", "y"}) {
		t.Errorf("l: %v %v, want the file's order", l, err)
	}
	if v, err := rc.HGet(ctx, "h", "b").Result(); err != nil || v != "2 2" {
		t.Errorf("h b: %q %v", v, err)
	}
}

// TestBenchReplayBadLines: unparsable lines are counted in the text and
// JSON reports, and the first few named on stderr as FILE:LINE: reason;
// the others are sent.
func TestBenchReplayBadLines(t *testing.T) {
	r := testutil.StartRedis(t)
	path := filepath.Join(t.TempDir(), "bad.txt")
	var b strings.Builder
	b.WriteString("OK\n")
	for i := range 10 {
		fmt.Fprintf(&b, "1733412345.%06d [0 127.0.0.1:%d] \"INCR\" \"n\"\n", i, 40000+i%3)
		if i < 7 {
			fmt.Fprintf(&b, "1733412345.%06d [0 127.0.0.1:1] \"SET\" \"unterminated\n", i)
		}
	}
	b.WriteString("1733412346.000000 [0 lua] \"INCR\" \"n\"\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(r.Addr, ":")
	code, stdout, stderr := execute(t, "bench", "-p", port, "--replay", path, "-c", "3", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := ""
	for _, line := range []int{3, 5, 7, 9, 11} {
		want += fmt.Sprintf("%s:%d: unbalanced quotes\n", path, line)
	}
	want += path + ": 2 more unparsable lines\n"
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr:\n%s\nwant it to start\n%s", stderr, want)
	}
	d := decodeReplayDoc(t, stdout)
	if st := *d.Replay; st.Lines != 19 || st.Commands != 10 || st.Skipped != 1 || st.Unparsable != 7 || st.Clients != 3 {
		t.Errorf("replay %+v", st)
	}
	rc := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	if n, err := rc.Get(context.Background(), "n").Int(); err != nil || n != 10 {
		t.Errorf("n = %d %v, want the 10 INCRs and not the script's", n, err)
	}
}

// TestBenchReplayUsageErrors: what a replay cannot do is a usage error
// (exit 2) naming the flag, and the file where it is at fault.
func TestBenchReplayUsageErrors(t *testing.T) {
	dir := t.TempDir()
	inline := filepath.Join(dir, "inline.txt")
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(inline, []byte("SET a 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("OK\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay", inline, "--replay-speed", "1"}, "--replay-speed 1: " + inline + " holds inline commands"},
		{[]string{"--replay", inline, "--mode", "set"}, "--replay and --mode cannot be used together"},
		{[]string{"--replay", inline, "--rate", "1000"}, "--replay and --rate cannot be used together"},
		{[]string{"--replay", inline, "--replicas", "127.0.0.1:1"}, "--replay and --replicas cannot be used together"},
		{[]string{"--replay", inline, "--connections-step", "2"}, "--replay and --connections-step cannot be used together"},
		{[]string{"--replay", inline, "--", "SET", "a", "b"}, `--replay and a command to send ("SET a b", after the flags) cannot be used together`},
		{[]string{"--replay", inline, "--replay-loops", "0"}, "--replay-loops 0: want >= 1"},
		{[]string{"--replay", inline, "--replay-speed", "-1"}, "--replay-speed -1: want >= 0"},
		{[]string{"--replay-speed", "2"}, "--replay-speed needs --replay"},
		{[]string{"--replay", filepath.Join(dir, "missing.txt")}, "--replay: open " + filepath.Join(dir, "missing.txt")},
		{[]string{"--replay", empty}, "--replay: " + empty + ": no command to replay (2 lines, 0 skipped, 0 unparsable)"},
	} {
		code, _, stderr := execute(t, append([]string{"bench"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("bench %s: exit %d, %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestBenchReplayOptions: the replay flags reach the load generator's
// Config; without --requests the whole file is sent.
func TestBenchReplayOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.txt")
	if err := os.WriteFile(path, []byte("OK\n1733412345.1 [0 127.0.0.1:1] \"SET\" \"a\" \"1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := benchOptionsOf(t, "--replay", path, "--replay-loops", "3", "--replay-speed", "2.5", "-n", "2").Config
	if c.Replay == nil || c.Replay.Len() != 1 || c.ReplayLoops != 3 || c.ReplaySpeed != 2.5 || c.Requests != 2 {
		t.Errorf("options %+v", c)
	}
	if c := benchOptionsOf(t, "--replay", path).Config; c.Requests != 0 || c.ReplayLoops != 1 {
		t.Errorf("requests %d, loops %d: want 0 (the whole file) and 1", c.Requests, c.ReplayLoops)
	}
}
