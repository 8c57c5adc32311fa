package loadgen

import (
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/measure"
)

// Mode is the request mix of a run: measure.Mode, which the report reads
// back without importing the engine.
type Mode = measure.Mode

// The modes (measure's).
const (
	// ModeSet sends only the write command (Config.SetCmd).
	ModeSet = measure.ModeSet
	// ModeGet sends only the read command (Config.GetCmd).
	ModeGet = measure.ModeGet
	// ModeMixed sends writes with probability Config.SetRatio percent and
	// reads otherwise.
	ModeMixed = measure.ModeMixed
)

// Defaults, shared with the command line so help text cannot drift.
const (
	// DefaultHost and DefaultPort make DefaultAddr.
	DefaultHost = "127.0.0.1"
	DefaultPort = control.DefaultPort
	// DefaultAddr is the server address used when Config.Addr is empty.
	DefaultAddr = "127.0.0.1:6379"
	// DefaultMode is the request mix.
	DefaultMode = ModeMixed
	// DefaultRequests is the number of measured requests (total, over all
	// connections) when neither Requests nor Duration is set.
	DefaultRequests = 1_000_000
	// DefaultPipeline is the number of requests per batch.
	DefaultPipeline = 64
	// DefaultKeyspace is the number of distinct keys.
	DefaultKeyspace = 100_000
	// DefaultValueSize is the length of written values in bytes.
	DefaultValueSize = 32
	// DefaultSetRatio is the percentage of writes in ModeMixed.
	DefaultSetRatio = 50
	// DefaultSetCmd and DefaultGetCmd are the write and read commands.
	DefaultSetCmd = "SET"
	DefaultGetCmd = "GET"
	// DefaultKeyPrefix starts every key.
	DefaultKeyPrefix = "bench:key:"
	// DefaultConnections is the number of connections.
	DefaultConnections = 1
	// DefaultConnectTimeout bounds connecting (and AUTH) per connection.
	DefaultConnectTimeout = 3 * time.Second
	// DefaultTimeout is how long a connection may wait for a reply before
	// the run fails.
	DefaultTimeout = 10 * time.Second
	// DefaultProgressInterval is how often Config.Progress is called.
	DefaultProgressInterval = time.Second
	// DefaultInterval is the length of a series' intervals.
	DefaultInterval = time.Second
	// MaxStartLate is how far past Config.StartAt a run may still start.
	MaxStartLate = time.Second
	// DefaultReconnectAttempts and DefaultReconnectBackoff are how often
	// a lost connection is redialled (Config.Reconnect) and the wait
	// after its first failed attempt; the wait doubles after each next
	// one, up to MaxReconnectBackoff.
	DefaultReconnectAttempts = 10
	DefaultReconnectBackoff  = 100 * time.Millisecond
	MaxReconnectBackoff      = 2 * time.Second
)

// InsertOnly reports whether a write command, sent as "CMD key value",
// only inserts: it refuses a key that exists with an EXIST error reply,
// counted as a conflict (the kvstore's RSET, and HSET key value of its
// hash engine). Such a write run must not meet a key twice.
func InsertOnly(cmd string) bool {
	return strings.EqualFold(cmd, "RSET") || strings.EqualFold(cmd, "HSET")
}

// InsertOnlyErrors returns why a run of c would count writes that an
// insert-only write command refuses: a set run of more requests than
// keys its order can give once, or a mixed run, whose writes meet the
// keys written before. Nil for a run that cannot meet a key twice.
func (c Config) InsertOnlyErrors() error {
	if !InsertOnly(c.SetCmd) || len(c.Commands) > 0 {
		return nil
	}
	switch {
	case c.Mode == ModeSet && c.Duration > 0:
		return fmt.Errorf("%s only inserts: a set run bounded by time (--duration) would meet its keys again and count the refused writes: give --requests at most --keyspace (%d), or a write command that overwrites (--set-cmd SET)", c.SetCmd, c.Keyspace)
	case c.Mode == ModeSet && (c.Requests > c.Keyspace || c.KeyPattern != keyspace.Sequential && c.KeyPattern != keyspace.Permutation && c.KeyPattern != ""):
		if c.Requests > c.Keyspace {
			return fmt.Errorf("%s only inserts: a set run of %d requests over %d keys would have %d refused writes counted as requests: give --keyspace at least --requests (%d), or a write command that overwrites (--set-cmd SET)",
				c.SetCmd, c.Requests, c.Keyspace, c.Requests-c.Keyspace, c.Requests)
		}
		return fmt.Errorf("%s only inserts: the key pattern %s draws keys again, and each refused write would count as a request: use the permutation or sequential order, or a write command that overwrites (--set-cmd SET)", c.SetCmd, c.KeyPattern)
	case c.Mode == ModeMixed:
		return fmt.Errorf("%s only inserts: the writes of a mixed run meet keys written before and would be refused, yet counted as requests: use a write command that overwrites (--set-cmd SET), or a command mix that inserts past the keyspace (key pattern insert)", c.SetCmd)
	}
	return nil
}

