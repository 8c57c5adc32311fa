// Package curve measures a server across load rather than at one point:
// a latency–throughput curve (one open-loop phase per rate of a list,
// absolute or relative to the closed-loop peak) and the capacity at a
// latency objective (the highest rate at which the objective holds: the
// closed loop's peak when the objective held there, else found by
// bracketing down from the peak in an open loop and bisecting, every
// step held or the search ends without a figure).
//
// A phase is measured by the caller's Measure function, so that the same
// sweep and search serve "kvbench bench" (a load against any server) and
// "kvbench run" (a fresh server per attempt). Every latency is the open
// loop's, from each request's intended send time: a server that cannot
// keep a rate shows it in its latencies (coordinated omission corrected).
// A point whose requests left late (send lag p99 above loadgen.MaxSendLag)
// is not Kept: its latencies include queueing before the send, the
// client's or, with every pipeline slot busy, the server's backlog.
package curve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// Defaults of the capacity search.
const (
	// DefaultPrecision is the bracket's width, relative to its top, at
	// which the search stops (--slo-precision).
	DefaultPrecision = 0.05
	// DefaultMaxSteps bounds the open-loop phases of one search
	// (--slo-max-steps): halving from half the peak, then bisecting to 5%,
	// takes 5 when the objective holds at a quarter of the peak, and a
	// step not held is measured twice.
	DefaultMaxSteps = 8
	// HeldWithin is how close to its rate a point's QPS must be for the
	// rate to count as held.
	HeldWithin = 0.05
)

// ErrSyntax is wrapped by the errors of ParseRates and ParseSLO.
var ErrSyntax = errors.New("syntax")

// Rate is one entry of a rate list: requests per second, or a fraction of
// the closed-loop peak.
type Rate struct {
	// Value is requests per second, or the fraction of the peak (0.25 for
	// 25%) when Relative.
	Value    float64
	Relative bool
}

// String is the rate as ParseRates takes it.
func (r Rate) String() string {
	if r.Relative {
		return strconv.FormatFloat(r.Value*100, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(r.Value, 'f', -1, 64)
}

// Resolve returns the rate in requests per second against peak.
func (r Rate) Resolve(peak float64) float64 {
	if r.Relative {
		return r.Value * peak
	}
	return r.Value
}

// ParseRates parses a rate list: comma-separated entries, each requests
// per second ("20000") or a percentage of the closed-loop peak ("75%",
// at most 100: an open loop cannot hold more than the closed loop gave).
func ParseRates(s string) ([]Rate, error) {
	var out []Rate
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		pct, rel := strings.CutSuffix(f, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		switch {
		case f == "":
			return nil, fmt.Errorf("%w: rates %q: an empty entry", ErrSyntax, s)
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fmt.Errorf("%w: rate %q: want requests per second (20000) or a percentage of the closed-loop peak (75%%)", ErrSyntax, f)
		case v <= 0:
			return nil, fmt.Errorf("%w: rate %q: want > 0", ErrSyntax, f)
		case rel && v > 100:
			return nil, fmt.Errorf("%w: rate %q: above the closed-loop peak, which an open loop cannot hold; give an absolute rate to measure overload", ErrSyntax, f)
		}
		if rel {
			v /= 100
		}
		out = append(out, Rate{Value: v, Relative: rel})
	}
	return out, nil
}

// AnyRelative reports whether a rate of rs needs the closed-loop peak.
func AnyRelative(rs []Rate) bool {
	for _, r := range rs {
		if r.Relative {
			return true
		}
	}
	return false
}

// Objective is one latency bound: a statistic of the latency below Limit.
type Objective struct {
	// Stat is p50, p90, p99, p999 or max.
	Stat  string
	Limit time.Duration
}

// SLO is a latency objective: every Objective holds.
type SLO []Objective

// String is the objective as ParseSLO takes it ("p99<1ms,max<10ms").
func (s SLO) String() string {
	parts := make([]string, len(s))
	for i, o := range s {
		parts[i] = o.Stat + "<" + o.Limit.String()
	}
	return strings.Join(parts, ",")
}

// stats maps the names ParseSLO takes to a latency summary's figure (µs).
var stats = map[string]func(measure.Latency) float64{
	"p50":   func(l measure.Latency) float64 { return l.P50 },
	"p90":   func(l measure.Latency) float64 { return l.P90 },
	"p99":   func(l measure.Latency) float64 { return l.P99 },
	"p999":  func(l measure.Latency) float64 { return l.P999 },
	"p99.9": func(l measure.Latency) float64 { return l.P999 },
	"max":   func(l measure.Latency) float64 { return l.Max },
}

// ParseSLO parses an objective: "STAT<DURATION" joined by ",", STAT one
// of p50, p90, p99, p999 (or p99.9) and max, DURATION as Go writes it
// (500us, 1ms, 1.5ms).
func ParseSLO(s string) (SLO, error) {
	var out SLO
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		stat, limit, ok := strings.Cut(f, "<")
		stat, limit = strings.ToLower(strings.TrimSpace(stat)), strings.TrimSpace(limit)
		if !ok || limit == "" {
			return nil, fmt.Errorf("%w: objective %q: want STAT<DURATION, such as p99<1ms", ErrSyntax, f)
		}
		if _, known := stats[stat]; !known {
			return nil, fmt.Errorf("%w: objective %q: unknown statistic %q: want p50, p90, p99, p999 or max", ErrSyntax, f, stat)
		}
		d, err := time.ParseDuration(limit)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: objective %q: limit %q: want a positive duration such as 500us or 1ms", ErrSyntax, f, limit)
		}
		if stat == "p99.9" {
			stat = "p999"
		}
		out = append(out, Objective{Stat: stat, Limit: d})
	}
	return out, nil
}

