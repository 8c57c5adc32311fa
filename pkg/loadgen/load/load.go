package load

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/measure"
)

// Bounds of a Load.
const (
	// MaxPipeline bounds Load.Pipeline.
	MaxPipeline = 1 << 20
	// MaxConnections bounds Load.Connections.
	MaxConnections = 1 << 16
	// MaxMultiKeyGet bounds Load.MultiKeyGet.
	MaxMultiKeyGet = 1 << 10
)

// Load is what shapes a load, wherever it goes and whatever it sends: how
// much (requests or time, a warmup, a rate), over how many connections
// and threads, which keys and values, what is checked, the timeouts, and
// how its measured phase is cut into intervals. It is described once:
// Config embeds it beside the server and the request mix, the options of
// "kvbench bench" (package bench) and "kvbench run" (package runner)
// embed it, and agents receive it inside the Config's JSON. Validate
// checks every field with the one set of bounds they all share.
//
// A zero field means zero (an empty value, no writes, no warmup), except
// where it says it means the default: Threads and the timeouts.
type Load struct {
	// Requests is the number of measured requests over all connections,
	// split as evenly as possible between them. It is exact: the run sends
	// exactly this many and waits for every reply. Ignored when Duration is
	// set.
	Requests int64 `json:"requests"`
	// Duration, when positive, bounds the measured phase by time instead:
	// no batch is started after it, and the batches in flight are waited
	// for.
	Duration time.Duration `json:"-"`
	// WarmupRequests and Warmup run an unmeasured phase first (by count or
	// by time; the count wins when both are set), on the same connections
	// and continuing the same key sequences.
	WarmupRequests int64         `json:"warmup_requests"`
	Warmup         time.Duration `json:"-"`
	// Rate, when positive, makes the run open-loop: Rate requests per second
	// in total, each with an intended send time, latency measured from it.
	// A connection still has at most Pipeline requests in flight. Zero is a
	// closed loop: each connection sends a batch of Pipeline requests,
	// waits for all replies, and sends the next.
	Rate float64 `json:"rate"`

	// Pipeline is the number of requests per batch (closed loop) or the
	// most requests in flight per connection (open loop), 1 to
	// MaxPipeline.
	Pipeline int `json:"pipeline"`
	// Connections is the number of connections, 1 to MaxConnections,
	// spread over Threads worker threads (never more threads than
	// connections, or in cluster mode or with replicas than their
	// sockets; 0 threads: DefaultThreads). With Config.Segments > 1
	// Connections is the total over all agents (raised to Segments if
	// smaller), and this run opens its share (see Config.Segment).
	Connections int `json:"connections"`
	Threads     int `json:"threads"`

	// Keyspace is the number of distinct keys, numbered KeyMinimum to
	// KeyMinimum+Keyspace-1.
	Keyspace int64 `json:"keyspace"`
	// KeyMinimum is the number of the first key (memtier_benchmark's
	// --key-minimum): a key range need not start at 0. The flags take
	// the range's last key as --key-maximum, and Keyspace from it.
	KeyMinimum int64 `json:"key_minimum,omitempty"`
	// KeyPrefix starts every key.
	KeyPrefix string `json:"key_prefix"`
	// KeyPattern is the order of keys; empty means DefaultKeyPattern of
	// the mode.
	KeyPattern keyspace.Pattern `json:"key_pattern"`
	// Zipf is the exponent of keyspace.Zipf (> 0); setting it with an empty
	// KeyPattern selects keyspace.Zipf.
	Zipf float64 `json:"zipf"`
	// KeyMedian and KeyStddev shape keyspace.Gaussian: 0 means the middle of
	// the keyspace, (Keyspace-1)/2, and Keyspace/6, as
	// memtier_benchmark's --key-median and --key-stddev.
	KeyMedian float64 `json:"key_median,omitempty"`
	KeyStddev float64 `json:"key_stddev,omitempty"`

	// ValueSize is the length of written values in bytes, 0 to
	// keyspace.MaxValueSize.
	ValueSize int `json:"value_size"`
	// ValueSizes, when set, replaces ValueSize in a command mix (and its
	// prefill; --mode runs ignore it): each key's value has the size this
	// distribution gives it, a function of Seed and the key (see
	// loadgen.ValueSizeOf), so that reads know it. ValueSize is then the largest
	// size (Config.Normalize sets it).
	ValueSizes []keyspace.SizeRange `json:"-"`
	// RandomData makes the values random bytes, every bit of a stream
	// seeded by (Seed, key), so that they do not compress; still a
	// function of the seed and the key, so VerifyGet checks them (see
	// keyspace.AppendRandomValue). The prefill and a command mix write
	// them too.
	RandomData bool `json:"random_data,omitempty"`
	// ExpiryMin and ExpiryMax, when set, give every SET of a --mode run
	// EX n, n seconds drawn uniformly from [ExpiryMin, ExpiryMax] per
	// key (a function of Seed and the key). Only with the write command
	// SET and writes; the prefill's keys do not expire.
	ExpiryMin int `json:"expiry_min,omitempty"`
	ExpiryMax int `json:"expiry_max,omitempty"`
	// MultiKeyGet, when positive, makes every read of a --mode run an
	// MGET of this many keys (at most MaxMultiKeyGet), the connection's
	// next ones: a request, one reply, one latency; a miss when a key
	// has none; with VerifyGet every value is checked. Only with the read
	// command GET, not in a cluster.
	MultiKeyGet int `json:"multi_key_get,omitempty"`
	// SetRatio is the percentage of writes in ModeMixed, 0 to 100.
	SetRatio int `json:"set_ratio"`

	// Seed drives key choice and values: the same seed and settings give
	// the same key sequence on every connection and the same values.
	Seed int64 `json:"seed"`
	// RESP3 opens every connection, the load's and the checks', with
	// HELLO 3 and reads every reply as RESP3; the JSON settings say
	// "resp": 3. A server without RESP3 fails the run at its first dial
	// (control.NoRESP3Error).
	RESP3 bool `json:"-"`

	// VerifyGet checks every read reply against the value the same seed
	// writes. A null reply is a miss, any other difference a verify failure.
	VerifyGet bool `json:"verify_get"`
	// AllowMisses keeps misses and verify failures of a ModeGet run with
	// VerifyGet from failing it (they are still counted).
	AllowMisses bool `json:"allow_misses"`
	// ContinueOnError counts error replies other than conflicts and goes
	// on; otherwise the first one ends the run with the server's message.
	ContinueOnError bool `json:"continue_on_error"`

	// Reconnect redials a connection of a plain run that the server
	// closed or reset mid-run (a restart), up to ReconnectAttempts times
	// with ReconnectBackoff doubling between attempts:
	// its requests in flight count as ErrorReconnect errors, each
	// successful redial in the result's Reconnects, and the run goes on. Without
	// it a lost connection fails the run. A cluster run follows its
	// masters' failovers without it. DefaultLoad's attempts and backoff
	// are DefaultReconnectAttempts and DefaultReconnectBackoff.
	Reconnect         bool          `json:"reconnect,omitempty"`
	ReconnectAttempts int           `json:"reconnect_attempts,omitempty"`
	ReconnectBackoff  time.Duration `json:"-"`

	// ConnectTimeout bounds connecting and AUTH, per connection; zero is
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration `json:"-"`
	// Timeout fails the run when a connection with requests in flight gets
	// no reply for this long; zero is DefaultTimeout.
	Timeout time.Duration `json:"-"`

	// Interval, when positive (at least 1ms), records the measured phase
	// per interval of this length (loadgen.Result.Series), aligned on the wall
	// clock; 0 does not. StallBelow and StallLatency find its stalls
	// (loadgen.Result.Stalls): intervals whose QPS is below StallBelow times the
	// median interval QPS, or in which a request waited longer than
	// StallLatency (0: no latency rule).
	Interval     time.Duration `json:"-"`
	StallBelow   float64       `json:"stall_below,omitempty"`
	StallLatency time.Duration `json:"-"`
}

