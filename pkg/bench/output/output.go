// Package output writes what "kvbench bench" prints (package bench runs
// it): the text report of a run (the reference bench tool's "name: value"
// lines, then per command and per node), its JSON document
// (loadgen.Result's), its CSV, the histogram files, the live progress
// line, the table of redis-benchmark's tests, and load curves and ramps.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/measure"
)

// Output formats of Report.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Output says how Report reports.
type Output struct {
	// Format is FormatText (the default), FormatJSON or FormatCSV.
	Format string
	// Quiet makes the text report one line per command (WriteQuiet).
	Quiet bool
	// Percentiles, when set, replace the fixed percentiles of the text
	// report and are added to the JSON one (measure.Result.Percentiles).
	Percentiles []float64
	// HDRPrefix, when set, is where the histograms are written (WriteHDR).
	HDRPrefix string
	// Log, when set, gets a line naming each file written, and the
	// warnings of the CSV and quiet reports, which have no place for them.
	Log io.Writer
}

// Report writes the report of a run in out.Format on w, and the
// histogram files of out.HDRPrefix. runErr is the run's error, if it
// failed part way: the JSON report says it.
func Report(w io.Writer, res loadgen.Result, runErr error, out Output) error {
	res.Percentiles = out.Percentiles
	var err error
	switch {
	case out.Format == FormatJSON:
		if runErr != nil {
			res.Error = runErr.Error()
		}
		err = writeJSON(w, res)
	case out.Format == FormatCSV:
		err = WriteCSV(w, res, out.Percentiles)
		logWarnings(out.Log, res.Warnings)
	case out.Quiet:
		err = WriteQuiet(w, res)
		logWarnings(out.Log, res.Warnings)
	case out.Format == "" || out.Format == FormatText:
		err = WriteText(w, res)
	default:
		return fmt.Errorf("output format %q: want text, json or csv", out.Format)
	}
	if out.HDRPrefix != "" && err == nil {
		var paths []string
		paths, err = WriteHDR(out.HDRPrefix, res)
		LogFiles(out.Log, paths)
	}
	return err
}

// logWarnings writes each warning on w, when set: the CSV and quiet
// reports have no place for them (the text and JSON ones do).
func logWarnings(w io.Writer, warnings []error) {
	if w == nil {
		return
	}
	for _, e := range warnings {
		fmt.Fprintln(w, "warning:", e)
	}
}

// LogFiles names the histogram files written on w, when set.
func LogFiles(w io.Writer, paths []string) {
	if w != nil && len(paths) > 0 {
		fmt.Fprintf(w, "histograms: %s\n", strings.Join(paths, " "))
	}
}

// WriteLive redraws the live progress line of p, in place ("\r"): for a
// terminal only.
func WriteLive(w io.Writer, p loadgen.Progress) {
	qps := 0.0
	if p.Elapsed > 0 {
		qps = float64(p.Done) / p.Elapsed.Seconds()
	}
	of := ""
	if p.Total > 0 {
		of = fmt.Sprintf("/%d (%.0f%%)", p.Total, 100*float64(p.Done)/float64(p.Total))
	}
	fmt.Fprintf(w, "\r\033[K%s: %d%s requests, %.1f s, %.0f req/s", p.Phase, p.Done, of, p.Elapsed.Seconds(), qps)
	if l := p.Last; l != nil {
		fmt.Fprintf(w, "; last interval %.0f req/s, p99 %.0f us", l.QPS, l.P99Us)
	}
	if p.Moved > 0 || p.Ask > 0 {
		fmt.Fprintf(w, "; redirects: %d MOVED, %d ASK", p.Moved, p.Ask)
	}
	if p.Final {
		fmt.Fprint(w, "\r\033[K")
	}
}

