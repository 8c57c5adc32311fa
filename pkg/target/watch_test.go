package target

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// TestSampleSpawned: a kvstore kvbench starts has a run_id and a process,
// and its CPU time is read from its process group and grows with work.
func TestSampleSpawned(t *testing.T) {
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := k.Desc().Strategy("nopersist")
	ctx := context.Background()
	inst, err := k.Start(ctx, s, Env{Dir: t.TempDir(), ReadyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(ctx)
	before, err := SampleServer(ctx, inst.Info(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.RunID) != 40 || before.PID != inst.Info().PID || before.CPU < 0 || before.Uptime < 0 {
		t.Fatalf("sample %+v of process %d", before, inst.Info().PID)
	}
	c, err := dialControl(ctx, inst.Info().Addr, creds{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		if _, err := c.Do(context.Background(), "SET", "k", strings.Repeat("v", 100)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	after, err := SampleServer(ctx, inst.Info(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Restarted(before, after); err != nil {
		t.Errorf("same server: %v", err)
	}
	if after.CPU <= before.CPU {
		t.Errorf("CPU time %v then %v after 20,000 SETs", before.CPU, after.CPU)
	}
}

// TestRestartedAttach: a server restarted on the same address between two
// samples is told apart by its run_id, and its CPU time comes from INFO.
func TestRestartedAttach(t *testing.T) {
	r := testutil.StartRedis(t)
	ctx := context.Background()
	info := Info{Addr: r.Addr} // attached: no process of ours
	before, err := SampleServer(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if before.RunID == "" || before.CPU < 0 {
		t.Fatalf("sample %+v", before)
	}
	if err := r.Kill(); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(r.Addr, ":")
	again := exec.Command(testutil.RequireRedisServer(t), "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := again.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Process.Kill(); _ = again.Wait() }()
	for deadline := time.Now().Add(time.Minute); testutil.Ping(r.Addr, time.Second) != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the restarted redis-server does not answer PING in a minute")
		}
		time.Sleep(20 * time.Millisecond) // bounded poll for the new server
	}
	after, err := SampleServer(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Restarted(before, after); !errors.Is(err, ErrRestarted) || !strings.Contains(err.Error(), "run_id went from") {
		t.Errorf("restarted server: %v", err)
	}
}

// TestRestartedUptime: without a run_id or a process id, an uptime that
// fell behind the clock tells the restart.
func TestRestartedUptime(t *testing.T) {
	t0 := time.Now()
	before := Sample{At: t0, Uptime: 100, CPU: -1}
	if err := Restarted(before, Sample{At: t0.Add(5 * time.Second), Uptime: 105}); err != nil {
		t.Errorf("uptime kept pace: %v", err)
	}
	if err := Restarted(before, Sample{At: t0.Add(5 * time.Second), Uptime: 3}); !errors.Is(err, ErrRestarted) {
		t.Errorf("uptime 3s after 105s: %v", err)
	}
}

// BenchmarkSampleServer is the cost a measured attempt pays twice for its
// restart check and CPU times: INFO server and /proc (a spawned kvstore),
// or INFO server and INFO cpu (an attached redis-server).
func BenchmarkSampleServer(b *testing.B) {
	ctx := context.Background()
	k, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := k.Desc().Strategy("nopersist")
	inst, err := k.Start(ctx, s, Env{Dir: b.TempDir(), ReadyTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Stop(ctx)
	r := testutil.StartRedis(b)
	for _, tc := range []struct {
		name string
		info Info
	}{{"spawned-kvstore", inst.Info()}, {"attached-redis", Info{Addr: r.Addr}}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := SampleServer(ctx, tc.info, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGroupCPUCountsChildren: a wrapper script's busy child is the
// server's CPU time too.
func TestGroupCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	var cpu time.Duration
	for deadline := time.Now().Add(time.Minute); cpu < 100*time.Millisecond && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // bounded poll while the child spins
		g, err := groupCPU(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		cpu = g.cpu
	}
	_, own, err := procCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if cpu < 100*time.Millisecond || ticks(own.own) >= cpu {
		t.Errorf("group CPU %v, the waiting parent's own %d ticks: the child's time is missing", cpu, own.own)
	}
}
