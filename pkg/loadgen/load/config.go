package load

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
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

// Config describes one run: where the load goes (the server, its
// credentials, a cluster or replicas), what it sends (a mode, a command
// mix or a capture to replay), the Load that shapes it, which agent's
// share it is, and the hooks that watch it. Start from DefaultConfig.
// Normalize fills in what derives from other fields (the key pattern from
// the mode, the Zipf exponent of keyspace.Zipf, the threads capped at the
// connections, the defaults of the Load's zero timeouts) and refuses the
// rest when it cannot run, naming each field by its flag.
//
// Its JSON (json.go) is the run's settings: a loadgen.Result's, and the load an
// agent receives ("kvbench bench --load-json"), so that the agents of a
// distributed run receive one description of it.
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
	// A Config decoded from JSON has an empty one when its run used TLS.
	TLS *tls.Config `json:"-"`
	// Cluster drives a Redis Cluster: the slot map is read from Addr (or
	// ClusterSeeds), Connections is per master, and every request goes to
	// its key's master (package loadgen says how).
	Cluster bool `json:"cluster,omitempty"`
	// ClusterSeeds are the addresses the slot map is read from, the first
	// that answers; Addr when empty.
	ClusterSeeds []string `json:"cluster_seeds,omitempty"`
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
	// SetCmd and GetCmd are the write ("CMD key value") and read ("CMD key")
	// commands, e.g. RSET/RGET or HSET/HGET on the kvstore.
	SetCmd string `json:"set_cmd"`
	GetCmd string `json:"get_cmd"`
	// Commands, when set, replaces Mode, SetRatio, SetCmd and GetCmd: each
	// request is one of these commands, chosen by their ratios.
	Commands []mix.Command `json:"commands,omitempty"`
	// Wait, when enabled, follows the mix's writes with WAIT on the same
	// connection (mix.Wait): a command of its own, mix.WaitName, in the
	// results. A single server's mix only: not in a cluster, with
	// replicas to read from, or in a replay.
	Wait mix.Wait `json:"wait,omitzero"`
	// Replay, when set, replaces the request mix by a capture's commands
	// (package replay): each connection sends its clients' commands in
	// the capture's order, and the run ends when they
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

	// Load shapes the load: requests, rate, connections, keys, values,
	// checks, timeouts and intervals.
	Load

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

	// Progress, when set, is called every ProgressInterval while a phase
	// runs, and once at its end, from one goroutine, never concurrently.
	Progress         func(Progress) `json:"-"`
	ProgressInterval time.Duration  `json:"-"`

	// Observe, when set with Interval, is called with each worker's
	// finished interval of the measured phase (not the warmup's), once
	// it joined loadgen.Result.Series: by the end of Run the calls add up to the
	// series. It is called from the workers, concurrently, once per
	// interval and worker; the point's histograms are the worker's and
	// valid only during the call. Points carry Commands whenever the run
	// has named commands (a single one too), never Nodes.
	Observe func(measure.Point) `json:"-"`

	// SplitOps, in ModeMixed, records the writes' and the reads'
	// latencies apart besides the whole (loadgen.Result.Ops), for the
	// report's per-command histogram files: a histogram more per reply.
	SplitOps bool `json:"-"`
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
	// Moved and Ask count the redirects followed so far in this phase
	// (a cluster's slot being moved); 0 without Config.Cluster.
	Moved, Ask int64
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
		Addr:             DefaultAddr,
		Mode:             DefaultMode,
		SetCmd:           DefaultSetCmd,
		GetCmd:           DefaultGetCmd,
		Load:             DefaultLoad(),
		ProgressInterval: DefaultProgressInterval,
	}
}

// derive fills in what derives from other fields.
func (c Config) derive() Config {
	c.Load = c.Load.withDefaults()
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
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.Replay != nil && c.Replay.Len() > 0 && (c.Requests == 0 || c.Requests > c.ReplayTotal()) {
		c.Requests = c.ReplayTotal()
	}
	return c
}

// Validate checks c as Normalize does.
func (c Config) Validate() error {
	_, err := c.Normalize()
	return err
}