// WriteText writes the result as the reference bench tool does (QPS, avg us/op,
// elapsed), one "name: value" per line, preceded by the settings.
func WriteText(w io.Writer, r loadgen.Result) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s", c.Addr)
	if c.TLS != nil {
		b.WriteString(" over TLS")
	}
	switch {
	case len(c.Replicas) > 0:
		fmt.Fprintf(&b, ", reads from replicas %s", strings.Join(c.Replicas, ","))
	case c.ReadFromReplicas:
		b.WriteString(", reads from replicas")
	}
	b.WriteString("\n")
	if r.Replay != nil {
		writeReplay(&b, r.Replay)
	} else if len(c.Commands) > 0 {
		writeMix(&b, c)
	} else {
		fmt.Fprintf(&b, "mode: %s (set %s, get %s", c.Mode, c.SetCmd, c.GetCmd)
		if c.Mode == loadgen.ModeMixed {
			fmt.Fprintf(&b, ", %d%% sets", c.SetRatio)
		}
		fmt.Fprintf(&b, ")\n")
	}
	if r.Replay == nil {
		writeKeys(&b, c)
	}
	fmt.Fprintf(&b, "load: %d connections on %d threads, pipeline %d, %s\n", c.Connections, c.Threads, c.Pipeline, loopName(c))
	if c.Segments > 1 {
		fmt.Fprintf(&b, "segment: %d/%d (%d of the %d connections)\n", c.Segment, c.Segments, c.LocalConnections(), c.Connections)
	}
	if r.Replay == nil {
		fmt.Fprintf(&b, "seed: %d\n", c.Seed)
	}
	fmt.Fprintf(&b, "requests: %d\n", r.Requests)
	if r.Sent != r.Requests {
		fmt.Fprintf(&b, "sent: %d\n", r.Sent)
	}
	if c.Mode == loadgen.ModeMixed && len(c.Commands) == 0 && r.Replay == nil {
		fmt.Fprintf(&b, "sets: %d\ngets: %d\n", r.Sets, r.Gets)
	}
	fmt.Fprintf(&b, "elapsed: %.3f s\n", r.Elapsed.Seconds())
	// A run whose every request was a refused write has no throughput to
	// print; one with some says what its rate counts.
	switch refused := refusedRow(r); {
	case refused.allRefused():
		fmt.Fprintf(&b, "QPS: no throughput: %s, the server wrote nothing (%.2f refusals per second)\n", refused.refusedNote(), r.QPS)
	case r.Conflicts > 0:
		fmt.Fprintf(&b, "QPS: %.2f (counts %s, which wrote nothing)\n", r.QPS, refused.refusedNote())
	default:
		fmt.Fprintf(&b, "QPS: %.2f\n", r.QPS)
	}
	if c.Rate > 0 {
		// In an open loop the time per request is the schedule's, not the
		// server's: the latency it takes is the mean below.
		fmt.Fprintf(&b, "avg: %.2f us/op (the schedule: 1e6 / the rate kept; mean latency %.2f us)\n", r.UsPerOp, r.Latency.Mean)
	} else {
		fmt.Fprintf(&b, "avg: %.2f us/op\n", r.UsPerOp)
	}
	fmt.Fprintf(&b, "latency us: %s\n", latencyLine(r.Latency, r.Histogram, r.Percentiles))
	if r.SendLag != nil {
		l := r.SendLagLatency
		fmt.Fprintf(&b, "send lag us: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", l.P50, l.P90, l.P99, l.P999, l.Max)
	}
	writeCommands(&b, r.Commands, r.Percentiles)
	if sr := r.Series; sr != nil {
		fmt.Fprintf(&b, "series: %d intervals of %v", len(sr.Points), sr.Interval)
		if st := r.Stalls; st != nil && st.Count > 0 {
			fmt.Fprintf(&b, "; stalls: %d, longest %.1f ms, total %.1f ms, at", st.Count, float64(st.Longest)/1e6, float64(st.Total)/1e6)
			for i, a := range st.At {
				if i == 10 {
					fmt.Fprintf(&b, " …")
					break
				}
				fmt.Fprintf(&b, " %.2f s", a.Seconds())
			}
		} else if st != nil {
			b.WriteString("; stalls: none")
		}
		b.WriteString("\n")
	}
	if r.Shards > 0 {
		fmt.Fprintf(&b, "redirects: moved %d, ask %d\n", r.Moved, r.Ask)
	}
	for _, n := range r.Nodes {
		writeNode(&b, n, len(c.Replicas) == 0) // a single server's nodes have no slots
	}
	fmt.Fprintf(&b, "errors: %s\n", errorList(r.Errors))
	if r.Reconnects > 0 || c.Reconnect {
		fmt.Fprintf(&b, "reconnects: %d\n", r.Reconnects)
	}
	fmt.Fprintf(&b, "conflicts: %d\n", r.Conflicts)
	if wt := c.Wait; wt.Enabled() {
		fmt.Fprintf(&b, "waits: %d acknowledged by %d replicas within %v, %d by fewer\n", r.WaitAcked, wt.Replicas, wt.Timeout, r.WaitShort)
	}
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

