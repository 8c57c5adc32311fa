package load

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/measure"
)

// The JSON form of a Config is the run's settings: every field with a
// JSON name, and configExtra's. It is a result's "settings" (package
// loadgen), read back by "kvbench merge"; documents of earlier versions
// decode too. It is also the load an agent receives ("kvbench bench
// --load-json"): every setting but the password, the TLS material (only
// whether TLS is on), a replay's capture and the hooks.

// configExtra is what Config's own fields cannot say as they are in JSON.
type configExtra struct {
	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"`
	// ValueSizes is Config.ValueSizes as --data-size-list takes it.
	ValueSizes string `json:"value_sizes,omitempty"`
	// StartAt is Config.StartAt in RFC 3339, empty when not set.
	StartAt string `json:"start_at,omitempty"`
	// TLS says the connections were TLS (Config.TLS set).
	TLS bool `json:"tls"`
	// IntervalS and StallLatencyMs are Config.Interval and StallLatency.
	IntervalS      float64 `json:"interval_s,omitempty"`
	StallLatencyMs float64 `json:"stall_latency_ms,omitempty"`
	// ReconnectBackoffMs is Config.ReconnectBackoff, with Reconnect.
	ReconnectBackoffMs float64 `json:"reconnect_backoff_ms,omitempty"`
	// TimeoutS and ConnectTimeoutS are Config.Timeout and ConnectTimeout;
	// absent (documents of earlier versions) is the default.
	TimeoutS        float64 `json:"timeout_s,omitempty"`
	ConnectTimeoutS float64 `json:"connect_timeout_s,omitempty"`
	// Resp is 3 with Config.RESP3, absent for RESP2.
	Resp int `json:"resp,omitempty"`
}

// configPlain is Config without its methods, for the codec.
type configPlain Config

// MarshalJSON encodes the settings of a run: every field with a JSON
// name, durations in seconds; no password, no TLS material.
func (c Config) MarshalJSON() ([]byte, error) {
	x := configExtra{DurationS: c.Duration.Seconds(), WarmupS: c.Warmup.Seconds(), TLS: c.TLS != nil,
		IntervalS: c.Interval.Seconds(), StallLatencyMs: float64(c.StallLatency) / 1e6,
		TimeoutS: c.Timeout.Seconds(), ConnectTimeoutS: c.ConnectTimeout.Seconds()}
	if c.Reconnect {
		x.ReconnectBackoffMs = float64(c.ReconnectBackoff) / 1e6
	}
	if len(c.ValueSizes) > 0 {
		x.ValueSizes = keyspace.FormatValueSizes(c.ValueSizes)
	}
	if c.RESP3 {
		x.Resp = 3
	}
	if !c.StartAt.IsZero() {
		x.StartAt = c.StartAt.Format(time.RFC3339Nano)
	}
	c.Segments = max(c.Segments, 1)
	return json.Marshal(struct {
		configPlain
		configExtra
	}{configPlain(c), x})
}

// UnmarshalJSON decodes settings MarshalJSON wrote; a field it does not
// know is an error. A run over TLS decodes with an empty TLS
// configuration; the value sizes are parsed back.
func (c *Config) UnmarshalJSON(b []byte) error {
	var v struct {
		*configPlain
		configExtra
	}
	v.configPlain = (*configPlain)(c)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	x := v.configExtra
	c.Duration, c.Warmup = measure.FromSeconds(x.DurationS), measure.FromSeconds(x.WarmupS)
	c.Interval, c.StallLatency = measure.FromSeconds(x.IntervalS), time.Duration(x.StallLatencyMs*1e6)
	c.ReconnectBackoff = time.Duration(x.ReconnectBackoffMs * 1e6)
	c.Timeout, c.ConnectTimeout = measure.FromSeconds(x.TimeoutS), measure.FromSeconds(x.ConnectTimeoutS)
	if x.ValueSizes != "" {
		rs, err := keyspace.ParseValueSizes(x.ValueSizes)
		if err != nil {
			return fmt.Errorf("value_sizes: %w", err)
		}
		c.ValueSizes = rs
	}
	if x.StartAt != "" {
		t, err := time.Parse(time.RFC3339Nano, x.StartAt)
		if err != nil {
			return fmt.Errorf("start_at: %w", err)
		}
		c.StartAt = t
	}
	if x.TLS {
		c.TLS = &tls.Config{}
	}
	switch x.Resp {
	case 0, 2:
	case 3:
		c.RESP3 = true
	default:
		return fmt.Errorf("resp: %d is not a RESP version (2 or 3)", x.Resp)
	}
	return nil
}
