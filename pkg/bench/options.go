package bench

import (
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/pkg/machine"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/tlsconf"
	"github.com/kvbench/kvbench/pkg/workload"
)

// Environment variables of bench.
const (
	// PasswordEnv holds the password when Options.Password is not given
	// (a Kubernetes Secret reaches an agent this way).
	PasswordEnv = "KVBENCH_PASSWORD"
	// JobIndexEnv is the index of a pod of a Kubernetes Indexed Job, the
	// I of Options.Segment "auto/N".
	JobIndexEnv = "JOB_COMPLETION_INDEX"
)

// Defaults of a connection ramp.
const (
	// DefaultStepDuration is how long each step of a ramp is measured
	// (--step-duration).
	DefaultStepDuration = 10 * time.Second
	// DefaultRampSettle is the unmeasured load before each step's
	// measurement when --warmup is not given: the new connections' first
	// requests are not the step's.
	DefaultRampSettle = time.Second
)

// ErrOptions is matched (errors.Is) by every error of Options.Validate: a
// usage error. Its message is the option's alone.
var ErrOptions = errors.New("invalid option")

// optionsError marks an error of the options (ErrOptions) without
// changing its message.
type optionsError struct{ error }

func (e optionsError) Is(target error) bool { return target == ErrOptions }
func (e optionsError) Unwrap() error        { return e.error }

// Options is what "kvbench bench" is asked to do: the load (Config), and
// around it the forms the command line gives it in (an address as host
// and port, a URI or a socket; a warmup as a count or a duration; value
// sizes as ranges), redis-benchmark's tests, a curve or a ramp, a replay,
// the report's format, a profile and live metrics. Start from
// DefaultOptions; Validate completes Config from the other fields and
// checks them all, each error naming its flag.
//
// Given names the options the user gave (by flag name): a workload's
// settings do not override them, and some options refuse to go with
// others only when given. Nil means none was given.
type Options struct {
	cpus machine.CPUSet // CPUs parsed
	// Config is the load and where it goes; its Addr, ValueSize,
	// ValueSizes, Warmup, Segment, StartAt, Commands, Replay, Replicas
	// and TLS are set by Validate from the fields below.
	loadgen.Config

	// Host and Port are the server's (--host, --port), unless URI or
	// Socket says where it is.
	Host string
	Port int
	// URI is redis://[[user]:password@]host[:port][/db], rediss://...
	// (TLS) or unix:///path (--uri).
	URI string
	// Socket is a Unix socket of the server (--socket).
	Socket string
	// TLSFiles are the TLS flags (--tls, --cacert, --cert, --key, --sni,
	// --insecure), made into Config.TLS.
	TLSFiles tlsconf.Options

	// WarmupSpec is an unmeasured warmup: a duration (5s) or a number of
	// requests (--warmup).
	WarmupSpec string
	// ValueSizeSpec is a value size in bytes, or with a command mix a
	// range MIN-MAX (--value-size); DataSizeList sizes by weight,
	// SIZE:WEIGHT,... (--data-size-list).
	ValueSizeSpec, DataSizeList string
	// Verify checks every reply whose value is known (--verify).
	Verify bool
	// ExpiryRange is MIN-MAX seconds of each SET's EX (--expiry-range).
	ExpiryRange string
	// CPUs binds the load generator's threads to these CPUs (--cpus: a
	// CPU list, machine.ParseCPUSet); "" or "off" leaves them to the
	// scheduler. Threads then default to one per CPU of the list.
	CPUs string

	// Tests are redis-benchmark's tests by name, comma-separated
	// (--tests).
	Tests string
	// CommandMix are the --command flags' commands; Command a command
	// given after "--", as redis-benchmark takes one.
	CommandMix []mix.Command
	Command    []string
	// Workload is a named workload or a YAML file (--workload).
	Workload string
	// ReplayFile is a capture to send (--replay), ReplayLoops times.
	ReplayFile  string
	ReplayLoops int
	// ReplicaList are a single server's replicas, host:port,...
	// (--replicas).
	ReplicaList string

	// SegmentSpec is "I/N" or "auto/N" (I from $JOB_COMPLETION_INDEX):
	// this agent's share of the load (--segment). StartAtSpec is the
	// common start, RFC 3339 (--start-at).
	SegmentSpec, StartAtSpec string
	// LoadJSON is the load as JSON (the Config's, as "kvbench run
	// --agents" and "kvbench k8s job" pass it): the document itself, a
	// file, or "-" for Stdin (--load-json). It replaces the flags that
	// describe the load; only AgentFlags may be given with it.
	LoadJSON string
	// Stdin is read for LoadJSON "-".
	Stdin io.Reader
	// Prefill writes this agent's share of the keyspace before the run.
	Prefill bool

	// Rates, SLO and SLOPrecision ask for a latency-throughput curve and
	// a capacity search (--rates, --slo, --slo-precision; package curve),
	// SLOMaxSteps bounds its open-loop phases (--slo-max-steps; 0:
	// curve.DefaultMaxSteps).
	Rates, SLO, SLOPrecision string
	SLOMaxSteps              int
	// ConnectionsStart, ConnectionsStep and StepDuration ask for a
	// connection ramp up to Connections (--connections-start,
	// --connections-step, --step-duration).
	ConnectionsStart, ConnectionsStep int
	StepDuration                      time.Duration

	// Output is output.FormatText, FormatJSON or FormatCSV (--output);
	// Quiet prints one line per command (-q); Percentiles are the
	// latency percentiles to report (--percentiles); HDRPrefix is where
	// the histograms are written (--hdr-file-prefix).
	Output      string
	Quiet       bool
	Percentiles string
	HDRPrefix   string
	// ProfilePID is a server process on this host whose CPU profile is
	// recorded during the load and drawn as a flame graph in ProfileOut
	// (--profile-pid, --profile-out).
	ProfilePID int
	ProfileOut string
	// MetricsAddr serves the load's Prometheus metrics at HOST:PORT
	// while it runs (--metrics-addr).
	MetricsAddr string

	// Given reports the options given explicitly, by flag name.
	Given map[string]bool
	// Live, when set, receives the progress line (a terminal).
	Live io.Writer
	// Log receives progress lines, warnings and the files written.
	Log io.Writer

	// What Validate parsed.
	tests        []rbtests.Test
	percentiles  []float64
	curve        curve.Spec
	ramp         *curve.Ramp
	workloadName string
	validated    bool
}