// DefaultThreads is the default number of worker threads: one per CPU.
func DefaultThreads() int { return runtime.NumCPU() }

// DefaultKeyPattern is the key order used when Config.KeyPattern is empty:
// a permutation for ModeSet (no key is written twice within a pass, so
// insert-only commands do not collide), uniform random otherwise.
func DefaultKeyPattern(m Mode) keyspace.Pattern {
	if m == ModeSet {
		return keyspace.Permutation
	}
	return keyspace.Random
}

// Config describes one run. Start from DefaultConfig: a zero field means
// zero (an empty value, no writes), and Normalize refuses the fields where
// zero means nothing (no pipeline, no connections). Only what derives from
// other fields is filled in by Normalize: the key pattern from the mode,
// the Zipf exponent of keyspace.Zipf, the threads capped at the connections, and
// the timeouts, reconnect attempts and backoff and progress interval,
// where zero or less means the default.
type Config struct {
	// Addr is the server's host:port, or unix:PATH for a Unix socket
	// (control.SocketPath).
	Addr string `json:"addr"`
	// User, when set, is the ACL user of AUTH on every connection.
	User string `json:"user,omitempty"`
	// Password, when set, is sent with AUTH on every connection.
	Password string `json:"-"`
	// DB, when positive, is selected with SELECT on every connection,
	// the prefill's and the checks' included; a cluster has only 0.
	DB int `json:"db,omitempty"`
	// TLS, when set, runs every connection over TLS with this
	// configuration (tlsconf.Options.Config makes one); nil is plaintext.
	// A Result decoded from JSON has an empty one when its run used TLS.
	TLS *tls.Config `json:"-"`
	// RESP3 opens every connection, the load's and the checks', with
	// HELLO 3 and reads every reply as RESP3; the JSON settings say
	// "resp": 3. A server without RESP3 fails the run at its first dial
	// (control.NoRESP3Error).
	RESP3 bool `json:"-"`
	// Cluster drives a Redis Cluster: the slot map is read from Addr (or
	// ClusterSeeds), Connections is per master, and every request goes to
	// its key's master (see cluster.go).
	Cluster bool `json:"cluster,omitempty"`
	// ClusterSeeds are the addresses the slot map is read from, the first
	// that answers; Addr when empty.
	ClusterSeeds []string `json:"-"`
	// ReadFromReplicas, with Cluster, sends each read to a replica of
	// its key's slot (the replicas CLUSTER SLOTS lists, in turn), each
	// replica connection sending READONLY first; writes go to the
	// masters. A slot range without a replica is read from its master.
	ReadFromReplicas bool `json:"read_from_replicas,omitempty"`
	// Replicas, without Cluster, are servers (host:port) that replicate
	// Addr: reads go to them, in turn, and writes to Addr. Each
	// connection is then a socket to Addr and one to every replica.
	Replicas []string `json:"replicas,omitempty"`

	// Mode is the request mix.
	Mode Mode `json:"mode"`
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
	// most requests in flight per connection (open loop).
	Pipeline int `json:"pipeline"`
	// Connections is the number of connections, spread over Threads worker
	// threads (never more threads than connections, or in cluster mode
	// or with replicas than their sockets). With Segments > 1 it
	// is the total over all agents (raised to Segments if smaller), and
	// this run opens its share (see Segment).
	Connections int `json:"connections"`
	Threads     int `json:"threads"`

	// Segment and Segments make this run agent Segment (0-based) of
	// Segments that together do exactly the work of one run with this
	// Config; 0 or 1 Segments is the whole run. Connection g of the
	// Connections (global index) belongs to agent g mod Segments, and it
	// keeps its global index for everything it does: its key stripe
	// (positions g, g+C, ...), its share of Requests (and of
	// WarmupRequests), its open-loop schedule (offset g/Rate, interval
	// C/Rate) and its random streams. So the agents' requests add up to
	// Requests, their rates to Rate, and in ModeSet with a permutation
	// they write disjoint keys. Threads is capped at this agent's
	// connections.
	Segment  int `json:"segment"`
	Segments int `json:"segments"`
	// StartAt, when set, is the wall-clock time at which the run starts
	// its warmup or measured phase, after connecting: agents given the
	// same StartAt measure overlapping windows. Run fails with
	// ErrLateStart when it is reached more than MaxStartLate after it.
	StartAt time.Time `json:"-"`

	// Keyspace is the number of distinct keys, 0 to Keyspace-1.
	Keyspace int64 `json:"keyspace"`
	// KeyPrefix starts every key.
	KeyPrefix string `json:"key_prefix"`
	// KeyPattern is the order of keys; empty means DefaultKeyPattern(Mode).
	KeyPattern keyspace.Pattern `json:"key_pattern"`
	// Zipf is the exponent of keyspace.Zipf (> 0); setting it with an empty
	// KeyPattern selects keyspace.Zipf.
	Zipf float64 `json:"zipf"`
	// KeyMedian and KeyStddev shape keyspace.Gaussian: 0 means the middle of
	// the keyspace, (Keyspace-1)/2, and Keyspace/6, as
	// memtier_benchmark's --key-median and --key-stddev.
	KeyMedian float64 `json:"key_median,omitempty"`
	KeyStddev float64 `json:"key_stddev,omitempty"`
	// ValueSize is the length of written values in bytes.
	ValueSize int `json:"value_size"`
	// ValueSizes, when set, replaces ValueSize in a command mix (and its
	// prefill; --mode runs ignore it): each key's value has the size this
	// distribution gives it,
	// a function of Seed and the key (see ValueSizeOf), so that reads
	// know it. ValueSize should then be the largest size.
	ValueSizes []keyspace.SizeRange `json:"-"`
	// RandomData makes the values random bytes, every bit of a stream
	// seeded by (Seed, key), so that they do not compress; still a
	// function of the seed and the key, so VerifyGet checks them (see
	// keyspace.AppendRandomValue). The prefill and a command mix write
	// them too.
	RandomData bool `json:"random_data,omitempty"`
	// ExpiryMin and ExpiryMax, when set, give every SET of a --mode run
	// EX n, n seconds drawn uniformly from [ExpiryMin, ExpiryMax] per
	// key (a function of Seed and the key). Only with SetCmd SET and
	// writes; the prefill's keys do not expire.
	ExpiryMin int `json:"expiry_min,omitempty"`
	ExpiryMax int `json:"expiry_max,omitempty"`
	// MultiKeyGet, when positive, makes every read of a --mode run an
	// MGET of this many keys, the connection's next ones: a request,
	// one reply, one latency; a miss when a key has none; with VerifyGet
	// every value is checked. Only with GetCmd GET, not in a cluster.
	MultiKeyGet int `json:"multi_key_get,omitempty"`
	// SetRatio is the percentage of writes in ModeMixed, 0 to 100.
	SetRatio int `json:"set_ratio"`
	// SetCmd and GetCmd are the write ("CMD key value") and read ("CMD key")
	// commands, e.g. RSET/RGET or HSET/HGET on the kvstore.
	SetCmd string `json:"set_cmd"`
	GetCmd string `json:"get_cmd"`
	// Commands, when set, replaces Mode, SetRatio, SetCmd and GetCmd: each
	// request is one of these commands, chosen by their ratios.
	Commands []mix.Command `json:"commands,omitempty"`
	// Replay, when set, replaces the request mix by a capture's commands
	// (package replay): each connection sends its clients' commands in
	// the capture's order (replayconn.go), and the run ends when they
	// are sent, ReplayLoops times. Requests, set by Normalize to all of
	// them when 0, sends only the capture's first Requests commands;
	// Duration ends the run early. No warmup, rate or cluster.
	Replay *replay.Capture `json:"-"`
	// ReplaySpeed, when positive, sends a MONITOR capture at its pace
	// times this (1: as captured, 2: twice as fast), each command's
	// latency measured from its intended send time; 0 sends as fast as
	// possible.
	ReplaySpeed float64 `json:"replay_speed,omitempty"`
	// ReplayLoops is how many times the capture is sent; 0 means 1.
	ReplayLoops int `json:"replay_loops,omitempty"`

	// Seed drives key choice and values: the same seed and settings give
	// the same key sequence on every connection and the same values. (In
	// a Result's JSON it is "seed", beside "settings".)
	Seed int64 `json:"-"`

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
	// with ReconnectBackoff doubling between attempts (see sock.redial):
	// its requests in flight count as ErrorReconnect errors, each
	// successful redial in Counts.Reconnects, and the run goes on. Without
	// it a lost connection fails the run. A cluster run follows its
	// masters' failovers without it.
	// (Zero or less attempts or backoff is the default.)
	Reconnect         bool          `json:"reconnect,omitempty"`
	ReconnectAttempts int           `json:"reconnect_attempts,omitempty"`
	ReconnectBackoff  time.Duration `json:"-"`

	// ConnectTimeout bounds connecting and AUTH, per connection.
	ConnectTimeout time.Duration `json:"-"`
	// Timeout fails the run when a connection with requests in flight gets
	// no reply for this long.
	Timeout time.Duration `json:"-"`

	// Interval, when positive, records the measured phase per interval
	// of this length (Result.Series), aligned on the wall clock; 0 does
	// not. StallBelow and StallLatency find its stalls (Result.Stalls):
	// intervals whose QPS is below StallBelow times the median interval
	// QPS, or in which a request waited longer than StallLatency (0: no
	// latency rule).
	Interval     time.Duration `json:"-"`
	StallBelow   float64       `json:"stall_below,omitempty"`
	StallLatency time.Duration `json:"-"`

	// Progress, when set, is called every ProgressInterval while a phase
	// runs, and once at its end, from one goroutine, never concurrently.
	Progress         func(Progress) `json:"-"`
	ProgressInterval time.Duration  `json:"-"`

	// Observe, when set with Interval, is called with each worker's
	// finished interval of the measured phase (not the warmup's), once
	// it joined Result.Series: by the end of Run the calls add up to the
	// series. It is called from the workers, concurrently, once per
	// interval and worker; the point's histograms are the worker's and
	// valid only during the call. Points carry Commands whenever the run
	// has named commands (a single one too), never Nodes.
	Observe func(measure.Point) `json:"-"`
}