// writeNode writes a node's line: a cluster node's with its slots and
// redirects; a node that got no request without figures.
func writeNode(b *strings.Builder, n measure.Node, cluster bool) {
	fmt.Fprintf(b, "node %s (%s", n.Addr, n.Role)
	if cluster {
		fmt.Fprintf(b, ", %d slots", n.Slots)
	}
	fmt.Fprintf(b, "): %d requests", n.Requests)
	if l := n.Latency; n.Requests > 0 {
		fmt.Fprintf(b, ", QPS %.2f, latency us p50 %.2f  p99 %.2f  max %.2f", n.QPS, l.P50, l.P99, l.Max)
	}
	if cluster {
		fmt.Fprintf(b, ", moved %d, ask %d", n.Moved, n.Ask)
	}
	b.WriteByte('\n')
}

// writeKeys writes the keys line of a text report.
func writeKeys(b *strings.Builder, c loadgen.Config) {
	values := strconv.Itoa(c.ValueSize)
	if len(c.ValueSizes) > 0 {
		values = keyspace.FormatValueSizes(c.ValueSizes) + " (size:weight)"
	}
	fmt.Fprintf(b, "keys: %s over %d keys %s%s", c.KeyPattern, c.Keyspace, c.KeyPrefix, strings.Repeat("N", c.Keys().Width()))
	if c.KeyMinimum > 0 {
		fmt.Fprintf(b, " (%d to %d)", c.KeyMinimum, c.KeyMinimum+c.Keyspace-1)
	}
	fmt.Fprintf(b, ", values %s bytes", values)
	if c.KeyPattern == keyspace.Zipf {
		fmt.Fprintf(b, ", zipf %g", c.Zipf)
	}
	if c.UsesPattern(keyspace.Gaussian) {
		fmt.Fprintf(b, ", gaussian median %g stddev %g", c.KeyMedian, c.KeyStddev)
	}
	b.WriteString("\n")
}

// writeReplay writes the replay line of a text report: the capture and
// what became of its lines.
func writeReplay(b *strings.Builder, st *replay.Stats) {
	fmt.Fprintf(b, "replay: %s (%s", st.File, st.Format)
	if st.Format == replay.Monitor {
		fmt.Fprintf(b, ", %d clients", st.Clients)
	}
	fmt.Fprintf(b, "): %d lines, %d commands, %d skipped, %d unparsable\n", st.Lines, st.Commands, st.Skipped, st.Unparsable)
}