// DefaultOptions returns the options of "kvbench bench" without flags.
func DefaultOptions() Options {
	return Options{
		Config:        loadgen.DefaultConfig(),
		Host:          loadgen.DefaultHost,
		Port:          loadgen.DefaultPort,
		ValueSizeSpec: strconv.Itoa(loadgen.DefaultValueSize),
		ReplayLoops:   1,
		StepDuration:  DefaultStepDuration,
		SLOPrecision:  strconv.FormatFloat(curve.DefaultPrecision*100, 'f', -1, 64) + "%",
		Output:        output.FormatText,
	}
}

// AgentFlags are the flags an agent may be given beside --load-json: how
// it reaches the server (the password, TLS files), its share and start,
// its prefill, and what it reports. Every other flag describes the load.
var AgentFlags = []string{
	"load-json", "segment", "start-at", "prefill", "password",
	"tls", "cacert", "cert", "key", "sni", "insecure",
	"output", "quiet", "percentiles", "hdr-file-prefix", "metrics-addr", "profile-pid", "profile-out",
}

// given reports whether the option of flag name was given.
func (o *Options) given(name string) bool { return o.Given[name] }

// Validate completes o.Config from the other fields and checks every
// option, as Run does: the error names the flag, and matches ErrOptions.
func (o *Options) Validate() error {
	if o.validated {
		return nil
	}
	if err := o.validate(); err != nil {
		return optionsError{err}
	}
	o.validated = true
	return nil
}

