package machine

import (
	"context"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

func TestParsePlacement(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	for _, c := range []struct {
		in, want       string
		server, client CPUSet
	}{
		{"off", "off", nil, nil},
		{"", "off", nil, nil},
		{"0", "0", CPUSet{0}, CPUSet{0}},
		{"1,0,0", "0-1", CPUSet{0, 1}, CPUSet{0, 1}},
		{"server=0,client=1", "server=0,client=1", CPUSet{0}, CPUSet{1}},
		{"client=1", "client=1", nil, CPUSet{1}},
		{"server=0,1,client=1", "server=0-1,client=1", CPUSet{0, 1}, CPUSet{1}},
	} {
		p, err := ParsePlacement(c.in)
		if err != nil {
			t.Errorf("ParsePlacement(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(p.Server, c.server) || !slices.Equal(p.Client, c.client) || p.String() != c.want {
			t.Errorf("ParsePlacement(%q) = %+v %q, want server %v client %v %q", c.in, p, p, c.server, c.client, c.want)
		}
		if back, err := ParsePlacement(p.String()); err != nil || back.String() != p.String() {
			t.Errorf("%q does not read back: %v %v", p, back, err)
		}
	}
	for _, bad := range []string{"x", "0-", "2-1", "-1", "server=", "disk=0", "0,server=1", "server=0,server=1", "4096"} {
		if _, err := ParsePlacement(bad); err == nil {
			t.Errorf("ParsePlacement(%q) accepted", bad)
		}
	}
}

// TestPin pins a real process and reads its affinity back.
func TestPin(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := Pin(cmd.Process.Pid, CPUSet{0}); err != nil {
		t.Fatal(err)
	}
	got, err := Affinity(cmd.Process.Pid)
	if err != nil || !slices.Equal(got, CPUSet{0}) {
		t.Fatalf("affinity after Pin = %v, %v; want CPU 0", got, err)
	}
	if err := Pin(1<<30, CPUSet{0}); err == nil {
		t.Error("pinning a process that does not exist succeeded")
	}
}

// hog starts a process that spins on one CPU until the test ends, and
// waits until it has spun for cpu seconds.
func hog(t *testing.T) (pid int, spun func() float64) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid = cmd.Process.Pid
	return pid, func() float64 {
		p, err := procfs.NewProc(pid)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.CPUTime()
	}
}

// TestDisturbedByHog: a CPU hog started during a measurement is seen as
// other processes' CPU, and the default rule calls the measurement
// disturbed. It waits for the hog's CPU time, not for a time.
func TestDisturbedByHog(t *testing.T) {
	before := Take()
	_, spun := hog(t)
	for spun() < 0.5 {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	used := spun()
	after := Take()
	s := Between(before, after)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if s.Other*s.Seconds < used*0.8 {
		t.Errorf("other processes' CPU %.2f s over %.2f s, but the hog alone used %.2f s", s.Other*s.Seconds, s.Seconds, used)
	}
	if bad, why := DefaultRule.Disturbed(s); !bad || !strings.Contains(why, "other processes") {
		t.Errorf("a measurement beside a CPU hog not disturbed: %+v (%q)", s, why)
	}
}

// TestOwnedTime: the measured processes' CPU time is read from them, so a
// busy measured process is not "other".
func TestOwnedTime(t *testing.T) {
	pid, spun := hog(t)
	start := spun()
	a := Take(pid)
	for spun() < start+0.3 {
		time.Sleep(10 * time.Millisecond)
	}
	b := Take(pid)
	if own := b.owned - a.owned; own < 0.25 {
		t.Errorf("the measured hog's CPU time over the interval = %.2f s, want at least 0.25 s", own)
	}
}

func TestCheckNamesBusyProcess(t *testing.T) {
	pid, spun := hog(t)
	for spun() < 0.2 {
		time.Sleep(10 * time.Millisecond)
	}
	fs := Check(context.Background())
	var whats []string
	for _, f := range fs {
		whats = append(whats, f.What)
		if f.What == "busy processes" && !strings.Contains(f.Value, "pid "+strconv.Itoa(pid)) {
			t.Logf("busy processes: %s (the hog, pid %d, may have been descheduled on a loaded machine)", f.Value, pid)
		}
	}
	for _, want := range []string{"CPUs", "governor", "load average", "busy processes"} {
		if !slices.Contains(whats, want) {
			t.Errorf("pre-flight check has no %q line: %v", want, fs)
		}
	}
	// Excluding it leaves it out.
	for _, f := range Check(context.Background(), pid) {
		if f.What == "busy processes" && strings.Contains(f.Value, "pid "+strconv.Itoa(pid)+")") {
			t.Errorf("excluded process %d listed: %s", pid, f.Value)
		}
	}
}

func TestBytesText(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 20: "3.0 MiB"} {
		if got := bytesText(n); got != want {
			t.Errorf("bytesText(%d) = %q, want %q", n, got, want)
		}
	}
}
