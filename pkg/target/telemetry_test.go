package target

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// TestTelemetry: against a kvstore and a redis-server kvbench started,
// INFO before and after 100 SETs and a GET tells those calls apart (the
// kvstore's exactly; redis's too, its control calls being INFO and
// PING), with their server time; used_memory is known and below the RSS
// the sampler saw; the CPU time is read to the nanosecond from schedstat.
func TestTelemetry(t *testing.T) {
	targets := []struct {
		name, strategy string
		make           func(t *testing.T) (Target, error)
	}{
		{"kvstore", "nopersist", func(*testing.T) (Target, error) { return NewKvstore(KvstoreConfig{Bin: kvbenchBin}) }},
		{"redis", "none", func(t *testing.T) (Target, error) {
			return NewRedis(RedisConfig{Bin: testutil.RequireRedisServer(t)})
		}},
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := tt.make(t)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			inst, env := start(t, tg, tt.strategy)
			defer stopAndCheck(t, inst, env)
			info := inst.Info()
			rss := StartRSS(info, 10*time.Millisecond)
			if rss == nil {
				t.Fatal("no RSS sampler for a server kvbench started")
			}
			before, err := ReadTelemetry(ctx, info, "")
			if err != nil {
				t.Fatal(err)
			}
			cpu0, err := SampleServer(ctx, info, "")
			if err != nil {
				t.Fatal(err)
			}
			c, err := dialControl(ctx, info.Addr, creds{}, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := range 100 {
				if _, err := c.Do(ctx, "SET", fmt.Sprint("key", i), "value"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Do(ctx, "GET", "key1"); err != nil {
				t.Fatal(err)
			}
			cpu1, err := SampleServer(ctx, info, "")
			if err != nil {
				t.Fatal(err)
			}
			peak := rss.Stop()
			after, err := ReadTelemetry(ctx, info, "")
			if err != nil {
				t.Fatal(err)
			}
			for name, calls := range map[string]int64{"set": 100, "get": 1} {
				d, ok := CommandDelta(before, after, name)
				if !ok || d.Calls != calls || d.Usec < 0 {
					t.Errorf("%s: %+v (%v), want %d calls", name, d, ok, calls)
				}
			}
			if d, ok := CommandDelta(before, after, "set", "get"); !ok || d.Calls != 101 {
				t.Errorf("set and get: %+v (%v), want 101 calls", d, ok)
			}
			used, ok := after.UsedMemory()
			if !ok || used <= 0 || peak <= used {
				t.Errorf("used_memory %d (%v), peak RSS %d", used, ok, peak)
			}
			cpu, step, ok := CPUUsed(cpu0, cpu1)
			if !ok || cpu <= 0 || step != time.Nanosecond {
				t.Errorf("server CPU %v, step %v (%v): want schedstat's nanoseconds", cpu, step, ok)
			}
		})
	}
}

// TestTelemetryAttached: an attached server (no process of kvbench's)
// has no RSS sampler and reads its CPU time from INFO cpu, to the
// microsecond.
func TestTelemetryAttached(t *testing.T) {
	kv, err := NewKvstore(KvstoreConfig{Bin: kvbenchBin})
	if err != nil {
		t.Fatal(err)
	}
	inst, env := start(t, kv, "nopersist")
	defer stopAndCheck(t, inst, env)
	info := inst.Info()
	info.PID = 0
	if s := StartRSS(info, 0); s != nil {
		s.Stop()
		t.Error("an RSS sampler without a process")
	}
	if s := (*RSSSampler)(nil); s.Stop() != 0 {
		t.Error("a nil sampler's peak is not 0")
	}
	sample, err := SampleServer(context.Background(), info, "")
	if err != nil {
		t.Fatal(err)
	}
	if sample.CPU <= 0 || sample.CPUStep != time.Microsecond {
		t.Errorf("CPU %v, step %v: want INFO cpu's microseconds", sample.CPU, sample.CPUStep)
	}
}

// TestCommandDeltaReset: counters that went back (CONFIG RESETSTAT
// between the readings) or a server without commandstats give no delta.
func TestCommandDeltaReset(t *testing.T) {
	reading := func(v string) Telemetry {
		return Telemetry{Nodes: []map[string]string{{"cmdstat_get": v, "used_memory": "1000"}}}
	}
	before, after := reading("calls=100,usec=50,usec_per_call=0.50"), reading("calls=10,usec=5,usec_per_call=0.50")
	if d, ok := CommandDelta(before, after, "get"); ok {
		t.Errorf("counters reset: %+v", d)
	}
	if d, ok := CommandDelta(Telemetry{Nodes: []map[string]string{{}}}, after, "get"); ok {
		t.Errorf("no commandstats before: %+v", d)
	}
	if d, ok := CommandDelta(after, before, "get", "set"); !ok || d.Calls != 90 || d.Usec != 45 {
		t.Errorf("get 10 then 100, set never called: %+v (%v)", d, ok)
	}
	if _, err := threadsCPU(os.Getpid()); err != nil {
		t.Errorf("this process's schedstat: %v", err)
	}
}

// BenchmarkRSSSample is one sample of the RSS sampler (this process's
// /proc/PID/statm), which it takes every RSSInterval during a
// measurement: its cost over the interval is the sampler's share of a
// CPU.
func BenchmarkRSSSample(b *testing.B) {
	s := &RSSSampler{pids: []int{os.Getpid()}}
	for b.Loop() {
		s.sample()
	}
	if s.peak <= 0 {
		b.Fatal("no RSS read")
	}
}
