package loadgen

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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
func behindSchedule(lag Latency) error {
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
		if err := CheckCommands(cfg, commandNames(cfg.Commands)); err != nil {
			return Result{Config: cfg}, err
		}
	}
	res, err := Run(ctx, cfg)
	if res.Histogram == nil && err != nil {
		return res, err // nothing ran
	}
	var werr error
	if out.Format == FormatJSON {
		j := res.JSON()
		if err != nil {
			j.Error = err.Error()
		}
		werr = writeJSON(w, j)
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
		values = FormatValueSizes(c.ValueSizes) + " (size:weight)"
	}
	fmt.Fprintf(&b, "keys: %s over %d keys %s%s, values %s bytes", c.KeyPattern, c.Keyspace, c.KeyPrefix, strings.Repeat("N", KeyWidth(c.Keyspace)), values)
	if c.KeyPattern == KeyZipf {
		fmt.Fprintf(&b, ", zipf %g", c.Zipf)
	}
	if c.usesPattern(KeyGaussian) {
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
	if r.SendLagHistogram != nil {
		l := r.SendLag
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

// JSONResult is the JSON form of a Result, as WriteJSON writes it.
type JSONResult struct {
	Requests  int64       `json:"requests"`
	Sent      int64       `json:"sent"`
	Sets      int64       `json:"sets"`
	Gets      int64       `json:"gets"`
	ElapsedS  float64     `json:"elapsed_s"`
	QPS       float64     `json:"qps"`
	UsPerOp   float64     `json:"us_per_op"`
	LatencyUs JSONLatency `json:"latency_us"`
	// SendLagUs is the open loop's send lag (Result.SendLag); absent in a
	// closed loop.
	SendLagUs      *JSONLatency     `json:"send_lag_us,omitempty"`
	Errors         map[string]int64 `json:"errors"`
	Conflicts      int64            `json:"conflicts"`
	Misses         int64            `json:"misses"`
	VerifyFailures int64            `json:"verify_failures"`
	// Shards, Moved and Ask are Result's: a cluster run's masters and
	// redirects.
	Shards int   `json:"shards,omitempty"`
	Moved  int64 `json:"moved"`
	Ask    int64 `json:"ask"`
	// Nodes is Result.Nodes: each master's share of a cluster run; absent
	// otherwise.
	Nodes    []JSONNode   `json:"nodes,omitempty"`
	Warnings []string     `json:"warnings"`
	Seed     int64        `json:"seed"`
	Settings JSONSettings `json:"settings"`
	// StartUnixNs and EndUnixNs are the measured window (Result.Start and
	// Result.End) in Unix nanoseconds.
	StartUnixNs int64 `json:"start_unix_ns"`
	EndUnixNs   int64 `json:"end_unix_ns"`
	// LatencyHistogram is Result.Histogram whole, in HdrHistogram's
	// compressed base64 encoding (V2, as hdrhistogram.Histogram.Encode
	// writes it); SendLagHistogram is Result.SendLagHistogram, absent in a
	// closed loop.
	LatencyHistogram string `json:"latency_histogram"`
	SendLagHistogram string `json:"send_lag_histogram,omitempty"`
	// Commands is each command's share of a command mix
	// (Result.Commands); absent otherwise.
	Commands []JSONCommand `json:"commands,omitempty"`
	// Error is why the run failed (Bench's error, the counts being those
	// so far); absent when it completed.
	Error string `json:"error,omitempty"`
}

// JSONNode is a NodeResult with JSON names; LatencyHistogram is its
// Histogram in the encoding of JSONResult.LatencyHistogram.
type JSONNode struct {
	Addr             string      `json:"addr"`
	Role             string      `json:"role"`
	Slots            int         `json:"slots"`
	Requests         int64       `json:"requests"`
	QPS              float64     `json:"qps"`
	LatencyUs        JSONLatency `json:"latency_us"`
	Moved            int64       `json:"moved"`
	Ask              int64       `json:"ask"`
	LatencyHistogram string      `json:"latency_histogram"`
}

// JSONLatency is Latency with JSON names, in microseconds.
type JSONLatency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// JSONSettings is the Config of a result with JSON names; durations are in
// seconds.
type JSONSettings struct {
	Addr           string  `json:"addr"`
	Mode           Mode    `json:"mode"`
	Requests       int64   `json:"requests"`
	DurationS      float64 `json:"duration_s"`
	WarmupRequests int64   `json:"warmup_requests"`
	WarmupS        float64 `json:"warmup_s"`
	Rate           float64 `json:"rate"`
	Pipeline       int     `json:"pipeline"`
	Connections    int     `json:"connections"`
	Threads        int     `json:"threads"`
	Keyspace       int64   `json:"keyspace"`
	KeyPrefix      string  `json:"key_prefix"`
	KeyPattern     string  `json:"key_pattern"`
	Zipf           float64 `json:"zipf"`
	KeyMedian      float64 `json:"key_median,omitempty"`
	KeyStddev      float64 `json:"key_stddev,omitempty"`
	ValueSize      int     `json:"value_size"`
	// ValueSizes is Config.ValueSizes as --data-size-list takes it; like
	// the mix it belongs to, it is reported, not read back by Result.
	ValueSizes      string `json:"value_sizes,omitempty"`
	SetRatio        int    `json:"set_ratio"`
	SetCmd          string `json:"set_cmd"`
	GetCmd          string `json:"get_cmd"`
	VerifyGet       bool   `json:"verify_get"`
	AllowMisses     bool   `json:"allow_misses"`
	ContinueOnError bool   `json:"continue_on_error"`
	// Segment and Segments are Config.Segment and Config.Segments (0 and 1
	// for a whole run).
	Segment  int `json:"segment"`
	Segments int `json:"segments"`
	// StartAt is Config.StartAt in RFC 3339, empty when not set.
	StartAt string `json:"start_at,omitempty"`
	// Commands is Config.Commands, a command mix; absent otherwise.
	Commands []JSONCommandSetting `json:"commands,omitempty"`
	// TLS says the connections were TLS (Config.TLS set).
	TLS bool `json:"tls"`
}

// JSONCommandSetting is a Command of a mix with JSON names.
type JSONCommandSetting struct {
	Name       string   `json:"name,omitempty"`
	Args       []string `json:"args"`
	Ratio      int      `json:"ratio,omitempty"`
	KeyPattern string   `json:"key_pattern,omitempty"`
	Inline     bool     `json:"inline,omitempty"`
}

// JSON returns r in its JSON form.
func (r Result) JSON() JSONResult {
	c := r.Config
	j := JSONResult{
		Requests: r.Requests, Sent: r.Sent, Sets: r.Sets, Gets: r.Gets,
		ElapsedS: r.Elapsed.Seconds(), QPS: r.QPS, UsPerOp: r.UsPerOp,
		LatencyUs: JSONLatency(r.Latency),
		Errors:    r.Errors, Conflicts: r.Conflicts, Misses: r.Misses, VerifyFailures: r.VerifyFailures,
		Shards: r.Shards, Moved: r.Moved, Ask: r.Ask,
		Warnings: []string{},
		Seed:     c.Seed,
		Settings: JSONSettings{
			Addr: c.Addr, Mode: c.Mode, Requests: c.Requests, DurationS: seconds(c.Duration),
			WarmupRequests: c.WarmupRequests, WarmupS: seconds(c.Warmup), Rate: c.Rate,
			Pipeline: c.Pipeline, Connections: c.Connections, Threads: c.Threads,
			Keyspace: c.Keyspace, KeyPrefix: c.KeyPrefix, KeyPattern: string(c.KeyPattern), Zipf: c.Zipf,
			KeyMedian: c.KeyMedian, KeyStddev: c.KeyStddev,
			ValueSize: c.ValueSize, SetRatio: c.SetRatio, SetCmd: c.SetCmd, GetCmd: c.GetCmd,
			VerifyGet: c.VerifyGet, AllowMisses: c.AllowMisses, ContinueOnError: c.ContinueOnError,
			Segment: c.Segment, Segments: max(c.Segments, 1),
			TLS: c.TLS != nil,
		},
	}
	if len(c.ValueSizes) > 0 {
		j.Settings.ValueSizes = FormatValueSizes(c.ValueSizes)
	}
	if !c.StartAt.IsZero() {
		j.Settings.StartAt = c.StartAt.Format(time.RFC3339Nano)
	}
	for _, cmd := range c.Commands {
		j.Settings.Commands = append(j.Settings.Commands, JSONCommandSetting{
			Name: cmd.Name, Args: cmd.Args, Ratio: cmd.Ratio, KeyPattern: string(cmd.KeyPattern), Inline: cmd.Inline,
		})
	}
	if !r.Start.IsZero() {
		j.StartUnixNs, j.EndUnixNs = r.Start.UnixNano(), r.End.UnixNano()
	}
	j.LatencyHistogram = encodeHistogram(r.Histogram)
	if r.SendLagHistogram != nil {
		j.SendLagHistogram = encodeHistogram(r.SendLagHistogram)
	}
	if r.SendLagHistogram != nil {
		lag := JSONLatency(r.SendLag)
		j.SendLagUs = &lag
	}
	if j.Errors == nil {
		j.Errors = map[string]int64{}
	}
	j.Commands = jsonCommands(r.Commands)
	for _, n := range r.Nodes {
		j.Nodes = append(j.Nodes, JSONNode{
			Addr: n.Addr, Role: n.Role, Slots: n.Slots, Requests: n.Requests, QPS: n.QPS,
			LatencyUs: JSONLatency(n.Latency), Moved: n.Moved, Ask: n.Ask,
			LatencyHistogram: encodeHistogram(n.Histogram),
		})
	}
	for _, w := range r.Warnings {
		j.Warnings = append(j.Warnings, w.Error())
	}
	return j
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// encodeHistogram returns h in HdrHistogram's compressed base64 encoding,
// an empty histogram for nil.
func encodeHistogram(h *hdrhistogram.Histogram) string {
	if h == nil {
		h = newHistogram()
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		// Only an unknown encoding version fails.
		panic(fmt.Sprintf("encode histogram: %v", err))
	}
	return string(b)
}

// Result turns j back into a Result: the histograms decoded, the
// settings into Config, the window into Start and End. It fails, naming
// the field, when a histogram does not decode or the settings are not
// valid.
func (j JSONResult) Result() (Result, error) {
	s := j.Settings
	c := Config{
		Addr: s.Addr, Mode: s.Mode, Requests: s.Requests, Duration: fromSeconds(s.DurationS),
		WarmupRequests: s.WarmupRequests, Warmup: fromSeconds(s.WarmupS), Rate: s.Rate,
		Pipeline: s.Pipeline, Connections: s.Connections, Threads: s.Threads,
		Keyspace: s.Keyspace, KeyPrefix: s.KeyPrefix, KeyPattern: KeyPattern(s.KeyPattern), Zipf: s.Zipf,
		KeyMedian: s.KeyMedian, KeyStddev: s.KeyStddev,
		ValueSize: s.ValueSize, SetRatio: s.SetRatio, SetCmd: s.SetCmd, GetCmd: s.GetCmd,
		VerifyGet: s.VerifyGet, AllowMisses: s.AllowMisses, ContinueOnError: s.ContinueOnError,
		Segment: s.Segment, Segments: s.Segments, Seed: j.Seed,
	}
	for _, cmd := range s.Commands {
		c.Commands = append(c.Commands, Command{
			Name: cmd.Name, Args: cmd.Args, Ratio: cmd.Ratio, KeyPattern: KeyPattern(cmd.KeyPattern), Inline: cmd.Inline,
		})
	}
	if s.StartAt != "" {
		t, err := time.Parse(time.RFC3339Nano, s.StartAt)
		if err != nil {
			return Result{}, fmt.Errorf("settings.start_at: %w", err)
		}
		c.StartAt = t
	}
	if s.TLS {
		c.TLS = &tls.Config{}
	}
	c, err := c.Normalize()
	if err != nil {
		return Result{}, fmt.Errorf("settings: %w", err)
	}
	r := Result{
		Config: c, Requests: j.Requests, Sent: j.Sent, Sets: j.Sets, Gets: j.Gets,
		Elapsed: fromSeconds(j.ElapsedS), QPS: j.QPS, UsPerOp: j.UsPerOp,
		Latency: Latency(j.LatencyUs), Errors: maps.Clone(j.Errors),
		Conflicts: j.Conflicts, Misses: j.Misses, VerifyFailures: j.VerifyFailures,
		Shards: j.Shards, Moved: j.Moved, Ask: j.Ask,
	}
	for i, n := range j.Nodes {
		h, err := hdrhistogram.Decode([]byte(n.LatencyHistogram))
		if err != nil {
			return Result{}, fmt.Errorf("nodes[%d].latency_histogram: %w", i, err)
		}
		r.Nodes = append(r.Nodes, NodeResult{
			Addr: n.Addr, Role: n.Role, Slots: n.Slots, Requests: n.Requests, QPS: n.QPS,
			Latency: Latency(n.LatencyUs), Histogram: h, Moved: n.Moved, Ask: n.Ask,
		})
	}
	for i, c := range j.Commands {
		h := newHistogram()
		if c.LatencyHistogram != "" {
			if h, err = hdrhistogram.Decode([]byte(c.LatencyHistogram)); err != nil {
				return Result{}, fmt.Errorf("commands[%d].latency_histogram: %w", i, err)
			}
		}
		r.Commands = append(r.Commands, CommandResult{
			Name: c.Command, Command: c.Args, Requests: c.Requests, Errors: c.Errors, QPS: c.QPS,
			Latency: Latency(c.LatencyUs), Histogram: h,
		})
	}
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	if j.StartUnixNs != 0 || j.EndUnixNs != 0 {
		r.Start, r.End = time.Unix(0, j.StartUnixNs), time.Unix(0, j.EndUnixNs)
	}
	if r.Histogram, err = hdrhistogram.Decode([]byte(j.LatencyHistogram)); err != nil {
		return Result{}, fmt.Errorf("latency_histogram: %w", err)
	}
	if j.SendLagHistogram != "" {
		if r.SendLagHistogram, err = hdrhistogram.Decode([]byte(j.SendLagHistogram)); err != nil {
			return Result{}, fmt.Errorf("send_lag_histogram: %w", err)
		}
		if j.SendLagUs != nil {
			r.SendLag = Latency(*j.SendLagUs)
		}
	}
	for _, w := range j.Warnings {
		r.Warnings = append(r.Warnings, errors.New(w))
	}
	return r, nil
}

func fromSeconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Summarize returns the percentiles of a latency histogram of nanoseconds
// in microseconds, as Result.Latency holds them; zero when it is empty.
func Summarize(h *hdrhistogram.Histogram) Latency { return summarize(h) }

// BehindSchedule returns the warning wrapping ErrBehindSchedule for an
// open loop's send lag summary (Result.SendLag), or nil.
func BehindSchedule(lag Latency) error { return behindSchedule(lag) }

// WriteJSON writes r.JSON() as one indented JSON object.
func WriteJSON(w io.Writer, r Result) error { return writeJSON(w, r.JSON()) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