func (o *Options) validate() error {
	c := &o.Config
	if o.CPUs != "" && o.CPUs != machine.Unpinned {
		set, err := machine.ParseCPUSet(o.CPUs)
		if err != nil {
			return fmt.Errorf("--cpus: %w", err)
		}
		o.cpus = set
	}
	if o.LoadJSON != "" {
		if err := o.readLoad(); err != nil {
			return err
		}
	} else if err := o.flagsLoad(); err != nil {
		return err
	}
	if !o.given("password") && c.Password == "" {
		if p, ok := os.LookupEnv(PasswordEnv); ok {
			c.Password = p
		}
	}
	if o.SegmentSpec != "" {
		i, n, err := ParseSegment(o.SegmentSpec, os.LookupEnv)
		if err != nil {
			return err
		}
		c.Segment, c.Segments = i, n
	}
	if o.StartAtSpec != "" {
		t, err := time.Parse(time.RFC3339Nano, o.StartAtSpec)
		if err != nil {
			return fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", o.StartAtSpec)
		}
		c.StartAt = t
	}
	if err := o.validateOutput(); err != nil {
		return err
	}
	if err := o.validateProfile(); err != nil {
		return err
	}
	if o.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(o.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr %q: want HOST:PORT: %w", o.MetricsAddr, err)
		}
	}
	if o.tests != nil && (c.Segments > 1 || o.Prefill) {
		return fmt.Errorf("--tests cannot be used with --segment or --prefill")
	}
	n, err := c.Normalize()
	if err != nil {
		return err
	}
	if err := o.validateCurve(); err != nil {
		return err
	}
	if err := o.validateRamp(); err != nil {
		return err
	}
	if o.tests == nil {
		return n.InsertOnlyErrors()
	}
	return nil
}

// flagsLoad completes the Config from the flags that describe the load.
func (o *Options) flagsLoad() error {
	c := &o.Config
	if err := o.resolveEndpoint(); err != nil {
		return err
	}
	if !o.given("seed") {
		c.Seed = time.Now().UnixNano()
	}
	if o.given("duration") && !o.given("requests") {
		c.Requests = 0
	}
	if w := strings.TrimSpace(o.WarmupSpec); w != "" {
		if n, err := strconv.ParseInt(w, 10, 64); err == nil {
			c.WarmupRequests = n
		} else if d, err := time.ParseDuration(w); err == nil {
			c.Warmup = d
		} else {
			return fmt.Errorf("--warmup %q: want a duration (5s) or a number of requests", o.WarmupSpec)
		}
	}
	if err := o.validateSizes(); err != nil {
		return err
	}
	c.VerifyGet = c.VerifyGet || o.Verify
	tc, err := o.TLSFiles.Config()
	if err != nil {
		return err
	}
	c.TLS = tc
	if err := o.validateClient(); err != nil {
		return err
	}
	if err := o.validateReplicas(); err != nil {
		return err
	}
	if err := o.validateWorkload(); err != nil {
		return err
	}
	if err := o.validateReplay(); err != nil {
		return err
	}
	if err := o.validateWait(); err != nil {
		return err
	}
	if len(c.ValueSizes) > 0 && len(c.Commands) == 0 && o.tests == nil {
		return fmt.Errorf("value size ranges and lists need a command mix (--command, --workload or --tests)")
	}
	return nil
}

// validateWait makes a --mode run with WAITs (Config.Wait) the mode's
// command mix (mix.ModeCommands), which the WAITs follow; redis-benchmark's
// tests take none.
func (o *Options) validateWait() error {
	c := &o.Config
	if !c.Wait.Enabled() {
		return nil
	}
	if o.tests != nil {
		return fmt.Errorf("--wait-ratio: not with --tests: give a --mode, --command or --workload")
	}
	if len(c.Commands) == 0 && c.Replay == nil {
		c.Commands = mix.ModeCommands(string(c.Mode), c.SetCmd, c.GetCmd, c.SetRatio)
		mix.NameCommands(c.Commands)
	}
	return nil
}

