package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
)

// ErrBehindSchedule is wrapped by the warning of an open-loop run whose
// requests left late: its send lag p99 exceeds MaxSendLag. Its latencies
// then include the client's own delay (or, with every pipeline slot busy,
// the server's backlog).
var ErrBehindSchedule = errors.New("behind schedule")

// MaxSendLag is the send lag p99 above which an open-loop run warns that
// the client did not keep its schedule.
const MaxSendLag = time.Millisecond

// behindSchedule returns the warning for a send lag summary (in µs), or nil.
func behindSchedule(lag measure.Latency) error {
	if lag.P99 <= float64(MaxSendLag.Microseconds()) {
		return nil
	}
	return fmt.Errorf("%w: requests left up to %.0f us late (send lag p50 %.0f us, p99 %.0f us, above %v); "+
		"the latencies include it: use more connections or a larger pipeline, or a lower rate",
		ErrBehindSchedule, lag.Max, lag.P50, lag.P99, MaxSendLag)
}

// Output formats of Bench.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Output says how Bench reports.
type Output struct {
	// Format is FormatText (the default) or FormatJSON.
	Format string
	// Live, when set, gets a progress line redrawn in place ("\r") every
	// Config.ProgressInterval; pass a terminal only.
	Live io.Writer
}

// Bench is "kvbench bench": Run, then the report in out.Format on w. The
// result is printed even when the run failed part way (with the counts so
// far), and the run's error is returned after it.
func Bench(ctx context.Context, cfg Config, w io.Writer, out Output) (Result, error) {
	switch out.Format {
	case "", FormatText, FormatJSON:
	default:
		return Result{}, fmt.Errorf("output format %q: want text or json", out.Format)
	}
	if out.Live != nil {
		prev := cfg.Progress
		cfg.Progress = func(p Progress) {
			writeLive(out.Live, p)
			if prev != nil {
				prev(p)
			}
		}
	}
	if len(cfg.Commands) > 0 {
		if err := mix.CheckCommands(ctx, cfg.Addr, cfg.control(), mix.Names(cfg.Commands)); err != nil {
			return Result{Config: cfg}, err
		}
	}
	res, err := Run(ctx, cfg)
	if res.Histogram == nil && err != nil {
		return res, err // nothing ran
	}
	var werr error
	if out.Format == FormatJSON {
		if err != nil {
			res.Error = err.Error()
		}
		werr = writeJSON(w, res)
	} else {
		werr = WriteText(w, res)
	}
	if err == nil {
		err = werr
	}
	return res, err
}

// writeLive redraws the live progress line.
func writeLive(w io.Writer, p Progress) {
	qps := 0.0
	if p.Elapsed > 0 {
		qps = float64(p.Done) / p.Elapsed.Seconds()
	}
	of := ""
	if p.Total > 0 {
		of = fmt.Sprintf("/%d (%.0f%%)", p.Total, 100*float64(p.Done)/float64(p.Total))
	}
	fmt.Fprintf(w, "\r\033[K%s: %d%s requests, %.1f s, %.0f req/s", p.Phase, p.Done, of, p.Elapsed.Seconds(), qps)
	if p.Final {
		fmt.Fprint(w, "\r\033[K")
	}
}

