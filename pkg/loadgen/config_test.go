package loadgen

import (
	"strings"
	"testing"
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
