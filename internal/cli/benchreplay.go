package cli

import (
	"fmt"
	"io"

	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/spf13/pflag"
)

// replayFlags are bench's --replay flags.
type replayFlags struct {
	file  string
	loops int
}

// addReplayFlags adds --replay, --replay-speed and --replay-loops.
func addReplayFlags(f *pflag.FlagSet, o *benchOptions) {
	c := &o.Config
	f.StringVar(&o.replay.file, "replay", "", "send the commands of FILE, a redis-cli MONITOR capture or one inline command per line, each captured client's in order on one connection (e.g. --replay monitor.txt)")
	f.Float64Var(&c.ReplaySpeed, "replay-speed", 0, "with --replay of a MONITOR capture, send at its captured pace times this (1: as captured, 2: twice as fast); 0: as fast as possible")
	f.IntVar(&o.replay.loops, "replay-loops", 1, "with --replay, send the file this many times")
}

// replayExcludes are the flags of a request mix, which a replay's
// commands replace.
var replayExcludes = []string{
	"mode", "tests", "command", "workload", "rate", "rates", "slo", "warmup", "cluster", "prefill",
	"verify-get", "verify", "allow-misses", "keyspace", "key-pattern", "key-prefix", "key-median", "key-stddev",
	"zipf", "value-size", "data-size-list", "set-ratio", "set-cmd", "get-cmd", "seed",
	"random-data", "expiry-range", "multi-key-get",
	"read-from-replicas", "replicas", "connections-start", "connections-step", "step-duration",
}

// validateReplay reads the --replay file into the run's configuration
// and refuses the flags a replay has no use for.
func (o *benchOptions) validateReplay(f *pflag.FlagSet) error {
	c := &o.Config
	if o.replay.file == "" {
		for _, n := range []string{"replay-speed", "replay-loops"} {
			if f.Changed(n) {
				return fmt.Errorf("--%s needs --replay", n)
			}
		}
		return nil
	}
	for _, n := range replayExcludes {
		if f.Changed(n) {
			return fmt.Errorf("--replay and --%s cannot be used together: a replay sends the file's commands", n)
		}
	}
	if len(o.commands.cmds) > 0 {
		return fmt.Errorf("--replay and a command after -- cannot be used together: a replay sends the file's commands")
	}
	if c.ReplaySpeed < 0 {
		return fmt.Errorf("--replay-speed %g: want >= 0 (0: as fast as possible)", c.ReplaySpeed)
	}
	if o.replay.loops < 1 {
		return fmt.Errorf("--replay-loops %d: want >= 1", o.replay.loops)
	}
	cp, err := replay.ParseFile(o.replay.file)
	if err != nil {
		return fmt.Errorf("--replay: %w", err)
	}
	if c.ReplaySpeed > 0 && !cp.Timed() {
		return fmt.Errorf("--replay-speed %g: %s holds inline commands, without times: only a MONITOR capture has a pace to keep", c.ReplaySpeed, cp.File)
	}
	c.Replay, c.ReplayLoops = cp, o.replay.loops
	if !f.Changed("requests") {
		c.Requests = 0 // the whole file
	}
	return nil
}

// reportReplay names the capture's first unparsable lines on w, as
// FILE:LINE: reason.
func (o *benchOptions) reportReplay(w io.Writer) {
	cp := o.Config.Replay
	if cp == nil {
		return
	}
	for _, e := range cp.Errors {
		fmt.Fprintln(w, e)
	}
	if more := cp.Unparsable - int64(len(cp.Errors)); more > 0 {
		fmt.Fprintf(w, "%s: %d more unparsable lines\n", cp.File, more)
	}
}
