// Package measure is what kvbench measures in one phase of load: exact
// counts, whole latency histograms and the window they were taken in, for
// the whole load and per command and per cluster node.
//
// One type, Result, serves every place a measurement is made or combined:
// the load generator's workers each fill one and the run merges them, a
// command mix and a cluster run keep their parts in Commands and Nodes,
// and "kvbench merge" merges the agents' results. Merge adds counters,
// adds histograms bucket by bucket (percentiles are never averaged) and
// unites the windows; Finish derives the figures (QPS, µs per request,
// percentiles) from them. Result's JSON form (json.go) is the document
// "kvbench bench --output json" prints and "kvbench merge" reads; a
// Result decoded from it merges as one measured in this process does.
//
// Adding a counter is a field of Counts with its JSON name, and the
// detail CSV's column that results.Row.Measured fills from it: Merge and
// the codec take every field of Counts.
package measure

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Histogram bounds, in nanoseconds: 1 ns to 1 h at 3 significant digits.
// Longer latencies are recorded as 1 h.
const (
	HistMin    = 1
	HistMax    = int64(3600e9)
	HistDigits = 3
)

// NewHistogram returns an empty latency histogram of nanoseconds with the
// bounds every measurement uses.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistMin, HistMax, HistDigits)
}

// Clamp returns v within the histograms' bounds.
func Clamp(v int64) int64 { return min(max(v, HistMin), HistMax) }

// Counts are a measurement's counters. Every field is an int64 that Merge
// sums; its JSON name is its tag.
type Counts struct {
	// Requests is the number of replies received; it equals Sent unless
	// the phase failed.
	Requests int64 `json:"requests"`
	Sent     int64 `json:"sent"`
	// Sets and Gets split Requests by command in the set, get and mixed
	// modes.
	Sets int64 `json:"sets"`
	Gets int64 `json:"gets"`
	// Conflicts counts EXIST error replies to writes: an insert-only
	// command met an existing key, and nothing was written.
	Conflicts int64 `json:"conflicts"`
	// Misses counts null replies to reads.
	Misses int64 `json:"misses"`
	// VerifyFailures counts reads that returned something other than the
	// expected value.
	VerifyFailures int64 `json:"verify_failures"`
	// Moved and Ask count a cluster's redirects: MOVED (the slot map
	// changed) and ASK (a slot being migrated) replies, each request
	// resent to the node named.
	Moved int64 `json:"moved"`
	Ask   int64 `json:"ask"`
	// Reconnects counts connections lost mid-phase and dialled again.
	Reconnects int64 `json:"reconnects"`
	// WaitAcked and WaitShort count the replies to a mix's WAITs
	// (mix.Wait): at least the replicas asked for acknowledged the
	// connection's writes, or fewer did before the timeout.
	WaitAcked int64 `json:"wait_acked,omitempty"`
	WaitShort int64 `json:"wait_short,omitempty"`
}

// countFields are the indices of Counts' fields, all int64 (checked once).
var countFields = func() []int {
	t := reflect.TypeFor[Counts]()
	idx := make([]int, t.NumField())
	for i := range idx {
		if t.Field(i).Type.Kind() != reflect.Int64 {
			panic("measure: Counts." + t.Field(i).Name + " is not an int64")
		}
		idx[i] = i
	}
	return idx
}()

// Add adds o's counters to c.
func (c *Counts) Add(o *Counts) {
	a, b := reflect.ValueOf(c).Elem(), reflect.ValueOf(o).Elem()
	for _, i := range countFields {
		f := a.Field(i)
		f.SetInt(f.Int() + b.Field(i).Int())
	}
}

// ErrBadCount is wrapped by Merge's error when a count to add is negative
// or the sum does not fit in an int64: a result read from a file that
// was damaged or written by hand, never one a run produced.
var ErrBadCount = errors.New("bad count")

// addCount adds b to *a, refusing a negative b and a sum that overflows;
// what names the count in the error (its JSON name).
func addCount(a *int64, b int64, what string) error {
	switch {
	case b < 0:
		return fmt.Errorf("%w: %s is %d, a count cannot be negative", ErrBadCount, what, b)
	case *a > math.MaxInt64-b:
		return fmt.Errorf("%w: %s: %d + %d does not fit in a 64-bit count", ErrBadCount, what, *a, b)
	}
	*a += b
	return nil
}

// addChecked is Add with every count checked by addCount.
func (c *Counts) addChecked(o *Counts) error {
	a, b := reflect.ValueOf(c).Elem(), reflect.ValueOf(o).Elem()
	t := a.Type()
	for _, i := range countFields {
		f := a.Field(i)
		sum := f.Int()
		if err := addCount(&sum, b.Field(i).Int(), strings.Split(t.Field(i).Tag.Get("json"), ",")[0]); err != nil {
			return err
		}
		f.SetInt(sum)
	}
	return nil
}