// Met reports whether a latency summary (µs) meets every objective.
func (s SLO) Met(l measure.Latency) bool {
	for _, o := range s {
		if stats[o.Stat](l) >= float64(o.Limit)/1e3 {
			return false
		}
	}
	return true
}

// Point is one rate's measurement, or one step of a connection ramp.
type Point struct {
	// Rate is the intended rate, requests per second; 0 for a ramp's
	// step in a closed loop.
	Rate float64
	// Connections is a ramp step's connection count; 0 in a rate curve,
	// whose points share the run's.
	Connections int
	// Result is the phase's measurement.
	Result loadgen.Result
	// Kept: the requests left on schedule (send lag p99 at most
	// loadgen.MaxSendLag); always in a closed loop, which has no schedule.
	Kept bool
	// Held: the phase's QPS was within HeldWithin of Rate; always in a
	// closed loop.
	Held bool
	// Met is set by a capacity search: the point's latencies (which
	// include any send lag) meet its objective.
	Met bool
}

// newPoint makes the point of a phase measured at rate (0: in a closed
// loop).
func newPoint(rate float64, res loadgen.Result) Point {
	if rate == 0 {
		return Point{Result: res, Kept: true, Held: true}
	}
	return Point{
		Rate:   rate,
		Result: res,
		Kept:   loadgen.BehindSchedule(res.SendLagLatency) == nil,
		Held:   res.QPS >= (1-HeldWithin)*rate,
	}
}

// Measure measures one phase at rate requests per second, or in a
// closed loop when rate is 0.
type Measure func(ctx context.Context, rate float64) (loadgen.Result, error)

// MinPhase is the shortest open-loop phase PhaseRequests gives.
const MinPhase = time.Second

// PhaseRequests returns the requests of an open-loop phase at rate when
// the closed-loop peak's phase of requests took span: as long as the
// peak's (at least MinPhase), never more than requests, so that a phase
// at a low rate does not last the whole of requests/rate.
func PhaseRequests(requests int64, rate float64, span time.Duration) int64 {
	n := int64(math.Ceil(rate * max(span, MinPhase).Seconds()))
	return max(min(n, requests), 1)
}

// Peak measures the closed-loop peak: the QPS of one closed-loop phase.
func Peak(ctx context.Context, m Measure) (loadgen.Result, error) {
	res, err := m(ctx, 0)
	if err != nil {
		return res, fmt.Errorf("closed-loop peak: %w", err)
	}
	if res.QPS <= 0 {
		return res, errors.New("closed-loop peak: nothing was measured")
	}
	return res, nil
}

