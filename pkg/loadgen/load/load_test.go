package load

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

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
		{func(l *Load) { l.KeyMinimum = -1 }, "--key-minimum -1: want >= 0"},
		{func(l *Load) { l.KeyMinimum = math.MaxInt64 - l.Keyspace }, ""},
		{func(l *Load) { l.KeyMinimum = math.MaxInt64 - l.Keyspace + 1 }, "the last key, --key-minimum + --keyspace - 1, at most"},
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
