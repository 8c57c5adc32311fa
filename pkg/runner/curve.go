package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// DefaultSLOPrecision is the capacity search's precision when
// Options.SLOPrecision is empty.
var DefaultSLOPrecision = fmt.Sprintf("%g%%", curve.DefaultPrecision*100)

// DefaultSLOMaxSteps is the capacity search's bound on open-loop phases
// when Options.SLOMaxSteps is 0.
const DefaultSLOMaxSteps = curve.DefaultMaxSteps

// parseCurve parses Rates, SLO and SLOPrecision into o.curve; its errors
// name the flag.
func (o *Options) parseCurve() error {
	var errs []error
	var err error
	if o.curve, err = curve.ParseSpec(o.Rates, o.SLO, o.SLOPrecision, o.SLOMaxSteps); err != nil {
		errs = append(errs, err)
	} else if strings.TrimSpace(o.SLO) == "" {
		if strings.TrimSpace(o.SLOPrecision) != "" {
			errs = append(errs, errors.New("--slo-precision: give --slo too"))
		}
		if o.SLOMaxSteps != 0 {
			errs = append(errs, errors.New("--slo-max-steps: give --slo too"))
		}
	}
	if (strings.TrimSpace(o.Rates) != "" || strings.TrimSpace(o.SLO) != "") && len(o.Workloads) > 0 {
		errs = append(errs, errors.New("--rates/--slo measure the modes (set, get, mixed), not workloads: run the workloads apart"))
	}
	return errors.Join(errs...)
}

// checkCurve refuses a load curve of mode on target d that cannot run:
// the writes of an insert-only command meet the closed loop's keys again
// in every open-loop phase, and each refused write would count as a
// request.
func checkCurve(o Options, d target.Desc, mode loadgen.Mode) error {
	if !o.curve.Enabled() || mode != loadgen.ModeSet || !loadgen.InsertOnly(d.SetCmd) {
		return nil
	}
	return fmt.Errorf("--rates/--slo: target %s, mode set: %s only inserts, and every phase after the closed loop would write its keys again and count the refused writes: measure the curve with --modes get (after the prefill), or a write command that overwrites (--set-cmd SET)", d.Name, d.SetCmd)
}

// curvePlanLine is the plan's line about the phases after each closed
// loop; "" without them.
func curvePlanLine(c curve.Spec) string {
	var parts []string
	if len(c.Rates) > 0 {
		rates := make([]string, len(c.Rates))
		for i, r := range c.Rates {
			rates[i] = r.String()
		}
		parts = append(parts, "open-loop phases at "+strings.Join(rates, ", "))
	}
	if len(c.SLO) > 0 {
		parts = append(parts, fmt.Sprintf("the capacity at %s (to %g%%)", c.SLO, c.Precision*100))
	}
	if len(parts) == 0 {
		return ""
	}
	return "after each closed loop, on its server: " + strings.Join(parts, "; then ")
}

// searchSteps is the number of phases a capacity search is expected to
// measure, for the estimate: half the peak, then bisection of [peak/2,
// peak] down to the precision, at most maxSteps (none when the closed
// loop meets the objective, which the estimate cannot know).
func searchSteps(precision float64, maxSteps int) int {
	return min(1+int(math.Ceil(math.Log2(0.5/precision))), maxSteps)
}

// curveEstimate is the expected time of an attempt's curve and capacity
// phases after a closed loop at qps.
func (p *Plan) curveEstimate(qps float64) time.Duration {
	c := &p.Options.curve
	if !c.Enabled() || !(qps > 0) {
		return 0
	}
	requests := p.Options.Requests
	span := seconds(float64(requests) / qps)
	phase := func(rate float64) time.Duration {
		return seconds(float64(curve.PhaseRequests(requests, rate, span)) / rate)
	}
	var d time.Duration
	for _, r := range c.Rates {
		d += phase(r.Resolve(qps))
	}
	if len(c.SLO) > 0 {
		d += time.Duration(searchSteps(c.Precision, c.MaxSteps)) * phase(qps*0.75)
	}
	return d
}

// loadCurve is what the phases after an attempt's closed loop measured:
// a point per rate of Options.Rates, and the capacity at Options.SLO.
type loadCurve struct {
	points []curve.Point
	// slo is the objective searched ("" without Options.SLO), and
	// capacity the highest rate at which it held; nil when the search
	// found none, why saying why.
	slo      string
	capacity *float64
	why      string
}

// measureCurve measures the attempt's load curve and capacity on its
// server after the closed loop (closed), with curve.Run: each phase an
// open loop of cfg at a rate, as long as the closed loop lasted.
func (r *run) measureCurve(ctx context.Context, cfg loadgen.Config, info target.Info, sc *Scenario, round int, closed loadgen.Result) (*loadCurve, error) {
	cfg.Progress, cfg.Observe, cfg.Interval = nil, nil, 0 // the series and live metrics are the closed loop's
	phase := func(ctx context.Context, pc loadgen.Config) (loadgen.Result, error) {
		r.log("%s round %d: open loop at %.0f req/s ...", sc.Name(), round, pc.Rate)
		res, _, err := r.measure(ctx, pc, info.TLSFiles, sc.Name(), round)
		if err == nil {
			err = checkResult(res)
		}
		if err != nil {
			return res, err
		}
		r.log("%s round %d: open loop at %.0f req/s: %.0f req/s, p99 %.0f us", sc.Name(), round, pc.Rate, res.QPS, res.Latency.P99)
		return res, nil
	}
	c, err := curve.Run(ctx, r.o.curve, cfg, &closed, phase)
	if err != nil {
		return nil, err
	}
	for _, p := range c.Points {
		if !p.Kept {
			r.log("%s round %d: warning: at %.0f req/s the requests left late (send lag p99 %.0f us): the latencies include the client's queueing", sc.Name(), round, p.Rate, p.Result.SendLagLatency.P99)
		}
	}
	lc := &loadCurve{points: c.Points}
	if capa := c.Capacity; capa != nil {
		for _, w := range capa.Warnings {
			r.log("%s round %d: capacity: %v", sc.Name(), round, w)
		}
		lc.slo = capa.SLO.String()
		switch {
		case capa.QPS > 0:
			q := capa.QPS
			lc.capacity = &q
			if capa.ClosedLoop {
				r.log("%s round %d: capacity at %s: %.0f req/s, the closed loop's: the objective held there (p99 %.0f us)", sc.Name(), round, lc.slo, q, closed.Latency.P99)
			}
		case capa.Why != nil:
			lc.why = capa.Why.Error()
			r.log("%s round %d: capacity at %s: none: %s", sc.Name(), round, lc.slo, lc.why)
		}
	}
	return lc, nil
}

// curveRows are the detail rows of a load curve's points: each phase's
// measurement on before, the attempt's row before its closed loop (its
// settings and server; its start and prefill are the closed-loop row's).
func (r *run) curveRows(before results.Row, c *loadCurve) []results.Row {
	if c == nil {
		return nil
	}
	var rows []results.Row
	for i, p := range c.points {
		pr := before
		pr.StartS, pr.PrefillS = 0, 0
		pr.Measured(&p.Result.Result)
		rate := p.Rate
		lag := p.Result.SendLagLatency.P99
		pr.Rate, pr.RateSpec, pr.SendLagP99Us = &rate, r.o.curve.Rates[i].String(), &lag
		rows = append(rows, pr)
	}
	return rows
}