// WriteText writes the result as the reference bench tool does (QPS, avg us/op,
// elapsed), one "name: value" per line, preceded by the settings.
func WriteText(w io.Writer, r Result) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s", c.Addr)
	if c.TLS != nil {
		b.WriteString(" over TLS")
	}
	b.WriteString("\n")
	if len(c.Commands) > 0 {
		writeMix(&b, c)
	} else {
		fmt.Fprintf(&b, "mode: %s (set %s, get %s", c.Mode, c.SetCmd, c.GetCmd)
		if c.Mode == ModeMixed {
			fmt.Fprintf(&b, ", %d%% sets", c.SetRatio)
		}
		fmt.Fprintf(&b, ")\n")
	}
	values := strconv.Itoa(c.ValueSize)
	if len(c.ValueSizes) > 0 {
		values = keyspace.FormatValueSizes(c.ValueSizes) + " (size:weight)"
	}
	fmt.Fprintf(&b, "keys: %s over %d keys %s%s, values %s bytes", c.KeyPattern, c.Keyspace, c.KeyPrefix, strings.Repeat("N", keyspace.KeyWidth(c.Keyspace)), values)
	if c.KeyPattern == keyspace.Zipf {
		fmt.Fprintf(&b, ", zipf %g", c.Zipf)
	}
	if c.usesPattern(keyspace.Gaussian) {
		fmt.Fprintf(&b, ", gaussian median %g stddev %g", c.KeyMedian, c.KeyStddev)
	}
	fmt.Fprintf(&b, "\nload: %d connections on %d threads, pipeline %d, %s\n", c.Connections, c.Threads, c.Pipeline, loopName(c))
	if c.Segments > 1 {
		fmt.Fprintf(&b, "segment: %d/%d (%d of the %d connections)\n", c.Segment, c.Segments, c.LocalConnections(), c.Connections)
	}
	fmt.Fprintf(&b, "seed: %d\n", c.Seed)
	fmt.Fprintf(&b, "requests: %d\n", r.Requests)
	if r.Sent != r.Requests {
		fmt.Fprintf(&b, "sent: %d\n", r.Sent)
	}
	if c.Mode == ModeMixed && len(c.Commands) == 0 {
		fmt.Fprintf(&b, "sets: %d\ngets: %d\n", r.Sets, r.Gets)
	}
	fmt.Fprintf(&b, "elapsed: %.3f s\n", r.Elapsed.Seconds())
	fmt.Fprintf(&b, "QPS: %.2f\n", r.QPS)
	fmt.Fprintf(&b, "avg: %.2f us/op\n", r.UsPerOp)
	l := r.Latency
	fmt.Fprintf(&b, "latency us: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", l.P50, l.P90, l.P99, l.P999, l.Max)
	if r.SendLag != nil {
		l := r.SendLagLatency
		fmt.Fprintf(&b, "send lag us: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", l.P50, l.P90, l.P99, l.P999, l.Max)
	}
	writeCommands(&b, r.Commands)
	if r.Shards > 0 {
		fmt.Fprintf(&b, "redirects: moved %d, ask %d\n", r.Moved, r.Ask)
	}
	for _, n := range r.Nodes {
		l := n.Latency
		fmt.Fprintf(&b, "node %s (%s, %d slots): %d requests, QPS %.2f, latency us p50 %.2f  p99 %.2f  max %.2f, moved %d, ask %d\n",
			n.Addr, n.Role, n.Slots, n.Requests, n.QPS, l.P50, l.P99, l.Max, n.Moved, n.Ask)
	}
	fmt.Fprintf(&b, "errors: %s\n", errorList(r.Errors))
	fmt.Fprintf(&b, "conflicts: %d\n", r.Conflicts)
	fmt.Fprintf(&b, "misses: %d\n", r.Misses)
	fmt.Fprintf(&b, "verify failures: %d", r.VerifyFailures)
	if !c.VerifyGet {
		fmt.Fprintf(&b, " (not verified)")
	}
	b.WriteByte('\n')
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %v\n", w)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func loopName(c Config) string {
	if c.Rate > 0 {
		return fmt.Sprintf("open loop at %g req/s", c.Rate)
	}
	return "closed loop"
}

// errorList formats error counts as "ERR=3 WRONGTYPE=1", or "none".
func errorList(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// BehindSchedule returns the warning wrapping ErrBehindSchedule for an
// open loop's send lag summary (Result.SendLag), or nil.
func BehindSchedule(lag measure.Latency) error { return behindSchedule(lag) }

// WriteJSON writes r as one indented JSON object.
func WriteJSON(w io.Writer, r Result) error { return writeJSON(w, r) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeMix writes the mix line of a text report.
func writeMix(b *strings.Builder, c Config) {
	var sum int
	for _, cmd := range c.Commands {
		sum += max(cmd.Ratio, 1)
	}
	fmt.Fprintf(b, "mix:")
	for i, cmd := range c.Commands {
		if i > 0 {
			b.WriteString(",")
		}
		p := c.KeyPattern
		if cmd.KeyPattern != "" {
			p = cmd.KeyPattern
		}
		fmt.Fprintf(b, " %q %.1f%% %s", cmd.String(), 100*float64(max(cmd.Ratio, 1))/float64(sum), p)
	}
	b.WriteString("\n")
}

// writeCommands writes the per-command table of a text report.
func writeCommands(b *strings.Builder, cmds []measure.Command) {
	if len(cmds) == 0 {
		return
	}
	w := len("command")
	for _, c := range cmds {
		w = max(w, len(c.Name))
	}
	fmt.Fprintf(b, "%-*s %10s %12s %9s %9s %9s %9s %9s %7s\n", w, "command", "requests", "QPS", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors")
	for _, c := range cmds {
		l := c.Latency
		fmt.Fprintf(b, "%-*s %10d %12.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n", w, c.Name, c.Requests, c.QPS, l.P50, l.P90, l.P99, l.P999, l.Max, c.Errors)
	}
}