// Sweep measures each rate of rates in order, relative ones against peak
// (the closed-loop QPS; unused when every rate is absolute). It returns
// the points measured until the first error.
func Sweep(ctx context.Context, rates []Rate, peak float64, m Measure) ([]Point, error) {
	var out []Point
	for _, r := range rates {
		rate := r.Resolve(peak)
		if rate <= 0 {
			return out, fmt.Errorf("rate %s: no closed-loop peak to take it from", r)
		}
		res, err := m(ctx, rate)
		if err != nil {
			return out, fmt.Errorf("rate %.0f/s: %w", rate, err)
		}
		out = append(out, newPoint(rate, res))
	}
	return out, nil
}

// Ramp is a staircase of connection counts: Start, Start+Step,
// Start+2*Step, ... up to Max, Max included.
type Ramp struct {
	Start, Step, Max int
}

// Validate checks the staircase: Start and Step at least 1, Start at most
// Max.
func (r Ramp) Validate() error {
	switch {
	case r.Start < 1:
		return fmt.Errorf("start %d: want at least 1", r.Start)
	case r.Step < 1:
		return fmt.Errorf("step %d: want at least 1", r.Step)
	case r.Start > r.Max:
		return fmt.Errorf("start %d: above the most connections, %d", r.Start, r.Max)
	}
	return nil
}

// Counts returns the connection count of each step: from Start by Step
// while at most Max, then Max itself when the last step fell short of it.
func (r Ramp) Counts() []int {
	if r.Validate() != nil {
		return nil
	}
	var out []int
	for n := r.Start; n <= r.Max; n += r.Step {
		out = append(out, n)
		if n > r.Max-r.Step {
			break
		}
	}
	if out[len(out)-1] != r.Max {
		out = append(out, r.Max)
	}
	return out
}

// MeasureConns measures one phase with n connections.
type MeasureConns func(ctx context.Context, n int) (loadgen.Result, error)

// Sweep measures each step of the ramp in order and returns the points
// measured until the first error (a step cut short, by an error or by
// ctx, is not among them).
func (r Ramp) Sweep(ctx context.Context, m MeasureConns) ([]Point, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var out []Point
	for _, n := range r.Counts() {
		res, err := m(ctx, n)
		if err != nil {
			return out, fmt.Errorf("%d connections: %w", n, err)
		}
		p := newPoint(res.Config.Rate, res)
		p.Connections = n
		out = append(out, p)
	}
	return out, nil
}

// ErrNotHeld is wrapped by Capacity.Why when a step of the search was
// not held twice: its rate was not kept by the machine, so its
// latencies are not the server's at that rate.
var ErrNotHeld = errors.New("machine could not hold the schedule")

// ErrNotMet is wrapped by Capacity.Why when the objective held at no
// rate the search tried.
var ErrNotMet = errors.New("the objective held at no rate tried")

// Capacity is the result of a capacity search.
type Capacity struct {
	// SLO is the objective searched for.
	SLO SLO
	// QPS is the highest rate measured at which the objective held (the
	// bracket's bottom); 0 when the search found none, Why saying why.
	QPS float64
	// ClosedLoop says the objective held in the closed loop at its peak,
	// which no open loop exceeds: QPS is the peak's, and no open-loop
	// step was measured.
	ClosedLoop bool
	// Lo and Hi bracket the capacity: the objective held at Lo (0 when at
	// no rate tried) and not at Hi (the peak when no step failed).
	Lo, Hi float64
	// Steps are the measured open-loop phases, in order, repeats
	// included.
	Steps []Point
	// Why is, when QPS is 0, why the search found no capacity: it wraps
	// ErrNotHeld or ErrNotMet.
	Why error
	// Warnings say where the figure may not be the server's.
	Warnings []error
}

// SearchOptions tune Search.
type SearchOptions struct {
	// Precision is the width of the bracket, relative to its top, at which
	// the search stops; DefaultPrecision when 0.
	Precision float64
	// MaxSteps bounds the open-loop phases measured, repeats included;
	// DefaultMaxSteps when 0.
	MaxSteps int
}