// Progress is a snapshot of a running phase, passed to Config.Progress.
type Progress struct {
	// Phase is "warmup", "run" or "prefill".
	Phase string
	// Done is the number of replies received so far in this phase.
	Done int64
	// Total is the number of requests the phase will send, 0 when it is
	// bounded by time or has read-modify-writes (Command.Then).
	Total int64
	// Elapsed is the time since the phase started; Duration its planned
	// length when bounded by time, else 0.
	Elapsed  time.Duration
	Duration time.Duration
	// Final is true for the last call of a phase.
	Final bool
	// Last is the latest interval that ended (with Config.Interval):
	// its QPS and p99 latency in µs; nil before the first.
	Last *IntervalFigures
}

// IntervalFigures are one interval's figures in a Progress.
type IntervalFigures struct {
	QPS, P99Us float64
}

// DefaultConfig returns the configuration of a run with every setting at
// its default: the starting point of every Config.
func DefaultConfig() Config {
	return Config{
		Addr:              DefaultAddr,
		Mode:              DefaultMode,
		Requests:          DefaultRequests,
		Pipeline:          DefaultPipeline,
		Connections:       DefaultConnections,
		Threads:           DefaultThreads(),
		Keyspace:          DefaultKeyspace,
		KeyPrefix:         DefaultKeyPrefix,
		ValueSize:         DefaultValueSize,
		SetRatio:          DefaultSetRatio,
		SetCmd:            DefaultSetCmd,
		GetCmd:            DefaultGetCmd,
		ConnectTimeout:    DefaultConnectTimeout,
		ReconnectAttempts: DefaultReconnectAttempts,
		ReconnectBackoff:  DefaultReconnectBackoff,
		Timeout:           DefaultTimeout,
		ProgressInterval:  DefaultProgressInterval,
		Interval:          DefaultInterval,
		StallBelow:        measure.DefaultStallBelow,
		StallLatency:      measure.DefaultStallLatency,
	}
}