// Normalize returns c with its derived fields filled in, as loadgen.Run uses it and
// as loadgen.Result.Config reports it, or an error naming every invalid field:
// the Load's (Load.Validate), and what cannot go with the server, the
// request mix or the other fields.
func (c Config) Normalize() (Config, error) {
	c = c.derive()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := c.Load.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch c.Mode {
	case ModeSet, ModeGet, ModeMixed:
	default:
		bad("--mode %q: want set, get or mixed", c.Mode)
	}
	switch c.KeyPattern {
	case keyspace.Zipf, keyspace.Latest:
	default:
		if c.Zipf != 0 {
			bad("--zipf %g needs --key-pattern zipf, not %s", c.Zipf, c.KeyPattern)
		}
	}
	if !c.UsesPattern(keyspace.Gaussian) && (c.KeyMedian != 0 || c.KeyStddev != 0) {
		bad("--key-median and --key-stddev need --key-pattern gaussian, not %s", c.KeyPattern)
	}
	if c.Addr == "" {
		bad("no server address")
	}
	if c.Cluster {
		errs = append(errs, mix.CheckCluster(c.Commands)...)
	}
	if c.Reconnect && c.Cluster {
		bad("--reconnect: a cluster run follows its masters' failovers by itself")
	}
	errs = append(errs, c.endpointErrors()...)
	errs = append(errs, c.replicaErrors()...)
	errs = append(errs, c.waitErrors()...)
	errs = append(errs, c.replayErrors()...)
	errs = append(errs, c.dataErrors()...)
	if c.Segments < 1 || c.Segments > MaxConnections {
		bad("--segment: %d segments: want 1 to %d", c.Segments, MaxConnections)
	} else if c.Segment < 0 || c.Segment >= c.Segments {
		bad("--segment %d/%d: want 0 to %d", c.Segment, c.Segments, c.Segments-1)
	}
	if c.SetCmd == "" || c.GetCmd == "" {
		bad("no write or read command")
	}
	if len(c.Commands) == 0 && c.KeyPattern.PastKeyspace() {
		bad("--key-pattern %s needs a command mix (--command or --workload)", c.KeyPattern)
	}
	errs = append(errs, mix.Check(c.Commands)...)
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

// MixSettings is what the run's command mix is compiled for.
func (c *Config) MixSettings() mix.Settings {
	return mix.Settings{
		Prefix: c.KeyPrefix, Keys: c.Keys(),
		Values:       c.Values(),
		SingleWriter: c.Connections == 1 && c.Segments <= 1,
		Cluster:      c.Cluster,
	}
}

// Values are the run's values.
func (c *Config) Values() keyspace.Values {
	v := keyspace.NewValues(c.Seed, c.ValueSize, c.ValueSizes)
	v.Random = c.RandomData
	return v
}

// Control is how the run's control connections (topology, redirects,
// probes) reach the server: its credentials and TLS, the connect timeout.
func (c *Config) Control() control.Options {
	return control.Options{User: c.User, Password: c.Password, DB: c.DB, TLS: c.TLS, Timeout: c.ConnectTimeout, RESP3: c.RESP3}
}

// Seeds are the addresses a cluster's slot map is read from:
// ClusterSeeds, or Addr when there are none.
func (c *Config) Seeds() []string {
	if len(c.ClusterSeeds) > 0 {
		return c.ClusterSeeds
	}
	return []string{c.Addr}
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

// dataErrors says what of the run's data settings (ExpiryMin/Max,
// MultiKeyGet) cannot go with the request mix or the server; their
// bounds are Load.Validate's.
func (c Config) dataErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.ExpiryMax > 0 {
		switch {
		case !strings.EqualFold(c.SetCmd, "SET") || len(c.Commands) > 0:
			bad("--expiry-range: needs the write command SET (not %s, nor a command mix), whose EX it sets", c.SetCmd)
		case c.Mode == ModeGet:
			bad("--expiry-range: a get run writes nothing")
		}
	}
	if c.MultiKeyGet > 0 {
		switch {
		case !strings.EqualFold(c.GetCmd, "GET") || len(c.Commands) > 0:
			bad("--multi-key-get: needs the read command GET (not %s, nor a command mix), which MGET replaces", c.GetCmd)
		case c.Mode == ModeSet:
			bad("--multi-key-get: a set run reads nothing")
		case c.Cluster:
			bad("--multi-key-get: the keys of one MGET would be in several slots of the cluster")
		}
	}
	return errs
}

// ReadsReplicas reports whether the run's reads go to replicas.
func (c Config) ReadsReplicas() bool { return len(c.Replicas) > 0 || c.Cluster && c.ReadFromReplicas }

// replicaErrors says what of the replicas' settings cannot go together.
// waitErrors says what of Wait cannot be sent with the rest.
func (c Config) waitErrors() []error {
	if !c.Wait.Enabled() {
		return nil
	}
	errs := c.Wait.Check()
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case len(c.Commands) == 0:
		bad("--wait-ratio: WAIT follows the writes of a command mix (--command, --workload; bench makes --mode one)")
	case !slices.ContainsFunc(c.Commands, func(cmd mix.Command) bool { return !mix.Reads(cmd) }):
		bad("--wait-ratio: the mix has no write for WAIT to acknowledge")
	case slices.ContainsFunc(c.Commands, func(cmd mix.Command) bool { return strings.EqualFold(cmd.Name, mix.WaitName) }):
		bad("--wait-ratio: a command of the mix is named %q, the WAIT's name", mix.WaitName)
	}
	if c.Cluster || len(c.Replicas) > 0 {
		bad("--wait-ratio: WAIT is sent on a single server's connections: not in a cluster or with replicas to read from")
	}
	if c.Replay != nil {
		bad("--wait-ratio: a replay sends its capture's commands alone")
	}
	return errs
}

