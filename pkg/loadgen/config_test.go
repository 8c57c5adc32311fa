package loadgen

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

// fill returns c with each zero field set from DefaultConfig: the tests'
// shorthand for "the defaults, but these".
func fill(c Config) Config {
	d := DefaultConfig()
	set := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	set(&c.Addr, d.Addr)
	set(&c.SetCmd, d.SetCmd)
	set(&c.GetCmd, d.GetCmd)
	set(&c.KeyPrefix, d.KeyPrefix)
	if c.Mode == "" {
		c.Mode = d.Mode
	}
	if c.Requests == 0 && c.Duration == 0 {
		c.Requests = d.Requests
	}
	for _, f := range []struct{ v, def *int }{
		{&c.Pipeline, &d.Pipeline}, {&c.Connections, &d.Connections}, {&c.Threads, &d.Threads},
		{&c.ValueSize, &d.ValueSize}, {&c.SetRatio, &d.SetRatio},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if c.Keyspace == 0 {
		c.Keyspace = d.Keyspace
	}
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.StallBelow == 0 && c.StallLatency == 0 {
		c.StallBelow, c.StallLatency = d.StallBelow, d.StallLatency
	}
	if c.ReconnectAttempts == 0 && c.ReconnectBackoff == 0 {
		c.ReconnectAttempts, c.ReconnectBackoff = d.ReconnectAttempts, d.ReconnectBackoff
	}
	return c
}

// TestZeroMeansZero: DefaultConfig is complete, an allowed zero (an empty
// value, no writes) is kept, and a zero that means nothing is refused with
// the field named.
func TestZeroMeansZero(t *testing.T) {
	if _, err := DefaultConfig().Normalize(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	c := DefaultConfig()
	c.ValueSize, c.SetRatio = 0, 0
	n, err := c.Normalize()
	if err != nil || n.ValueSize != 0 || n.SetRatio != 0 {
		t.Errorf("value size 0, set ratio 0: got %d, %d, %v", n.ValueSize, n.SetRatio, err)
	}
	// Zero threads and timeouts mean the defaults.
	c = DefaultConfig()
	c.Threads, c.Connections, c.Timeout, c.ConnectTimeout = 0, 1<<10, 0, 0
	if n, err := c.Normalize(); err != nil || n.Threads != min(DefaultThreads(), 1<<10) || n.Timeout != DefaultTimeout || n.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("threads and timeouts 0: got %d, %v, %v, %v; want %d, %v, %v", n.Threads, n.Timeout, n.ConnectTimeout, err, DefaultThreads(), DefaultTimeout, DefaultConnectTimeout)
	}
	for _, tc := range []struct {
		name string
		zero func(*Config)
		want string
	}{
		{"pipeline", func(c *Config) { c.Pipeline = 0 }, "pipeline 0"},
		{"connections", func(c *Config) { c.Connections = 0 }, "connections 0"},
		{"keyspace", func(c *Config) { c.Keyspace = 0 }, "keyspace 0"},
		{"requests", func(c *Config) { c.Requests = 0 }, "requests 0"},
	} {
		c := DefaultConfig()
		tc.zero(&c)
		if _, err := c.Normalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s 0: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

// TestLoadValidate: every field of a Load has one set of bounds, checked
// by Load.Validate (and so by Config.Normalize, "kvbench bench" and
// "kvbench run" alike), its error naming the field's flag; the bounds
// themselves are accepted.
func TestLoadValidate(t *testing.T) {
	if err := DefaultLoad().Validate(); err != nil {
		t.Fatalf("DefaultLoad: %v", err)
	}
	for _, tc := range []struct {
		set  func(*Load)
		want string // "" when valid
	}{
		{func(l *Load) { l.Requests = 0 }, "--requests 0: want >= 1, or a --duration"},
		{func(l *Load) { l.Requests, l.Duration = 0, time.Second }, ""},
		{func(l *Load) { l.Requests = -1 }, "--requests -1"},
		{func(l *Load) { l.Duration = -time.Second }, "--duration -1s"},
		{func(l *Load) { l.Warmup = -time.Second }, "--warmup"},
		{func(l *Load) { l.WarmupRequests = -1 }, "--warmup"},
		{func(l *Load) { l.Rate = -1 }, "--rate -1"},
		{func(l *Load) { l.Pipeline = 0 }, "--pipeline 0: want 1 to 1048576"},
		{func(l *Load) { l.Pipeline = MaxPipeline }, ""},
		{func(l *Load) { l.Pipeline = MaxPipeline + 1 }, "--pipeline 1048577"},
		{func(l *Load) { l.Connections = 0 }, "--connections 0: want 1 to 65536"},
		{func(l *Load) { l.Connections = MaxConnections }, ""},
		{func(l *Load) { l.Connections = MaxConnections + 1 }, "--connections 65537"},
		{func(l *Load) { l.Threads = 0 }, ""},
		{func(l *Load) { l.Threads = -1 }, "--threads -1"},
		{func(l *Load) { l.Keyspace = 0 }, "--keyspace 0: want >= 1"},
		{func(l *Load) { l.KeyPattern = "spiral" }, `--key-pattern "spiral"`},
		{func(l *Load) { l.Zipf = -1 }, "--zipf -1"},
		{func(l *Load) { l.KeyMedian = float64(l.Keyspace) }, "--key-median 100000: want 0 to 99999"},
		{func(l *Load) { l.KeyStddev = -1 }, "--key-stddev -1"},
		{func(l *Load) { l.ValueSize = -1 }, "--value-size -1"},
		{func(l *Load) { l.ValueSize = keyspace.MaxValueSize }, ""},
		{func(l *Load) { l.ValueSizes = []keyspace.SizeRange{{Min: 5, Max: 2, Weight: 1}} }, "--data-size-list"},
		{func(l *Load) { l.ExpiryMin, l.ExpiryMax = 5, 2 }, "--expiry-range 5-2"},
		{func(l *Load) { l.MultiKeyGet = MaxMultiKeyGet + 1 }, "--multi-key-get 1025"},
		{func(l *Load) { l.SetRatio = 101 }, "--set-ratio 101: want 0 to 100"},
		{func(l *Load) { l.SetRatio = 0 }, ""},
		{func(l *Load) { l.ReconnectAttempts = -1 }, "--reconnect-attempts -1"},
		{func(l *Load) { l.ReconnectAttempts = 0 }, ""},
		{func(l *Load) { l.Reconnect, l.ReconnectAttempts = true, 0 }, "--reconnect-attempts 0 and --reconnect-backoff 100ms: want >= 1 and > 0"},
		{func(l *Load) { l.Timeout = -time.Second }, "--timeout -1s"},
		{func(l *Load) { l.Interval = time.Microsecond }, "--interval 1µs: want 0 (none) or at least 1ms"},
		{func(l *Load) { l.Interval = 0 }, ""},
		{func(l *Load) { l.StallBelow = 1 }, "--stall-below 1"},
		{func(l *Load) { l.StallLatency = -1 }, "--stall-latency -1ns"},
	} {
		l := DefaultLoad()
		tc.set(&l)
		err := l.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", l, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
	// Every invalid field is named at once.
	l := DefaultLoad()
	l.Pipeline, l.SetRatio = 0, -1
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "--pipeline 0") || !strings.Contains(err.Error(), "--set-ratio -1") {
		t.Errorf("two invalid fields: %v", err)
	}
}