// resolveEndpoint sets the Config's address, user, password and database
// from the host and port, the URI or the socket, and turns TLS on for a
// rediss URI. Options that say the same thing twice are an error naming
// both.
func (o *Options) resolveEndpoint() error {
	c := &o.Config
	for _, pair := range [][2]string{
		{"uri", "host"}, {"uri", "port"}, {"uri", "socket"}, {"uri", "user"}, {"uri", "password"}, {"uri", "db"},
		{"socket", "host"}, {"socket", "port"},
	} {
		if o.given(pair[0]) && o.given(pair[1]) {
			return fmt.Errorf("--%s and --%s cannot be used together: both say how to reach the server", pair[0], pair[1])
		}
	}
	switch {
	case o.URI != "":
		ep, err := control.ParseURI(o.URI)
		if err != nil {
			return fmt.Errorf("--uri %w", err)
		}
		if o.TLSFiles.Enabled && !ep.TLS {
			return fmt.Errorf("--uri %s is plaintext and --tls asks for TLS: use rediss://", o.URI)
		}
		c.Addr, c.User, c.Password, c.DB = ep.Addr, ep.User, ep.Password, ep.DB
		o.TLSFiles.Enabled = o.TLSFiles.Enabled || ep.TLS
	case o.Socket != "":
		c.Addr = control.SocketPrefix + o.Socket
	default:
		if o.Port < 1 || o.Port > 65535 {
			return fmt.Errorf("--port %d: want a TCP port from 1 to 65535", o.Port)
		}
		c.Addr = net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	}
	if _, socket := control.SocketPath(c.Addr); socket && o.TLSFiles.Enabled {
		return fmt.Errorf("--tls needs a TCP server: a Unix socket (%s) is plaintext", c.Addr)
	}
	if c.DB < 0 {
		return fmt.Errorf("--db %d: want a database number >= 0", c.DB)
	}
	if c.DB > 0 && c.Cluster {
		return fmt.Errorf("--db %d: a Redis Cluster has only database 0 (--cluster)", c.DB)
	}
	return nil
}

// validateSizes sets the value size, or sizes, from ValueSize and
// DataSizeList.
func (o *Options) validateSizes() error {
	c := &o.Config
	if o.given("value-size") && o.given("data-size-list") {
		return fmt.Errorf("--value-size and --data-size-list cannot be used together")
	}
	size, ranges, err := keyspace.ParseValueSize(o.ValueSizeSpec)
	if err != nil {
		return fmt.Errorf("--value-size %w", err)
	}
	c.Load.ValueSize, c.ValueSizes = size, ranges
	if o.DataSizeList != "" {
		if c.ValueSizes, err = keyspace.ParseValueSizes(o.DataSizeList); err != nil {
			return fmt.Errorf("--data-size-list %w", err)
		}
	}
	return nil
}

