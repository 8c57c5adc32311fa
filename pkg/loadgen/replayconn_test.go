package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
)

// replayConfig is a run of capture text against addr.
func replayConfig(t *testing.T, addr, text string) Config {
	t.Helper()
	cp, err := replay.Parse(strings.NewReader(text), "cap.txt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Addr, cfg.Replay, cfg.Requests, cfg.Connections, cfg.Pipeline = addr, cp, 0, 3, 4
	return cfg
}

// TestReplayRequestsAndLoops: a replay sends the whole capture once by
// default, ReplayLoops times with loops, and with Requests only the
// capture's first Requests commands (over the loops), whatever the
// connections; a Duration longer than the capture ends with it.
func TestReplayRequestsAndLoops(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	ctx := context.Background()
	var text strings.Builder
	for i := range 10 {
		fmt.Fprintf(&text, "INCR k%d\n", i)
	}
	for _, tc := range []struct {
		name     string
		requests int64
		loops    int
		duration time.Duration
		want     []int // each key's count
	}{
		{"whole", 0, 0, 0, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"first 4", 4, 0, 0, []int{1, 1, 1, 1, 0, 0, 0, 0, 0, 0}},
		{"3 loops", 0, 3, 0, []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"25 of 3 loops", 25, 3, 0, []int{3, 3, 3, 3, 3, 2, 2, 2, 2, 2}},
		{"more than the file", 1000, 2, 0, []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
		{"file ends before the duration", 0, 0, time.Minute, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tg.client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			cfg := replayConfig(t, r.Addr, text.String())
			cfg.Requests, cfg.ReplayLoops, cfg.Duration = tc.requests, tc.loops, tc.duration
			res, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for i, want := range tc.want {
				total += want
				got, _ := tg.client.Get(ctx, fmt.Sprintf("k%d", i)).Int()
				if got != want {
					t.Errorf("k%d = %d, want %d", i, got, want)
				}
			}
			if res.Requests != int64(total) || len(res.Commands) != 1 || res.Commands[0].Name != "INCR" || res.Commands[0].Requests != int64(total) {
				t.Errorf("requests %d, commands %+v: want %d INCR", res.Requests, res.Commands, total)
			}
			if res.Replay == nil || res.Replay.Commands != 10 || res.Replay.Format != replay.Inline {
				t.Errorf("replay %+v", res.Replay)
			}
			if tc.duration > 0 && res.Elapsed >= tc.duration {
				t.Errorf("elapsed %v: the run should end with the file", res.Elapsed)
			}
		})
	}
}

// TestReplayPace: at the captured pace a command is not sent before its
// time in the capture divided by the speed, latency counts from that
// time, and each client's commands stay in order on their connection.
func TestReplayPace(t *testing.T) {
	r := testutil.StartRedis(t)
	tg := newTarget(t, r.Addr)
	ctx := context.Background()
	var text strings.Builder
	text.WriteString("OK\n")
	for i := range 20 {
		// 5 clients, a command every 10 ms of the capture: 190 ms in all.
		fmt.Fprintf(&text, "1733412345.%06d [0 127.0.0.1:%d] \"RPUSH\" \"l%d\" \"%d\"\n", i*10_000, 50000+i%5, i%5, i)
	}
	cfg := replayConfig(t, r.Addr, text.String())
	cfg.ReplaySpeed = 2
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 20 || res.SendLag == nil || res.SendLag.TotalCount() != 20 {
		t.Fatalf("requests %d, send lag %v", res.Requests, res.SendLag)
	}
	// The last command is due 95 ms after the first.
	if res.Elapsed < 95*time.Millisecond {
		t.Errorf("elapsed %v: the last command went before its time", res.Elapsed)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || back.Replay == nil || *back.Replay != *res.Replay || back.Config.ReplaySpeed != 2 || back.Replay.Clients != 5 {
		t.Errorf("JSON round trip: %v, replay %+v, speed %g", err, back.Replay, back.Config.ReplaySpeed)
	}
	for c := range 5 {
		l := tg.client.LRange(ctx, fmt.Sprintf("l%d", c), 0, -1).Val()
		want := []string{fmt.Sprint(c), fmt.Sprint(c + 5), fmt.Sprint(c + 10), fmt.Sprint(c + 15)}
		if strings.Join(l, ",") != strings.Join(want, ",") {
			t.Errorf("l%d = %v, want %v in the client's order", c, l, want)
		}
	}
}

// TestReplayConfigErrors: what a replay cannot do is refused by
// Normalize, naming the file where it is at fault.
func TestReplayConfigErrors(t *testing.T) {
	inline := replayConfig(t, DefaultAddr, "SET a 1\n")
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.ReplaySpeed = 1 }, "cap.txt is a file of inline commands, without times"},
		{func(c *Config) { c.Rate = 100 }, "not at a rate"},
		{func(c *Config) { c.WarmupRequests = 10 }, "nothing to warm up with"},
		{func(c *Config) { c.Cluster = true }, "not routed"},
		{func(c *Config) { c.ReplayLoops = -1 }, "want >= 0"},
	} {
		c := inline
		tc.edit(&c)
		if _, err := c.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want an error with %q", err, tc.want)
		}
	}
	if c, err := inline.Normalize(); err != nil || c.Requests != 1 {
		t.Errorf("requests %d %v: want the capture's 1 command", c.Requests, err)
	}
}