func (c Config) replicaErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.ReadFromReplicas && !c.Cluster {
		bad("read from replicas: needs a cluster; a single server's replicas are given as Replicas")
	}
	if len(c.Replicas) == 0 {
		return errs
	}
	if c.Cluster {
		bad("replicas %v: a cluster's replicas come from its slot map: read from them with ReadFromReplicas", c.Replicas)
	}
	for _, a := range c.Replicas {
		if err := checkHostPort(a); err != nil {
			bad("replica %q: %w", a, err)
		} else if a == c.Addr {
			bad("replica %s: it is the server the writes go to", a)
		}
	}
	if c.Reconnect {
		bad("reconnect: not with replicas (a lost connection to the server or a replica fails the run)")
	}
	if c.MultiKeyGet > 0 {
		bad("multi-key get: not with replicas")
	}
	return errs
}

// checkHostPort checks a host:port address with a TCP port.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want host:port")
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return errors.New("want host:port, a TCP port from 1 to 65535")
	}
	return nil
}

// replayErrors says what of a replay's settings cannot be.
func (c Config) replayErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.ReplaySpeed < 0 || c.ReplayLoops < 0 {
		bad("replay speed %g and loops %d: want >= 0", c.ReplaySpeed, c.ReplayLoops)
	}
	cp := c.Replay
	if cp == nil {
		return errs
	}
	if cp.Len() == 0 {
		bad("%s: %v", cp.File, replay.ErrEmpty)
	}
	if c.ReplaySpeed > 0 && !cp.Timed() {
		bad("replay speed %g: %s is a file of inline commands, without times: only a MONITOR capture has a pace to keep", c.ReplaySpeed, cp.File)
	}
	if len(c.Commands) > 0 {
		bad("a replay sends the capture's commands, not a command mix")
	}
	if c.Rate > 0 {
		bad("rate %g: a replay is sent as fast as possible or at the captured pace (replay speed), not at a rate", c.Rate)
	}
	if c.Warmup > 0 || c.WarmupRequests > 0 {
		bad("warmup: a replay sends the capture once from its first command; there is nothing to warm up with")
	}
	if c.Cluster {
		bad("cluster: a replay's commands are not routed to their slots")
	}
	if c.ReadFromReplicas || len(c.Replicas) > 0 {
		bad("replicas: a replay sends every command to the one server, in its captured order")
	}
	return errs
}

// ReplayTotal is the number of commands a replay sends, all loops.
func (c Config) ReplayTotal() int64 {
	return int64(c.Replay.Len()) * int64(max(c.ReplayLoops, 1))
}