// Latency is a latency summary in microseconds, 2 decimals.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Summarize returns the percentiles of a histogram of nanoseconds in
// microseconds; zero for an empty or nil histogram.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:  Micros(h.ValueAtQuantile(50)),
		P90:  Micros(h.ValueAtQuantile(90)),
		P99:  Micros(h.ValueAtQuantile(99)),
		P999: Micros(h.ValueAtQuantile(99.9)),
		Max:  Micros(h.Max()),
		Mean: stats.Round2(h.Mean() / 1e3),
	}
}

// Micros is ns nanoseconds in microseconds to 2 decimals, halves rounded
// up: exact, since ns/10 is a multiple of 0.5 (stats.Round2 would round
// the binary fraction of ns/1e3 instead, and give 201.85 for 201855 ns).
func Micros(ns int64) float64 { return math.Round(float64(ns)/10) / 100 }

// Result is one measured phase.
type Result struct {
	Counts
	// Errors counts error replies by their first word (ERR, WRONGTYPE…),
	// conflicts excluded.
	Errors map[string]int64
	// Shards is the number of masters of a cluster run, 0 otherwise.
	Shards int
	// Start and End are the measured window in wall-clock time, from the
	// phase's start to its last reply; Elapsed is its length.
	Start, End time.Time
	Elapsed    time.Duration
	// Histogram holds every request's latency in nanoseconds.
	Histogram *hdrhistogram.Histogram
	// SendLag holds, in an open loop, every request's send lag in
	// nanoseconds: from its intended send time to the write that sent it.
	// Nil in a closed loop.
	SendLag *hdrhistogram.Histogram
	// Commands is each command's share of a command mix; nil otherwise.
	Commands []Command
	// Nodes is each master's share of a cluster run, in slot order, then
	// each replica's that reads went to (a single server's run with
	// replicas: the server's, then the replicas'); nil otherwise. Their
	// requests sum to Requests.
	Nodes []Node
	// Warnings are findings that do not fail the phase: the first verify
	// failures, a schedule not kept, agents that did not overlap.
	Warnings []error
	// Series is the phase per interval of wall-clock time; nil when not
	// recorded.
	Series *Series
	// Percentiles are the percentiles (0 to 100) the JSON form gives
	// besides Latency's, for the whole and each command (percentiles.go).
	Percentiles []float64

	// The figures, derived from the above by Finish.

	// QPS is Requests per second of Elapsed; 0 when nothing was measured.
	QPS float64
	// UsPerOp is Elapsed in microseconds per request, 2 decimals.
	UsPerOp float64
	// Latency summarizes Histogram; SendLagLatency SendLag.
	Latency, SendLagLatency Latency
	// Stalls are the series' stalls (FindStalls); nil when not looked for.
	Stalls *Stalls
}

// FindStalls sets r.Stalls from its series: runs of consecutive intervals
// (their parts within the measured window) with a QPS below below × the
// median interval QPS, or a latency above longer (0: no latency rule),
// merged. Nil without a series.
func (r *Result) FindStalls(below float64, longer time.Duration) {
	r.Stalls = findStalls(r, below, longer)
}

// Command is one command's share of a mix.
type Command struct {
	// Name is the command's name in the mix; Args the command as typed.
	Name, Args string
	// Requests is its replies (operations, for a read-modify-write);
	// Errors how many were error replies.
	Requests, Errors int64
	// Histogram holds its latencies in nanoseconds.
	Histogram *hdrhistogram.Histogram
	// QPS and Latency are derived by Result.Finish.
	QPS     float64
	Latency Latency
	// Percentiles are its Result's (the JSON form's percentiles_us).
	Percentiles []float64
}

// Node is one server's share of a run over several: a cluster's master,
// or a replica reads went to (a cluster's or a single server's, whose
// own share is a master's): the requests sent on the connections to it,
// whatever node a redirect resent them to.
type Node struct {
	// Addr is the server's address, host:port; Role is "master" or
	// "replica".
	Addr, Role string
	// Slots is the number of hash slots it served at the end (a
	// replica: its master's; 0 for a single server).
	Slots int
	// Requests is the replies received on its connections; Moved and Ask
	// the redirects it replied.
	Requests, Moved, Ask int64
	// Histogram holds its latencies in nanoseconds.
	Histogram *hdrhistogram.Histogram
	// QPS and Latency are derived by Result.Finish.
	QPS     float64
	Latency Latency
}

// MaxWarnings bounds the warnings a merge keeps from its parts.
const MaxWarnings = 10