// validateClient reads ExpiryRange and refuses the client options that
// would do nothing.
func (o *Options) validateClient() error {
	c := &o.Config
	if o.ExpiryRange != "" {
		lo, hi, ok := strings.Cut(o.ExpiryRange, "-")
		var err1, err2 error
		c.ExpiryMin, err1 = strconv.Atoi(strings.TrimSpace(lo))
		c.ExpiryMax, err2 = strconv.Atoi(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil || c.ExpiryMin < 1 || c.ExpiryMax < c.ExpiryMin {
			return fmt.Errorf("--expiry-range %q: want MIN-MAX seconds, 1 <= MIN <= MAX (60-600)", o.ExpiryRange)
		}
	}
	if o.Tests != "" || len(o.CommandMix) > 0 || o.Workload != "" {
		for _, n := range []string{"expiry-range", "multi-key-get"} {
			if o.given(n) {
				return fmt.Errorf("--%s applies to --mode runs, not to --tests, --command or --workload", n)
			}
		}
	}
	if !c.Reconnect {
		for _, n := range []string{"reconnect-attempts", "reconnect-backoff"} {
			if o.given(n) {
				return fmt.Errorf("--%s needs --reconnect", n)
			}
		}
	}
	return nil
}

// validateReplicas reads Replicas and refuses what cannot go with the
// replicas' options.
func (o *Options) validateReplicas() error {
	c := &o.Config
	if c.ReadFromReplicas && !c.Cluster {
		return fmt.Errorf("--read-from-replicas needs --cluster (a single server's replicas are given with --replicas host:port,...)")
	}
	if !o.given("replicas") {
		return nil
	}
	if c.Cluster {
		return fmt.Errorf("--replicas and --cluster cannot be used together: a cluster's replicas come from its slot map, use --read-from-replicas")
	}
	c.Replicas = nil
	for _, a := range strings.Split(o.ReplicaList, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--replicas %q: %q is not host:port with a TCP port from 1 to 65535", o.ReplicaList, a)
		}
		if a == c.Addr {
			return fmt.Errorf("--replicas %q: %s is the server the writes go to", o.ReplicaList, a)
		}
		c.Replicas = append(c.Replicas, a)
	}
	for _, n := range []string{"reconnect", "multi-key-get"} {
		if o.given(n) {
			return fmt.Errorf("--replicas and --%s cannot be used together", n)
		}
	}
	return nil
}

// validateWorkload checks that at most one of the mode, the tests, the
// command mix and the workload is given, and completes the mix or the
// tests.
func (o *Options) validateWorkload() error {
	if len(o.Command) > 0 {
		for _, n := range []string{"mode", "tests", "command", "workload"} {
			if o.given(n) {
				return fmt.Errorf("a command to send (%q, after the flags) and --%s cannot be used together", strings.Join(o.Command, " "), n)
			}
		}
		if o.ReplayFile != "" {
			return fmt.Errorf("--replay and a command to send (%q, after the flags) cannot be used together: a replay sends the file's commands", strings.Join(o.Command, " "))
		}
	}
	var given []string
	for _, n := range []string{"mode", "tests", "command", "workload"} {
		if o.given(n) {
			given = append(given, "--"+n)
		}
	}
	if len(given) > 1 {
		return fmt.Errorf("%s and %s cannot be used together", given[0], given[1])
	}
	if o.Tests != "" {
		t, err := rbtests.ParseTests(o.Tests)
		if err != nil {
			return fmt.Errorf("--tests: %w", err)
		}
		o.tests = t
	}
	cmds := slices.Clone(o.CommandMix)
	if len(o.Command) > 0 {
		cmds = append(cmds, mix.Command{Args: slices.Clone(o.Command)})
	}
	mix.NameCommands(cmds)
	o.Config.Commands = cmds
	if o.Workload != "" {
		w, err := workload.Load(o.Workload)
		if err != nil {
			return fmt.Errorf("--workload: %w", err)
		}
		w.Apply(&o.Config, o.given)
		o.workloadName = w.Name
	}
	return nil
}

// replayExcludes are the options of a request mix, which a replay's
// commands replace.
var replayExcludes = []string{
	"mode", "tests", "command", "workload", "rate", "rates", "slo", "warmup", "cluster", "prefill",
	"verify-get", "verify", "allow-misses", "keyspace", "key-pattern", "key-prefix", "key-median", "key-stddev",
	"zipf", "value-size", "data-size-list", "set-ratio", "set-cmd", "get-cmd", "seed",
	"random-data", "expiry-range", "multi-key-get",
	"read-from-replicas", "replicas", "connections-start", "connections-step", "step-duration",
}