// derive fills in what derives from other fields.
func (c Config) derive() Config {
	if c.Segments == 0 {
		c.Segments = 1
	}
	if c.Connections >= 1 && c.Connections < c.Segments {
		c.Connections = c.Segments
	}
	// A cluster run has a socket per connection and master, the masters
	// unknown yet: dialCluster leaves threads beyond the sockets idle.
	if local := c.LocalConnections(); c.Threads > local && local > 0 && !c.Cluster && len(c.Replicas) == 0 {
		c.Threads = local
	}
	if c.KeyPattern == "" {
		if c.Zipf > 0 {
			c.KeyPattern = keyspace.Zipf
		} else {
			c.KeyPattern = DefaultKeyPattern(c.Mode)
		}
	}
	if c.KeyPattern == keyspace.Zipf && c.Zipf == 0 {
		c.Zipf = keyspace.DefaultZipf
	}
	if z := keyspace.NewSizes(c.ValueSizes, c.Seed); z != nil {
		c.ValueSize = z.Max()
	}
	if c.UsesPattern(keyspace.Gaussian) {
		if c.KeyMedian == 0 {
			c.KeyMedian = float64(c.Keyspace-1) / 2
		}
		if c.KeyStddev == 0 {
			c.KeyStddev = float64(c.Keyspace) / 6
		}
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ReconnectAttempts <= 0 {
		c.ReconnectAttempts = DefaultReconnectAttempts
	}
	if c.ReconnectBackoff <= 0 {
		c.ReconnectBackoff = DefaultReconnectBackoff
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.Replay != nil && c.Replay.Len() > 0 && (c.Requests == 0 || c.Requests > c.replayTotal()) {
		c.Requests = c.replayTotal()
	}
	return c
}

// Normalize returns c with its derived fields filled in, as Run uses it and
// as Result.Config reports it, or an error naming every invalid field.
func (c Config) Normalize() (Config, error) {
	c = c.derive()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Mode {
	case ModeSet, ModeGet, ModeMixed:
	default:
		bad("mode %q: want set, get or mixed", c.Mode)
	}
	switch c.KeyPattern {
	case keyspace.Random, keyspace.Sequential, keyspace.Permutation:
		if c.Zipf != 0 {
			bad("zipf %g needs key pattern zipf, not %s", c.Zipf, c.KeyPattern)
		}
	case keyspace.Zipf:
		if c.Zipf <= 0 {
			bad("zipf exponent %g: want > 0", c.Zipf)
		}
	case keyspace.Gaussian, keyspace.Insert:
		if c.Zipf != 0 {
			bad("zipf %g needs key pattern zipf, not %s", c.Zipf, c.KeyPattern)
		}
	case keyspace.Latest:
		if c.Zipf < 0 {
			bad("zipf exponent %g: want > 0", c.Zipf)
		}
	default:
		bad("key pattern %q: want %s", c.KeyPattern, keyspace.PatternNames)
	}
	if c.UsesPattern(keyspace.Gaussian) {
		if c.KeyMedian < 0 || c.KeyMedian > float64(c.Keyspace-1) {
			bad("key median %g: want 0 to %d (the keyspace)", c.KeyMedian, c.Keyspace-1)
		}
		if c.KeyStddev <= 0 || c.KeyStddev > keyspace.MaxStddev*float64(c.Keyspace) {
			bad("key stddev %g: want > 0 and at most %d times the keyspace", c.KeyStddev, keyspace.MaxStddev)
		}
	} else if c.KeyMedian != 0 || c.KeyStddev != 0 {
		bad("key median and stddev need key pattern gaussian, not %s", c.KeyPattern)
	}
	if c.Addr == "" {
		bad("no server address")
	}
	if c.Requests < 0 || c.Requests == 0 && c.Duration <= 0 {
		bad("requests %d: want >= 1, or a duration", c.Requests)
	}
	if c.Duration < 0 || c.Warmup < 0 || c.WarmupRequests < 0 {
		bad("duration and warmup must not be negative")
	}
	if c.Rate < 0 {
		bad("rate %g: want >= 0", c.Rate)
	}
	if c.Interval < 0 || c.Interval > 0 && c.Interval < time.Millisecond {
		bad("interval %v: want 0 (none) or at least 1ms", c.Interval)
	}
	if c.StallBelow < 0 || c.StallBelow >= 1 || c.StallLatency < 0 {
		bad("stall thresholds %g and %v: want a fraction from 0 to below 1, and a latency >= 0", c.StallBelow, c.StallLatency)
	}
	if c.Pipeline < 1 || c.Pipeline > 1<<20 {
		bad("pipeline %d: want 1 to %d", c.Pipeline, 1<<20)
	}
	if c.Connections < 1 || c.Connections > 1<<16 {
		bad("connections %d: want 1 to %d", c.Connections, 1<<16)
	}
	if c.Cluster {
		errs = append(errs, mix.CheckCluster(c.Commands)...)
	}
	if c.Reconnect && c.Cluster {
		bad("reconnect: a cluster run follows its masters' failovers by itself")
	}
	errs = append(errs, c.endpointErrors()...)
	errs = append(errs, c.replicaErrors()...)
	errs = append(errs, c.replayErrors()...)
	errs = append(errs, c.dataErrors()...)
	if c.Segments < 1 || c.Segments > 1<<16 {
		bad("segments %d: want 1 to %d", c.Segments, 1<<16)
	} else if c.Segment < 0 || c.Segment >= c.Segments {
		bad("segment %d/%d: want 0 to %d", c.Segment, c.Segments, c.Segments-1)
	}
	if c.Threads < 1 {
		bad("threads %d: want >= 1", c.Threads)
	}
	if c.Keyspace < 1 {
		bad("keyspace %d: want >= 1", c.Keyspace)
	}
	if c.ValueSize < 0 || c.ValueSize > keyspace.MaxValueSize {
		bad("value size %d: want 0 to %d", c.ValueSize, keyspace.MaxValueSize)
	}
	if c.SetRatio < 0 || c.SetRatio > 100 {
		bad("set ratio %d: want 0 to 100", c.SetRatio)
	}
	if c.SetCmd == "" || c.GetCmd == "" {
		bad("no write or read command")
	}
	if len(c.Commands) == 0 && c.KeyPattern.PastKeyspace() {
		bad("key pattern %s needs a command mix (--command or --workload)", c.KeyPattern)
	}
	errs = append(errs, mix.Check(c.Commands)...)
	errs = append(errs, keyspace.SizeErrors(c.ValueSizes)...)
	return c, errors.Join(errs...)
}

// endpointErrors says what of the server's address, database and TLS
// cannot go together.
func (c Config) endpointErrors() []error {
	var errs []error
	_, socket := control.SocketPath(c.Addr)
	if c.DB < 0 {
		errs = append(errs, fmt.Errorf("database %d: want >= 0", c.DB))
	}
	if c.Cluster && c.DB > 0 {
		errs = append(errs, fmt.Errorf("database %d: a Redis Cluster has only database 0", c.DB))
	}
	if c.Cluster && socket {
		errs = append(errs, fmt.Errorf("%s: a Redis Cluster is reached over TCP, not a Unix socket", c.Addr))
	}
	if c.TLS != nil && socket {
		errs = append(errs, fmt.Errorf("%s: TLS runs over TCP, not a Unix socket", c.Addr))
	}
	return errs
}

// UsesPattern reports whether the run or a command of its mix uses p.
func (c Config) UsesPattern(p keyspace.Pattern) bool {
	if c.KeyPattern == p {
		return true
	}
	for _, cmd := range c.Commands {
		if cmd.KeyPattern == p {
			return true
		}
	}
	return false
}

// keys is the spec of the run's key sequences.
func (c *Config) keys() keyspace.Spec {
	return keyspace.Spec{Keyspace: c.Keyspace, Pattern: c.KeyPattern, Zipf: c.Zipf, Median: c.KeyMedian, Stddev: c.KeyStddev, Seed: c.Seed}
}

// mixSettings is what the run's command mix is compiled for.
func (c *Config) mixSettings() mix.Settings {
	return mix.Settings{
		Prefix: c.KeyPrefix, Keys: c.keys(),
		Values:       c.values(),
		SingleWriter: c.Connections == 1 && c.Segments <= 1,
		Cluster:      c.Cluster,
	}
}

// values are the run's values.
func (c *Config) values() keyspace.Values {
	v := keyspace.NewValues(c.Seed, c.ValueSize, c.ValueSizes)
	v.Random = c.RandomData
	return v
}

// Control is how the run's control connections (topology, redirects,
// probes) reach the server: its credentials and TLS, the connect timeout.
func (c *Config) Control() control.Options {
	return control.Options{User: c.User, Password: c.Password, DB: c.DB, TLS: c.TLS, Timeout: c.ConnectTimeout, RESP3: c.RESP3}
}

// LocalConnections is the number of connections this run opens: the
// global indices g < Connections with g mod Segments == Segment.
func (c Config) LocalConnections() int {
	n := max(c.Segments, 1)
	if c.Segment < 0 || c.Segment >= n || c.Connections <= c.Segment {
		return 0
	}
	return (c.Connections - c.Segment + n - 1) / n
}
