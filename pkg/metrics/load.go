package metrics

import (
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/prometheus/client_golang/prometheus"
)

// The load's metric names.
const (
	RequestsName = "kvbench_requests_total"
	ErrorsName   = "kvbench_errors_total"
	DurationName = "kvbench_request_duration_seconds"
)

// LabelNames are the labels of every load metric, in this order.
var LabelNames = []string{"target", "strategy", "mode", "command"}

// DurationBuckets are the upper bounds of the latency histogram's buckets,
// in seconds: 25 µs to 10 s, a 1-2.5-5 progression.
var DurationBuckets = []float64{
	0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// Labels name an attempt's load: the target, its persistence strategy,
// the mode (or workload), and the command counted when the load's
// intervals do not name theirs (set or get mode).
type Labels struct {
	Target, Strategy, Mode, Command string
}

// Load is the collector of the load generator's metrics: a counter of
// requests and one of error replies, and the latency histogram, by
// LabelNames. It only ever adds, so every counter is monotonic.
type Load struct {
	requests, errors, duration *prometheus.Desc

	mu     sync.Mutex
	series map[Labels]*loadSeries
	order  []Labels
}

// loadSeries is one label set's figures.
type loadSeries struct {
	requests, errors uint64
	// buckets counts the latencies up to each of DurationBuckets, and
	// past the last; not cumulative.
	buckets []uint64
	count   uint64
	sum     float64 // seconds
}

// NewLoad returns an empty Load; register it with a prometheus.Registry.
func NewLoad() *Load {
	return &Load{
		requests: prometheus.NewDesc(RequestsName, "Replies received in the measured phase, error replies included.", LabelNames, nil),
		errors:   prometheus.NewDesc(ErrorsName, "Error replies received in the measured phase.", LabelNames, nil),
		duration: prometheus.NewDesc(DurationName, "Request latency, from the write of its batch to the read of its reply (open loop: from its intended send time).", LabelNames, nil),
		series:   make(map[Labels]*loadSeries),
	}
}

// Describe implements prometheus.Collector.
func (l *Load) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.requests
	ch <- l.errors
	ch <- l.duration
}

// Collect implements prometheus.Collector: every label set seen so far.
func (l *Load) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.order {
		s := l.series[k]
		lv := []string{k.Target, k.Strategy, k.Mode, k.Command}
		ch <- prometheus.MustNewConstMetric(l.requests, prometheus.CounterValue, float64(s.requests), lv...)
		ch <- prometheus.MustNewConstMetric(l.errors, prometheus.CounterValue, float64(s.errors), lv...)
		cum := make(map[float64]uint64, len(DurationBuckets))
		var n uint64
		for i, b := range DurationBuckets {
			n += s.buckets[i]
			cum[b] = n
		}
		ch <- prometheus.MustNewConstHistogram(l.duration, s.count, s.sum, cum, lv...)
	}
}

// Attempt returns the recorder of one attempt's load, labelled lb: give
// its Interval to loadgen.Config.Observe and its result to Done.
func (l *Load) Attempt(lb Labels) *Attempt {
	return &Attempt{load: l, labels: lb}
}

// Attempt records one measured phase's load into a Load.
type Attempt struct {
	load   *Load
	labels Labels

	mu       sync.Mutex
	observed bool
}

// Interval adds a finished interval (loadgen.Config.Observe): safe for
// concurrent use.
func (a *Attempt) Interval(p measure.Point) {
	a.mu.Lock()
	a.observed = true
	a.mu.Unlock()
	if len(p.Commands) == 0 {
		a.load.add(a.labels, p.Requests, p.Errors, p.Histogram)
		return
	}
	for _, c := range p.Commands {
		lb := a.labels
		lb.Command = c.Name
		a.load.add(lb, c.Requests, c.Errors, c.Histogram)
	}
}

// Done ends a run of the attempt with its result: when no interval was
// observed (no series, or the load ran in agent processes), the result is
// added whole, so that the counters hold the measured phase either way.
// An attempt of several runs (redis-benchmark's tests) calls it for each;
// a nil Attempt does nothing.
func (a *Attempt) Done(res *measure.Result) {
	if a == nil {
		return
	}
	a.mu.Lock()
	observed := a.observed
	a.mu.Unlock()
	if observed || res == nil {
		return
	}
	errs := errorCount(res)
	if len(res.Commands) == 0 {
		a.load.add(a.labels, res.Requests, errs, res.Histogram)
		return
	}
	for _, c := range res.Commands {
		lb := a.labels
		lb.Command = c.Name
		a.load.add(lb, c.Requests, c.Errors, c.Histogram)
	}
}

func errorCount(res *measure.Result) int64 {
	var n int64
	for _, e := range res.Errors {
		n += e
	}
	return n
}

// add adds requests, errors and the latencies of h (nanoseconds) to lb's
// series.
func (l *Load) add(lb Labels, requests, errors int64, h *hdrhistogram.Histogram) {
	var bars []hdrhistogram.Bar
	if h != nil && h.TotalCount() > 0 {
		bars = h.Distribution() // outside the lock: h is the caller's
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.series[lb]
	if s == nil {
		s = &loadSeries{buckets: make([]uint64, len(DurationBuckets)+1)}
		l.series[lb] = s
		l.order = append(l.order, lb)
	}
	s.requests += uint64(max(requests, 0))
	s.errors += uint64(max(errors, 0))
	for _, b := range bars {
		if b.Count <= 0 {
			continue
		}
		s.buckets[bucketOf(b.To)] += uint64(b.Count)
		s.count += uint64(b.Count)
		s.sum += float64(b.Count) * float64(b.From+b.To) / 2 / 1e9
	}
}

// bucketOf is the index of the first bucket whose bound holds ns, by the
// highest value the histogram's bucket may hold: a latency is never
// counted below its bound.
func bucketOf(ns int64) int {
	s := float64(ns) / 1e9
	for i, b := range DurationBuckets {
		if s <= b {
			return i
		}
	}
	return len(DurationBuckets)
}

// Meter returns the recorder of an attempt of cfg's load, labelled by
// target, strategy and mode; its command label is the one each interval
// names, or CommandLabel(cfg).
func (l *Load) Meter(target, strategy, mode string, cfg loadgen.Config) *Attempt {
	return l.Attempt(Labels{Target: target, Strategy: strategy, Mode: mode, Command: CommandLabel(cfg)})
}

// CommandLabel is the command label of a load whose intervals do not name
// their commands: the write command in set mode, the read command in get
// mode, both as WRITE/READ in mixed mode (the intervals do not split
// them); a command mix's commands are named by the intervals.
func CommandLabel(cfg loadgen.Config) string {
	switch cfg.Mode {
	case loadgen.ModeSet:
		return cfg.SetCmd
	case loadgen.ModeGet:
		return cfg.GetCmd
	default:
		return cfg.SetCmd + "/" + cfg.GetCmd
	}
}