// validateReplay reads the Replay file into the Config and refuses the
// options a replay has no use for.
func (o *Options) validateReplay() error {
	c := &o.Config
	if o.ReplayFile == "" {
		for _, n := range []string{"replay-speed", "replay-loops"} {
			if o.given(n) {
				return fmt.Errorf("--%s needs --replay", n)
			}
		}
		return nil
	}
	for _, n := range replayExcludes {
		if o.given(n) {
			return fmt.Errorf("--replay and --%s cannot be used together: a replay sends the file's commands", n)
		}
	}
	if c.ReplaySpeed < 0 {
		return fmt.Errorf("--replay-speed %g: want >= 0 (0: as fast as possible)", c.ReplaySpeed)
	}
	if o.ReplayLoops < 1 {
		return fmt.Errorf("--replay-loops %d: want >= 1", o.ReplayLoops)
	}
	cp, err := replay.ParseFile(o.ReplayFile)
	if err != nil {
		return fmt.Errorf("--replay: %w", err)
	}
	if c.ReplaySpeed > 0 && !cp.Timed() {
		return fmt.Errorf("--replay-speed %g: %s holds inline commands, without times: only a MONITOR capture has a pace to keep", c.ReplaySpeed, cp.File)
	}
	c.Replay, c.ReplayLoops = cp, o.ReplayLoops
	if !o.given("requests") {
		c.Requests = 0 // the whole file
	}
	return nil
}

// validateOutput parses the percentiles and checks the format.
func (o *Options) validateOutput() error {
	switch o.Output {
	case output.FormatText:
	case output.FormatJSON, output.FormatCSV:
		if o.Quiet {
			return fmt.Errorf("--quiet and --output %s cannot be used together: -q is a text report", o.Output)
		}
	default:
		return fmt.Errorf("--output %q: want text, json or csv", o.Output)
	}
	if o.Percentiles != "" {
		ps, err := measure.ParsePercentiles(o.Percentiles)
		if err != nil {
			return fmt.Errorf("--percentiles %w", err)
		}
		o.percentiles = ps
	}
	if o.HDRPrefix != "" {
		dir := filepath.Dir(o.HDRPrefix)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--hdr-file-prefix %s: directory %s does not exist", o.HDRPrefix, dir)
		}
	}
	return nil
}

// validateProfile checks that the process of ProfilePID is on this host.
func (o *Options) validateProfile() error {
	switch {
	case o.ProfilePID < 0:
		return fmt.Errorf("--profile-pid %d: want a process id, a whole number above 0", o.ProfilePID)
	case o.ProfilePID > 0:
		if err := syscall.Kill(o.ProfilePID, 0); err == syscall.ESRCH {
			return fmt.Errorf("--profile-pid %d: no process %d on this host", o.ProfilePID, o.ProfilePID)
		}
	}
	return nil
}

// validateCurve parses the curve's options and refuses what a curve cannot
// run with.
func (o *Options) validateCurve() error {
	var err error
	if o.curve, err = curve.ParseSpec(o.Rates, o.SLO, o.SLOPrecision, o.SLOMaxSteps); err != nil {
		return err
	}
	for _, name := range []string{"slo-precision", "slo-max-steps"} {
		if o.given(name) && len(o.curve.SLO) == 0 {
			return fmt.Errorf("--%s: give --slo too", name)
		}
	}
	if !o.curve.Enabled() {
		return nil
	}
	c := &o.Config
	switch {
	case c.Rate > 0:
		return errors.New("--rate and --rates/--slo cannot be used together: the curve sets each phase's rate")
	case o.tests != nil:
		return errors.New("--rates/--slo and --tests cannot be used together")
	case o.Output != output.FormatText && o.Output != output.FormatJSON:
		return fmt.Errorf("--output %s: --rates/--slo print text or json", o.Output)
	case c.Segments > 1:
		return errors.New("--rates/--slo cannot run as an agent's segment (--segment): each phase's rate depends on the one before")
	case c.Mode == loadgen.ModeSet && len(c.Commands) == 0 && loadgen.InsertOnly(c.SetCmd):
		return fmt.Errorf("%s only inserts: each phase of --rates/--slo writes the keys again and would count refused writes; use --mode get after a --prefill, or a write command that overwrites (--set-cmd SET)", c.SetCmd)
	}
	return nil
}

