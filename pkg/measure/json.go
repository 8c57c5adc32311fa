package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The JSON form of a Result is one object: the counters under their
// Counts names, "errors", "shards", the figures ("qps" with
// "qps_counts_refused" and "refused_writes" beside it, "us_per_op",
// "latency_us" with p50, p90, p99, p999, max and mean in µs, "send_lag_us"
// in an open loop), "percentiles_us" when percentiles were chosen
// (percentiles.go), "commands" and "nodes" (each with its own requests,
// qps, latency_us and histogram), the window ("elapsed_s",
// "start_unix_ns", "end_unix_ns"), the whole histograms
// ("latency_histogram", "send_lag_histogram": HdrHistogram's compressed
// V2 encoding in base64, as hdrhistogram-go's Encode writes it) and
// "warnings". Documents written by earlier versions of kvbench, which lack
// newer counters, decode with those counters zero.

// wire is the JSON form of what Result's own fields cannot say as they
// are: durations in seconds, times in Unix nanoseconds, histograms
// encoded, warnings as strings.
type wire struct {
	ElapsedS    float64  `json:"elapsed_s"`
	StartUnixNs int64    `json:"start_unix_ns"`
	EndUnixNs   int64    `json:"end_unix_ns"`
	SendLagUs   *Latency `json:"send_lag_us,omitempty"`
	// PercentilesUs are the latencies at Result.Percentiles.
	PercentilesUs    map[string]float64 `json:"percentiles_us,omitempty"`
	LatencyHistogram string             `json:"latency_histogram"`
	SendLagHistogram string             `json:"send_lag_histogram,omitempty"`
	Warnings         []string           `json:"warnings"`
	// SeriesIntervalS and Series are the series (Result.Series): each
	// point with its place in the window (t_s, length_s), its counts, QPS
	// and latencies, and what merges (its start and histograms).
	SeriesIntervalS float64     `json:"series_interval_s,omitempty"`
	Series          []pointJSON `json:"series,omitempty"`
	Stalls          *stallsJSON `json:"stalls,omitempty"`
}

// pointJSON is a Point in JSON.
type pointJSON struct {
	TS               float64         `json:"t_s"`
	LengthS          float64         `json:"length_s"`
	Requests         int64           `json:"requests"`
	Errors           int64           `json:"errors"`
	QPS              float64         `json:"qps"`
	Latency          pointLatency    `json:"latency_us"`
	StartUnixNs      int64           `json:"start_unix_ns"`
	LatencyHistogram string          `json:"latency_histogram"`
	Commands         []pointPartJSON `json:"commands,omitempty"`
	Nodes            []pointPartJSON `json:"nodes,omitempty"`
}

// pointLatency is a point's latencies in µs.
type pointLatency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

type pointPartJSON struct {
	Name             string `json:"name"`
	Requests         int64  `json:"requests"`
	Errors           int64  `json:"errors"`
	LatencyHistogram string `json:"latency_histogram"`
}

// stallsJSON is Stalls in JSON, in milliseconds and seconds.
type stallsJSON struct {
	Count     int       `json:"count"`
	LongestMs float64   `json:"longest_ms"`
	TotalMs   float64   `json:"total_ms"`
	AtS       []float64 `json:"at_s"`
}

// plain is Result with JSON names, its wire-form fields left out.
type plain struct {
	Counts
	Errors map[string]int64 `json:"errors"`
	Shards int              `json:"shards,omitempty"`
	QPS    float64          `json:"qps"`
	// QPSCountsRefused and RefusedWrites say, beside the QPS, that it
	// counts writes the server refused (Counts.Conflicts): requests
	// answered, but nothing written. Derived, not read back.
	QPSCountsRefused bool      `json:"qps_counts_refused"`
	RefusedWrites    int64     `json:"refused_writes"`
	UsPerOp          float64   `json:"us_per_op"`
	Latency          Latency   `json:"latency_us"`
	Commands         []Command `json:"commands,omitempty"`
	Nodes            []Node    `json:"nodes,omitempty"`
}

type document struct {
	plain
	wire
}

// MarshalJSON encodes r in its JSON form.
func (r Result) MarshalJSON() ([]byte, error) { return Encode(&r) }