func loopName(c loadgen.Config) string {
	switch {
	case c.Replay != nil && c.ReplaySpeed > 0:
		return fmt.Sprintf("at the captured pace times %g", c.ReplaySpeed)
	case c.Replay != nil:
		return "closed loop, as fast as possible"
	}
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

// WriteJSON writes r as one indented JSON object.
func WriteJSON(w io.Writer, r loadgen.Result) error { return writeJSON(w, r) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeMix writes the mix line of a text report.
func writeMix(b *strings.Builder, c loadgen.Config) {
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

// writeCommands writes the per-command table of a text report, its
// percentile columns ps when given.
func writeCommands(b *strings.Builder, cmds []measure.Command, ps []float64) {
	if len(cmds) == 0 {
		return
	}
	w := len("command")
	for _, c := range cmds {
		w = max(w, len(c.Name))
	}
	fmt.Fprintf(b, "%-*s %10s %12s %s %7s\n", w, "command", "requests", "QPS", latencyHeader(ps), "errors")
	for _, c := range cmds {
		fmt.Fprintf(b, "%-*s %10d %12.2f %s %7d\n", w, c.Name, c.Requests, c.QPS, latencyCells(c.Latency, c.Histogram, ps), c.Errors)
	}
}

// latencyLine is the "latency us:" line's figures: the percentiles ps
// (fixedPercentiles when empty) and the maximum.
func latencyLine(l measure.Latency, h *hdrhistogram.Histogram, ps []float64) string {
	var b strings.Builder
	for i, v := range latencyFigures(l, h, ps) {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %.2f", v.name, v.us)
	}
	return b.String()
}

// latencyHeader and latencyCells are a table's latency columns.
func latencyHeader(ps []float64) string {
	var cols []string
	for _, v := range latencyFigures(measure.Latency{}, nil, ps) {
		cols = append(cols, fmt.Sprintf("%9s", v.name+" us"))
	}
	return strings.Join(cols, " ")
}

func latencyCells(l measure.Latency, h *hdrhistogram.Histogram, ps []float64) string {
	var cols []string
	for _, v := range latencyFigures(l, h, ps) {
		cols = append(cols, fmt.Sprintf("%9.2f", v.us))
	}
	return strings.Join(cols, " ")
}

type namedFigure struct {
	name string
	us   float64
}

// latencyFigures are the percentiles ps of h and its maximum, or without
// ps the fixed ones of l.
func latencyFigures(l measure.Latency, h *hdrhistogram.Histogram, ps []float64) []namedFigure {
	if len(ps) == 0 {
		return []namedFigure{{"p50", l.P50}, {"p90", l.P90}, {"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}}
	}
	m := measure.PercentilesOf(h, ps)
	var fs []namedFigure
	for _, p := range ps {
		k := measure.PercentileKey(p)
		fs = append(fs, namedFigure{k, m[k]})
	}
	return append(fs, namedFigure{"max", l.Max})
}

// WriteTestsText writes one line per test: its QPS, latency percentiles
// (ps when given) and errors.
func WriteTestsText(w io.Writer, cfg loadgen.Config, results []rbtests.TestResult, ps []float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s\n", cfg.Addr)
	fmt.Fprintf(&b, "load: %d connections on %d threads, pipeline %d, values %d bytes, keyspace %d, seed %d\n",
		cfg.Connections, min(cfg.Threads, cfg.Connections), cfg.Pipeline, cfg.ValueSize, cfg.Keyspace, cfg.Seed)
	fmt.Fprintf(&b, "%-12s %10s %12s %s %7s\n", "test", "requests", "QPS", latencyHeader(ps), "errors")
	for _, r := range results {
		fmt.Fprintf(&b, "%-12s %10d %12.2f %s %7d\n",
			strings.ToUpper(r.Test), r.Requests, r.QPS, latencyCells(r.Latency, r.Histogram, ps), r.ErrorCount())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSONTest is one test in the JSON report of RunTests: a summary row,
// as redis-benchmark's CSV has one per test.
type JSONTest struct {
	Test      string          `json:"test"`
	Requests  int64           `json:"requests"`
	QPS       float64         `json:"qps"`
	LatencyUs measure.Latency `json:"latency_us"`
	// PercentilesUs are the latencies at the chosen percentiles
	// (measure.PercentilesOf).
	PercentilesUs map[string]float64 `json:"percentiles_us,omitempty"`
	Errors        int64              `json:"errors"`
	ElapsedS      float64            `json:"elapsed_s"`
}

// JSONTests is the JSON report of RunTests.
type JSONTests struct {
	Tests    []JSONTest     `json:"tests"`
	Seed     int64          `json:"seed"`
	Settings loadgen.Config `json:"settings"`
	Error    string         `json:"error,omitempty"`
}

// WriteTestsJSON writes the results as one JSONTests object, with the
// latencies at the percentiles ps when given; runErr, when set, is its
// error.
func WriteTestsJSON(w io.Writer, cfg loadgen.Config, results []rbtests.TestResult, ps []float64, runErr error) error {
	j := JSONTests{Tests: []JSONTest{}, Seed: cfg.Seed, Settings: cfg}
	for _, r := range results {
		j.Tests = append(j.Tests, JSONTest{Test: r.Test, Requests: r.Requests, QPS: r.QPS,
			LatencyUs: r.Latency, PercentilesUs: measure.PercentilesOf(r.Histogram, ps), Errors: r.ErrorCount(), ElapsedS: r.Elapsed.Seconds()})
	}
	if runErr != nil {
		j.Error = runErr.Error()
	}
	return writeJSON(w, j)
}