// Merge adds o to r: counters and errors summed, histograms added, the
// window the union of both, commands merged by name and nodes by
// address, in the order they first appear. Warnings are appended up to
// MaxWarnings. It fails when a histogram holds values out of the other's
// range. Call Finish after the last merge.
func (r *Result) Merge(o *Result) error {
	if err := r.Counts.addChecked(&o.Counts); err != nil {
		return err
	}
	if r.Percentiles == nil {
		r.Percentiles = o.Percentiles
	}
	for k, v := range o.Errors {
		if r.Errors == nil {
			r.Errors = make(map[string]int64)
		}
		sum := r.Errors[k]
		if err := addCount(&sum, v, "errors["+k+"]"); err != nil {
			return err
		}
		r.Errors[k] = sum
	}
	r.Shards = max(r.Shards, o.Shards)
	if !o.Start.IsZero() && (r.Start.IsZero() || o.Start.Before(r.Start)) {
		r.Start = o.Start
	}
	if o.End.After(r.End) {
		r.End = o.End
	}
	if !r.Start.IsZero() {
		r.Elapsed = r.End.Sub(r.Start)
	} else {
		r.Elapsed = max(r.Elapsed, o.Elapsed)
	}
	var err error
	if r.Histogram, err = addHist(r.Histogram, o.Histogram); err != nil {
		return err
	}
	if r.SendLag, err = addHist(r.SendLag, o.SendLag); err != nil {
		return fmt.Errorf("send lag: %w", err)
	}
	for _, c := range o.Commands {
		i := slices.IndexFunc(r.Commands, func(m Command) bool { return m.Name == c.Name && m.Args == c.Args })
		if i < 0 {
			r.Commands = append(r.Commands, Command{Name: c.Name, Args: c.Args})
			i = len(r.Commands) - 1
		}
		m := &r.Commands[i]
		if err := errors.Join(addCount(&m.Requests, c.Requests, "command "+c.Name+" requests"),
			addCount(&m.Errors, c.Errors, "command "+c.Name+" errors")); err != nil {
			return err
		}
		if m.Histogram, err = addHist(m.Histogram, c.Histogram); err != nil {
			return fmt.Errorf("command %s: %w", c.Name, err)
		}
	}
	for _, n := range o.Nodes {
		i := slices.IndexFunc(r.Nodes, func(m Node) bool { return m.Addr == n.Addr })
		if i < 0 {
			r.Nodes = append(r.Nodes, Node{Addr: n.Addr, Role: n.Role})
			i = len(r.Nodes) - 1
		}
		m := &r.Nodes[i]
		m.Slots = max(m.Slots, n.Slots)
		if err := errors.Join(addCount(&m.Requests, n.Requests, "node "+n.Addr+" requests"),
			addCount(&m.Moved, n.Moved, "node "+n.Addr+" moved"),
			addCount(&m.Ask, n.Ask, "node "+n.Addr+" ask")); err != nil {
			return err
		}
		if m.Histogram, err = addHist(m.Histogram, n.Histogram); err != nil {
			return fmt.Errorf("node %s: %w", n.Addr, err)
		}
	}
	for _, w := range o.Warnings {
		if len(r.Warnings) < MaxWarnings {
			r.Warnings = append(r.Warnings, w)
		}
	}
	if o.Series != nil {
		if r.Series == nil {
			r.Series = &Series{}
		}
		if err := r.Series.Merge(o.Series); err != nil {
			return fmt.Errorf("series: %w", err)
		}
	}
	return nil
}

// ErrOutOfRange is wrapped by Merge's error when a histogram holds
// latencies the other cannot.
var ErrOutOfRange = errors.New("latencies out of the histogram's range")

// addHist adds b to a, a new histogram when a is nil; nil when both are.
func addHist(a, b *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if b == nil {
		return a, nil
	}
	if a == nil {
		a = hdrhistogram.New(b.LowestTrackableValue(), b.HighestTrackableValue(), int(b.SignificantFigures()))
	}
	if dropped := a.Merge(b); dropped > 0 {
		return a, fmt.Errorf("%w: %d", ErrOutOfRange, dropped)
	}
	return a, nil
}

// Finish derives the figures from the counts, histograms and window:
// QPS and µs per request of the whole and of each part, and the latency
// summaries. A Result with nothing measured keeps them zero.
func (r *Result) Finish() {
	if r.Errors == nil {
		r.Errors = make(map[string]int64)
	}
	if r.Histogram == nil {
		r.Histogram = NewHistogram()
	}
	r.QPS = PerSecond(r.Requests, r.Elapsed)
	r.UsPerOp = 0
	if r.Requests > 0 && r.Elapsed > 0 {
		r.UsPerOp = stats.Round2(float64(r.Elapsed) / 1e3 / float64(r.Requests))
	}
	r.Latency = Summarize(r.Histogram)
	r.SendLagLatency = Summarize(r.SendLag)
	for i := range r.Commands {
		c := &r.Commands[i]
		if c.Histogram == nil {
			c.Histogram = NewHistogram()
		}
		c.QPS, c.Latency = PerSecond(c.Requests, r.Elapsed), Summarize(c.Histogram)
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if n.Histogram == nil {
			n.Histogram = NewHistogram()
		}
		n.QPS, n.Latency = PerSecond(n.Requests, r.Elapsed), Summarize(n.Histogram)
	}
}

// PerSecond is n per second of d, 0 for an empty window.
func PerSecond(n int64, d time.Duration) float64 {
	if d <= 0 || n <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrorCount is the number of error replies, of every kind.
func (r *Result) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// Measured reports whether the result holds a measured window: requests
// answered over a positive time, so that its rates are figures.
func (r *Result) Measured() bool { return r.Requests > 0 && r.Elapsed > 0 }