// DefaultLoad returns the load of "kvbench bench" without flags: every
// setting at its default. (kvbench run starts from it with the reference
// script's defaults, runner.DefaultOptions.)
func DefaultLoad() Load {
	return Load{
		Requests:          DefaultRequests,
		Pipeline:          DefaultPipeline,
		Connections:       DefaultConnections,
		Keyspace:          DefaultKeyspace,
		KeyPrefix:         DefaultKeyPrefix,
		ValueSize:         DefaultValueSize,
		SetRatio:          DefaultSetRatio,
		ConnectTimeout:    DefaultConnectTimeout,
		ReconnectAttempts: DefaultReconnectAttempts,
		ReconnectBackoff:  DefaultReconnectBackoff,
		Timeout:           DefaultTimeout,
		Interval:          DefaultInterval,
		StallBelow:        measure.DefaultStallBelow,
		StallLatency:      measure.DefaultStallLatency,
	}
}

// Validate checks every field of l against its bounds, alone: what
// depends on the rest of a Config (the mode, the commands, the server)
// Config.Normalize checks. The error names each field by its flag
// (--pipeline), every invalid one.
func (l Load) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.Requests < 0 || l.Requests == 0 && l.Duration <= 0 {
		bad("--requests %d: want >= 1, or a --duration", l.Requests)
	}
	if l.Duration < 0 {
		bad("--duration %v: want > 0, or none", l.Duration)
	}
	if l.Warmup < 0 || l.WarmupRequests < 0 {
		bad("--warmup: want a duration or a number of requests >= 0")
	}
	if l.Rate < 0 {
		bad("--rate %g: want >= 0 (0: a closed loop)", l.Rate)
	}
	if l.Pipeline < 1 || l.Pipeline > MaxPipeline {
		bad("--pipeline %d: want 1 to %d", l.Pipeline, MaxPipeline)
	}
	if l.Connections < 1 || l.Connections > MaxConnections {
		bad("--connections %d: want 1 to %d", l.Connections, MaxConnections)
	}
	if l.Threads < 0 {
		bad("--threads %d: want >= 1 (0: one per CPU)", l.Threads)
	}
	if l.Keyspace < 1 {
		bad("--keyspace %d: want >= 1", l.Keyspace)
	}
	if l.KeyMinimum < 0 || l.KeyMinimum > math.MaxInt64-max(l.Keyspace, 0) {
		bad("--key-minimum %d: want >= 0, and the last key, --key-minimum + --keyspace - 1, at most %d", l.KeyMinimum, int64(math.MaxInt64))
	}
	if l.KeyPattern != "" && !l.KeyPattern.Known() {
		bad("--key-pattern %q: want %s", l.KeyPattern, keyspace.PatternNames)
	}
	if l.Zipf < 0 {
		bad("--zipf %g: want > 0", l.Zipf)
	}
	if l.Keyspace >= 1 && (l.KeyMedian < 0 || l.KeyMedian > float64(l.Keyspace-1)) {
		bad("--key-median %g: want 0 to %d (the keyspace)", l.KeyMedian, l.Keyspace-1)
	}
	if l.Keyspace >= 1 && (l.KeyStddev < 0 || l.KeyStddev > keyspace.MaxStddev*float64(l.Keyspace)) {
		bad("--key-stddev %g: want > 0 and at most %d times the keyspace", l.KeyStddev, keyspace.MaxStddev)
	}
	if l.ValueSize < 0 || l.ValueSize > keyspace.MaxValueSize {
		bad("--value-size %d: want 0 to %d", l.ValueSize, keyspace.MaxValueSize)
	}
	for _, err := range keyspace.SizeErrors(l.ValueSizes) {
		bad("--data-size-list: %w", err)
	}
	if (l.ExpiryMin != 0 || l.ExpiryMax != 0) && (l.ExpiryMin < 1 || l.ExpiryMax < l.ExpiryMin) {
		bad("--expiry-range %d-%d: want 1 <= MIN <= MAX seconds", l.ExpiryMin, l.ExpiryMax)
	}
	if l.MultiKeyGet < 0 || l.MultiKeyGet > MaxMultiKeyGet {
		bad("--multi-key-get %d: want 1 to %d keys", l.MultiKeyGet, MaxMultiKeyGet)
	}
	if l.SetRatio < 0 || l.SetRatio > 100 {
		bad("--set-ratio %d: want 0 to 100", l.SetRatio)
	}
	if l.ReconnectAttempts < 0 || l.ReconnectBackoff < 0 || l.Reconnect && (l.ReconnectAttempts < 1 || l.ReconnectBackoff <= 0) {
		bad("--reconnect-attempts %d and --reconnect-backoff %v: want >= 1 and > 0", l.ReconnectAttempts, l.ReconnectBackoff)
	}
	if l.ConnectTimeout < 0 || l.Timeout < 0 {
		bad("--connect-timeout %v and --timeout %v: want > 0 (0: the defaults, %v and %v)", l.ConnectTimeout, l.Timeout, DefaultConnectTimeout, DefaultTimeout)
	}
	if l.Interval < 0 || l.Interval > 0 && l.Interval < time.Millisecond {
		bad("--interval %v: want 0 (none) or at least 1ms", l.Interval)
	}
	if l.StallBelow < 0 || l.StallBelow >= 1 {
		bad("--stall-below %g: want a fraction from 0 to below 1", l.StallBelow)
	}
	if l.StallLatency < 0 {
		bad("--stall-latency %v: want 0 (no such rule) or more", l.StallLatency)
	}
	return errors.Join(errs...)
}

// Keys is the spec of the load's keys: how many, how they are numbered
// and named, and the order they are drawn in (the key pattern as given:
// Config.Normalize fills in the mode's default).
func (l Load) Keys() keyspace.Spec {
	return keyspace.Spec{Keyspace: l.Keyspace, First: uint64(l.KeyMinimum), Pattern: l.KeyPattern, Zipf: l.Zipf, Median: l.KeyMedian, Stddev: l.KeyStddev, Seed: l.Seed}
}

// withDefaults is l with the zero fields that mean a default filled in.
func (l Load) withDefaults() Load {
	if l.Threads == 0 {
		l.Threads = DefaultThreads()
	}
	if l.ConnectTimeout == 0 {
		l.ConnectTimeout = DefaultConnectTimeout
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}