// UnmarshalJSON decodes r from its JSON form and derives its figures
// (Finish); it is strict, as Decode.
func (r *Result) UnmarshalJSON(b []byte) error { return Decode(b, r, nil) }

// Field is a named value a document carries beside the measurement (the
// settings of the run that made it, say).
type Field struct {
	Name  string
	Value any
}

// Encode returns r's JSON object followed by the extra fields, in order.
func Encode(r *Result, extra ...Field) ([]byte, error) {
	d := document{
		plain: plain{
			Counts: r.Counts, Errors: r.Errors, Shards: r.Shards,
			QPS: r.QPS, UsPerOp: r.UsPerOp, Latency: r.Latency,
			QPSCountsRefused: r.Conflicts > 0, RefusedWrites: r.Conflicts,
			Commands: r.Commands, Nodes: r.Nodes,
		},
		wire: wire{
			ElapsedS:         r.Elapsed.Seconds(),
			PercentilesUs:    PercentilesOf(r.Histogram, r.Percentiles),
			LatencyHistogram: EncodeHistogram(r.Histogram),
			Warnings:         make([]string, 0, len(r.Warnings)),
		},
	}
	if d.Errors == nil {
		d.Errors = map[string]int64{}
	}
	if len(r.Percentiles) > 0 && len(r.Commands) > 0 {
		d.Commands = slices.Clone(r.Commands)
		for i := range d.Commands {
			d.Commands[i].Percentiles = r.Percentiles
		}
	}
	if !r.Start.IsZero() {
		d.StartUnixNs, d.EndUnixNs = r.Start.UnixNano(), r.End.UnixNano()
	}
	if r.SendLag != nil {
		lag := r.SendLagLatency
		d.SendLagUs = &lag
		d.SendLagHistogram = EncodeHistogram(r.SendLag)
	}
	for _, w := range r.Warnings {
		d.Warnings = append(d.Warnings, w.Error())
	}
	if sr := r.Series; sr != nil {
		d.SeriesIntervalS = sr.Interval.Seconds()
		d.Series = make([]pointJSON, 0, len(sr.Points))
		for i := range sr.Points {
			d.Series = append(d.Series, encodePoint(sr, &sr.Points[i], r.Start, r.End))
		}
	}
	if st := r.Stalls; st != nil {
		d.Stalls = &stallsJSON{Count: st.Count, LongestMs: ms(st.Longest), TotalMs: ms(st.Total), AtS: []float64{}}
		for _, a := range st.At {
			d.Stalls.AtS = append(d.Stalls.AtS, stats3(a.Seconds()))
		}
	}
	b, err := json.Marshal(d)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without its "}"
	for _, f := range extra {
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		name, _ := json.Marshal(f.Name)
		buf.WriteByte(',')
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// documentKeys are the names Decode knows.
var documentKeys = func() map[string]bool {
	keys := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for f := range t.Fields() {
			if f.Anonymous && f.Tag.Get("json") == "" {
				walk(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			keys[name] = true
		}
	}
	walk(reflect.TypeFor[document]())
	return keys
}()

// Decode decodes a JSON object into r, and each extra field named in
// extra into its Value, a pointer; absent ones are left as they are. A
// name neither knows is an error, as is a histogram that does not decode,
// naming its field. The figures are derived again (Finish).
func Decode(b []byte, r *Result, extra []Field) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	if obj == nil {
		return errors.New("not a JSON object")
	}
	own := map[string]json.RawMessage{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if i := slices.IndexFunc(extra, func(f Field) bool { return f.Name == k }); i >= 0 {
			if err := json.Unmarshal(obj[k], extra[i].Value); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			continue
		}
		if !documentKeys[k] {
			return fmt.Errorf("unknown field %q", k)
		}
		own[k] = obj[k]
	}
	ownJSON, err := json.Marshal(own)
	if err != nil {
		return err
	}
	var d document
	if err := json.Unmarshal(ownJSON, &d); err != nil {
		return err
	}
	*r = Result{
		Counts: d.Counts, Errors: d.Errors, Shards: d.Shards,
		Commands: d.Commands, Nodes: d.Nodes,
		Elapsed: FromSeconds(d.ElapsedS),
	}
	if d.StartUnixNs != 0 || d.EndUnixNs != 0 {
		r.Start, r.End = time.Unix(0, d.StartUnixNs), time.Unix(0, d.EndUnixNs)
	}
	if r.Histogram, err = DecodeHistogram(d.LatencyHistogram); err != nil {
		return fmt.Errorf("latency_histogram: %w", err)
	}
	if r.Percentiles, err = percentileKeys(d.PercentilesUs); err != nil {
		return err
	}
	if d.SendLagHistogram != "" {
		if r.SendLag, err = DecodeHistogram(d.SendLagHistogram); err != nil {
			return fmt.Errorf("send_lag_histogram: %w", err)
		}
	}
	for _, w := range d.Warnings {
		r.Warnings = append(r.Warnings, errors.New(w))
	}
	if d.SeriesIntervalS > 0 || len(d.Series) > 0 {
		if r.Series, err = decodeSeries(d.SeriesIntervalS, d.Series); err != nil {
			return fmt.Errorf("series: %w", err)
		}
	}
	r.Finish()
	return nil
}

// encodePoint is point p of series s in JSON, placed in the window
// [start, end].
func encodePoint(s *Series, p *Point, start, end time.Time) pointJSON {
	off, length := s.Span(p, start, end)
	j := pointJSON{
		TS: stats3(off.Seconds()), LengthS: stats3(length.Seconds()), Requests: p.Requests, Errors: p.Errors,
		QPS: PerSecond(p.Requests, length), StartUnixNs: p.Start.UnixNano(), LatencyHistogram: EncodeHistogram(p.Histogram),
	}
	if l := Summarize(p.Histogram); p.Histogram != nil {
		j.Latency = pointLatency{P50: l.P50, P99: l.P99, P999: l.P999, Max: l.Max}
	}
	for _, part := range p.Commands {
		j.Commands = append(j.Commands, pointPartJSON{part.Name, part.Requests, part.Errors, EncodeHistogram(part.Histogram)})
	}
	for _, part := range p.Nodes {
		j.Nodes = append(j.Nodes, pointPartJSON{part.Name, part.Requests, part.Errors, EncodeHistogram(part.Histogram)})
	}
	return j
}

// decodeSeries decodes a series; the points' places and figures are
// derived, not read.
func decodeSeries(intervalS float64, points []pointJSON) (*Series, error) {
	s := &Series{Interval: FromSeconds(intervalS)}
	if s.Interval <= 0 {
		return nil, fmt.Errorf("series_interval_s %v: want > 0", intervalS)
	}
	for i, j := range points {
		h, err := DecodeHistogram(j.LatencyHistogram)
		if err != nil {
			return nil, fmt.Errorf("point %d: latency_histogram: %w", i, err)
		}
		p := Point{Start: time.Unix(0, j.StartUnixNs), Requests: j.Requests, Errors: j.Errors, Histogram: h}
		for _, parts := range []struct {
			in  []pointPartJSON
			out *[]PointPart
		}{{j.Commands, &p.Commands}, {j.Nodes, &p.Nodes}} {
			for _, pj := range parts.in {
				ph, err := DecodeHistogram(pj.LatencyHistogram)
				if err != nil {
					return nil, fmt.Errorf("point %d: %s: latency_histogram: %w", i, pj.Name, err)
				}
				*parts.out = append(*parts.out, PointPart{Name: pj.Name, Requests: pj.Requests, Errors: pj.Errors, Histogram: ph})
			}
		}
		if err := s.Merge(&Series{Interval: s.Interval, Points: []Point{p}}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ms is d in milliseconds, 3 decimals.
func ms(d time.Duration) float64 { return stats3(float64(d) / 1e6) }

// stats3 rounds x to 3 decimals: JSON times to the microsecond.
func stats3(x float64) float64 { return math.Round(x*1000) / 1000 }

// FromSeconds is a duration of s seconds, to the nanosecond.
func FromSeconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// EncodeHistogram returns h in HdrHistogram's compressed base64 encoding;
// an empty histogram for nil.
func EncodeHistogram(h *hdrhistogram.Histogram) string {
	if h == nil {
		h = NewHistogram()
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		// Only an unknown encoding version fails.
		panic(fmt.Sprintf("encode histogram: %v", err))
	}
	return string(b)
}

// MaxHistogramBytes bounds an encoded histogram that DecodeHistogram
// takes: a histogram of the measurements' bounds encodes to at most a few
// tens of kilobytes, so anything far larger is not one.
const MaxHistogramBytes = 4 << 20

// DecodeHistogram decodes a histogram EncodeHistogram encoded; an empty
// string is an empty histogram. A histogram whose bounds differ from the
// measurements' or that is malformed is an error: hdrhistogram-go would
// allocate what a hostile header asks.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHistogram(), nil
	}
	if len(s) > MaxHistogramBytes {
		return nil, fmt.Errorf("%d bytes: longer than any histogram", len(s))
	}
	if err := checkHistogramHeader(s); err != nil {
		return nil, err
	}
	return hdrhistogram.Decode([]byte(s))
}

// histogram JSON of the parts: each has its histogram encoded under
// "latency_histogram", its QPS and its latency summary.

type commandJSON struct {
	Name             string  `json:"command"`
	Args             string  `json:"args"`
	Requests         int64   `json:"requests"`
	QPS              float64 `json:"qps"`
	Latency          Latency `json:"latency_us"`
	Errors           int64   `json:"errors"`
	LatencyHistogram string  `json:"latency_histogram,omitempty"`
	// PercentilesUs are the latencies at Command.Percentiles.
	PercentilesUs map[string]float64 `json:"percentiles_us,omitempty"`
}

// MarshalJSON encodes the command's share with its histogram.
func (c Command) MarshalJSON() ([]byte, error) {
	return json.Marshal(commandJSON{c.Name, c.Args, c.Requests, c.QPS, c.Latency, c.Errors, EncodeHistogram(c.Histogram), PercentilesOf(c.Histogram, c.Percentiles)})
}

// UnmarshalJSON decodes a command's share; an absent histogram is empty.
func (c *Command) UnmarshalJSON(b []byte) error {
	var j commandJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	h, err := DecodeHistogram(j.LatencyHistogram)
	if err != nil {
		return fmt.Errorf("command %s: latency_histogram: %w", j.Name, err)
	}
	ps, err := percentileKeys(j.PercentilesUs)
	if err != nil {
		return fmt.Errorf("command %s: %w", j.Name, err)
	}
	*c = Command{Name: j.Name, Args: j.Args, Requests: j.Requests, Errors: j.Errors, Histogram: h, QPS: j.QPS, Latency: j.Latency, Percentiles: ps}
	return nil
}

type nodeJSON struct {
	Addr             string  `json:"addr"`
	Role             string  `json:"role"`
	Slots            int     `json:"slots"`
	Requests         int64   `json:"requests"`
	QPS              float64 `json:"qps"`
	Latency          Latency `json:"latency_us"`
	Moved            int64   `json:"moved"`
	Ask              int64   `json:"ask"`
	LatencyHistogram string  `json:"latency_histogram"`
}

// MarshalJSON encodes the node's share with its histogram.
func (n Node) MarshalJSON() ([]byte, error) {
	return json.Marshal(nodeJSON{n.Addr, n.Role, n.Slots, n.Requests, n.QPS, n.Latency, n.Moved, n.Ask, EncodeHistogram(n.Histogram)})
}

// UnmarshalJSON decodes a node's share.
func (n *Node) UnmarshalJSON(b []byte) error {
	var j nodeJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return err
	}
	h, err := DecodeHistogram(j.LatencyHistogram)
	if err != nil {
		return fmt.Errorf("node %s: latency_histogram: %w", j.Addr, err)
	}
	*n = Node{Addr: j.Addr, Role: j.Role, Slots: j.Slots, Requests: j.Requests, Moved: j.Moved, Ask: j.Ask, Histogram: h, QPS: j.QPS, Latency: j.Latency}
	return nil
}

// strictUnmarshal is json.Unmarshal refusing unknown fields.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