// Search finds the highest rate at which slo holds, starting from the
// closed loop's measurement closed (the peak):
//
//   - When the closed loop's latency met slo, the objective held at the
//     peak, and no open loop goes faster than the closed loop: the
//     capacity is the peak's, and no open-loop phase is measured. (The
//     closed loop keeps every pipeline slot busy, so its latency at a
//     rate is at least an open loop's at that rate: its rate is a lower
//     bound of the capacity.)
//   - Else each open-loop step halves the rate, from half the peak,
//     until the objective holds, and then bisects the bracket until it is
//     within the precision of its top.
//
// A step counts only when it was held: its QPS within HeldWithin of its
// rate and its requests left on time (Kept). A step that was not is
// measured again; not held twice, the search ends without a capacity
// (Why wraps ErrNotHeld), since its latencies would include the
// machine's delays, not only the server's. At most MaxSteps open-loop
// phases are measured, repeats included: a search that finds the
// objective met at no rate within them ends without a capacity (Why
// wraps ErrNotMet), one whose bracket is still wide reports its bottom
// with a warning.
func Search(ctx context.Context, slo SLO, closed loadgen.Result, m Measure, o SearchOptions) (Capacity, error) {
	if o.Precision <= 0 {
		o.Precision = DefaultPrecision
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	peak := closed.QPS
	c := Capacity{SLO: slo, Hi: peak}
	if peak <= 0 {
		c.Why = fmt.Errorf("%w: the closed loop measured nothing to start from", ErrNotMet)
		return c, nil
	}
	if slo.Met(closed.Latency) {
		c.QPS, c.Lo, c.ClosedLoop = peak, peak, true
		return c, nil
	}
	// step measures rate, again when it was not held, while steps are
	// left (the caller leaves one at least); ok says the search goes on,
	// met whether the objective held there.
	step := func(rate float64) (met, ok bool, err error) {
		var tries []Point
		for len(tries) < 2 && len(c.Steps) < o.MaxSteps {
			res, err := m(ctx, rate)
			if err != nil {
				return false, false, fmt.Errorf("capacity step %d at %.0f/s: %w", len(c.Steps)+1, rate, err)
			}
			p := newPoint(rate, res)
			p.Met = p.Held && p.Kept && slo.Met(res.Latency)
			c.Steps = append(c.Steps, p)
			if p.Held && p.Kept {
				return p.Met, true, nil
			}
			tries = append(tries, p)
		}
		c.Why = fmt.Errorf("%w at %.0f/s (%s): the latencies there would include its delays; "+
			"measure on a quieter machine or with more connections, or find the client's limit with bench --rate",
			ErrNotHeld, rate, notHeld(tries))
		return false, false, nil
	}
	// Bracket: down from the peak by halves.
	rate := peak / 2
	for {
		if len(c.Steps) >= o.MaxSteps {
			c.Why = fmt.Errorf("%w: down to %.0f/s in %d steps (--slo-max-steps)", ErrNotMet, c.Hi, len(c.Steps))
			return c, nil
		}
		met, ok, err := step(rate)
		if err != nil || !ok {
			return c, err
		}
		if met {
			c.Lo = rate
			break
		}
		c.Hi = rate
		rate /= 2
	}
	// Bisect.
	for (c.Hi-c.Lo)/c.Hi > o.Precision && len(c.Steps) < o.MaxSteps {
		mid := (c.Lo + c.Hi) / 2
		met, ok, err := step(mid)
		if err != nil || !ok {
			return c, err
		}
		if met {
			c.Lo = mid
		} else {
			c.Hi = mid
		}
	}
	if (c.Hi-c.Lo)/c.Hi > o.Precision {
		c.Warnings = append(c.Warnings, fmt.Errorf("stopped after %d steps (--slo-max-steps) with the bracket [%.0f, %.0f] wider than %g%%: the capacity is at least %.0f/s",
			len(c.Steps), c.Lo, c.Hi, o.Precision*100, c.Lo))
	}
	c.QPS = c.Lo
	return c, nil
}

// notHeld describes the tries of a step that was not held.
func notHeld(tries []Point) string {
	parts := make([]string, len(tries))
	for i, p := range tries {
		parts[i] = fmt.Sprintf("%.0f req/s, send lag p99 %.0f us", p.Result.QPS, p.Result.SendLagLatency.P99)
	}
	if len(tries) == 1 {
		return "not held, and no step left to measure it again: " + parts[0]
	}
	return "not held twice: " + strings.Join(parts, "; then ")
}

// PointJSON is a Point in bench's JSON ("curve", a capacity's "points",
// and a ramp's steps, "ramp"): latencies and send lag in µs. A closed
// loop's point has no rate, send lag, kept nor held; a rate curve's has
// no connections.
type PointJSON struct {
	Rate         float64     `json:"rate,omitempty"`
	Connections  int         `json:"connections,omitempty"`
	QPS          float64     `json:"qps"`
	Latency      LatencyJSON `json:"latency_us"`
	SendLagP99Us *float64    `json:"send_lag_p99_us,omitempty"`
	Kept         *bool       `json:"kept,omitempty"`
	Held         *bool       `json:"held,omitempty"`
	Met          *bool       `json:"met,omitempty"`
	Requests     int64       `json:"requests"`
	Errors       int64       `json:"errors"`
	ElapsedS     float64     `json:"elapsed_s"`
	Warnings     []string    `json:"warnings,omitempty"`
}

// LatencyJSON is a point's latency summary.
type LatencyJSON struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// JSON returns the point's JSON form; withMet adds whether it met a
// search's objective.
func (p Point) JSON(withMet bool) PointJSON {
	r := p.Result
	l := r.Latency
	out := PointJSON{Rate: p.Rate, Connections: p.Connections, QPS: r.QPS, Latency: LatencyJSON{P50: l.P50, P99: l.P99, P999: l.P999, Max: l.Max},
		Requests: r.Requests, ElapsedS: r.Elapsed.Seconds()}
	if p.Rate > 0 {
		lag, kept, held := r.SendLagLatency.P99, p.Kept, p.Held
		out.SendLagP99Us, out.Kept, out.Held = &lag, &kept, &held
	}
	for _, n := range r.Errors {
		out.Errors += n
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	if withMet {
		out.Met = &p.Met
	}
	return out
}

// CurveJSON is a sweep's points in JSON.
func CurveJSON(ps []Point) []PointJSON {
	out := make([]PointJSON, len(ps))
	for i, p := range ps {
		out[i] = p.JSON(false)
	}
	return out
}

// CapacityJSON is a Capacity in bench's JSON ("capacity"): qps is null
// when the search found none, and why says why; closed_loop says the
// objective held in the closed loop at its peak, the capacity.
type CapacityJSON struct {
	QPS        *float64    `json:"qps"`
	SLO        string      `json:"slo"`
	Bracket    [2]float64  `json:"bracket"`
	Steps      int         `json:"steps"`
	Points     []PointJSON `json:"points"`
	Warnings   []string    `json:"warnings,omitempty"`
	ClosedLoop bool        `json:"closed_loop,omitempty"`
	Why        string      `json:"why,omitempty"`
}

// JSON returns the capacity's JSON form.
func (c Capacity) JSON() CapacityJSON {
	out := CapacityJSON{SLO: c.SLO.String(), Bracket: [2]float64{c.Lo, c.Hi}, Steps: len(c.Steps), ClosedLoop: c.ClosedLoop}
	if c.QPS > 0 {
		q := c.QPS
		out.QPS = &q
	}
	if c.Why != nil {
		out.Why = c.Why.Error()
	}
	for _, p := range c.Steps {
		out.Points = append(out.Points, p.JSON(true))
	}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

// ParsePrecision parses a capacity search's precision, a percentage
// ("5%", the % optional) above 0 and at most 50, into a fraction.
func ParsePrecision(s string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(p > 0) || p > 50 {
		return 0, fmt.Errorf("%w: precision %q: want a percentage above 0 and at most 50%%", ErrSyntax, s)
	}
	return p / 100, nil
}