// rampConflict says why an option cannot run with a ramp, where its name
// alone does not.
var rampConflict = map[string]string{
	"requests": ": each step lasts --step-duration",
	"duration": ": each step lasts --step-duration",
	"segment":  ": the steps of the agents would not line up",
	"start-at": ": only the first step could start then",
}

// validateRamp checks the ramp's options, and what a ramp cannot run
// with, and sets the Config to one step's (its Connections are set per
// step).
func (o *Options) validateRamp() error {
	if !o.given("connections-start") && !o.given("connections-step") {
		if o.given("step-duration") {
			return errors.New("--step-duration: give --connections-step (and --connections-start) to run a connection ramp")
		}
		return nil
	}
	if !o.given("connections-step") {
		return errors.New("--connections-start: give --connections-step too, the connections added at each step")
	}
	start := o.ConnectionsStart
	if !o.given("connections-start") {
		start = o.ConnectionsStep
	}
	c := &o.Config
	switch {
	case o.ConnectionsStep < 1:
		return fmt.Errorf("--connections-step %d: want at least 1", o.ConnectionsStep)
	case start < 1:
		return fmt.Errorf("--connections-start %d: want at least 1", start)
	case start > c.Connections && !o.given("connections-start"):
		return fmt.Errorf("--connections-step %d: the first step, above --connections %d, the ramp's last step (give --connections)", start, c.Connections)
	case start > c.Connections:
		return fmt.Errorf("--connections-start %d: above --connections %d, the ramp's last step", start, c.Connections)
	case o.StepDuration <= 0:
		return fmt.Errorf("--step-duration %s: want a positive duration such as 10s", o.StepDuration)
	}
	for _, name := range []string{"requests", "duration", "rates", "slo", "tests", "segment", "start-at", "quiet", "percentiles", "hdr-file-prefix"} {
		if o.given(name) {
			return fmt.Errorf("--%s and a connection ramp (--connections-start/--connections-step) cannot be used together%s", name, rampConflict[name])
		}
	}
	if c.Mode == loadgen.ModeSet && len(c.Commands) == 0 && loadgen.InsertOnly(c.SetCmd) {
		return fmt.Errorf("%s only inserts: each step of a connection ramp writes the keys again and would count refused writes; use --mode get after a --prefill, or a write command that overwrites (--set-cmd SET)", c.SetCmd)
	}
	o.ramp = &curve.Ramp{Start: start, Step: o.ConnectionsStep, Max: c.Connections}
	c.Requests, c.Duration = 0, o.StepDuration
	if !o.given("warmup") {
		c.Warmup = DefaultRampSettle
	}
	return nil
}

// ParseSegment parses a segment: "I/N", or "auto/N" with I from lookup's
// JobIndexEnv.
func ParseSegment(s string, lookup func(string) (string, bool)) (i, n int, err error) {
	is, ns, ok := strings.Cut(s, "/")
	n, nerr := strconv.Atoi(ns)
	if !ok || nerr != nil || n < 1 {
		return 0, 0, fmt.Errorf("--segment %q: want I/N with 0 <= I < N, or auto/N", s)
	}
	if is == "auto" {
		v, ok := lookup(JobIndexEnv)
		if !ok {
			return 0, 0, fmt.Errorf("--segment %s: %s is not set (a Kubernetes Indexed Job sets it)", s, JobIndexEnv)
		}
		if i, err = strconv.Atoi(v); err != nil || i < 0 || i >= n {
			return 0, 0, fmt.Errorf("--segment %s: %s=%q: want 0 to %d", s, JobIndexEnv, v, n-1)
		}
		return i, n, nil
	}
	if i, err = strconv.Atoi(is); err != nil || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--segment %q: want I/N with 0 <= I < N, or auto/N", s)
	}
	return i, n, nil
}
