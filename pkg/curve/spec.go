package curve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
)

// Spec is what to measure across load: an open-loop phase at each of
// Rates, and the capacity at the objective SLO, searched to Precision in
// at most MaxSteps open-loop phases.
type Spec struct {
	Rates     []Rate
	SLO       SLO
	Precision float64
	MaxSteps  int
}

// MostSteps is the largest --slo-max-steps.
const MostSteps = 64

// Enabled reports whether s measures anything.
func (s Spec) Enabled() bool { return len(s.Rates) > 0 || len(s.SLO) > 0 }

// ParseSpec parses the texts of --rates, --slo and --slo-precision (each
// empty for none; precision empty for DefaultPrecision) and takes
// --slo-max-steps (0 for DefaultMaxSteps); each error names its flag.
func ParseSpec(rates, slo, precision string, maxSteps int) (Spec, error) {
	s := Spec{Precision: DefaultPrecision, MaxSteps: DefaultMaxSteps}
	var errs []error
	var err error
	if strings.TrimSpace(rates) != "" {
		if s.Rates, err = ParseRates(rates); err != nil {
			errs = append(errs, fmt.Errorf("--rates: %w", err))
		}
	}
	if strings.TrimSpace(slo) != "" {
		if s.SLO, err = ParseSLO(slo); err != nil {
			errs = append(errs, fmt.Errorf("--slo: %w", err))
		}
	}
	if strings.TrimSpace(precision) != "" {
		if s.Precision, err = ParsePrecision(precision); err != nil {
			errs = append(errs, fmt.Errorf("--slo-precision: %w", err))
		}
	}
	switch {
	case maxSteps < 0 || maxSteps > MostSteps:
		errs = append(errs, fmt.Errorf("--slo-max-steps %d: want 1 to %d open-loop phases", maxSteps, MostSteps))
	case maxSteps > 0:
		s.MaxSteps = maxSteps
	}
	return s, errors.Join(errs...)
}

// Curve is what Run measured: the closed-loop peak when Run measured it,
// a point per rate of the Spec, and the capacity search when the Spec has
// an objective.
type Curve struct {
	Peak     *loadgen.Result
	Points   []Point
	Capacity *Capacity
}

// RunPhase runs one phase of a curve, cfg as PhaseConfig made it, and
// returns its measurement.
type RunPhase func(ctx context.Context, cfg loadgen.Config) (loadgen.Result, error)

// PhaseConfig is cfg as the phase at rate runs it: an open loop at rate
// (a closed loop at 0), bounded as cfg is by time, or else by as many
// requests as last the closed-loop peak's span (PhaseRequests) once it is
// known.
func PhaseConfig(cfg loadgen.Config, rate float64, span time.Duration) loadgen.Config {
	cfg.Rate = rate
	if rate > 0 && cfg.Duration == 0 && span > 0 {
		cfg.Requests = PhaseRequests(cfg.Requests, rate, span)
	}
	return cfg
}

// Run measures what s asks for, each phase of cfg run by run: the
// closed-loop peak first when a rate is relative to it or s searches a
// capacity, unless peak gives it (the closed loop "kvbench run" measured
// just before); then an open-loop phase at each rate (Sweep); then the
// capacity at s's objective (Search, from the peak's rate and latency). It is the one measurement of a
// curve for "kvbench bench" and "kvbench run". It returns what it
// measured until the first error, which says which part failed.
func Run(ctx context.Context, s Spec, cfg loadgen.Config, peak *loadgen.Result, run RunPhase) (Curve, error) {
	var c Curve
	var span time.Duration
	m := func(ctx context.Context, rate float64) (loadgen.Result, error) {
		return run(ctx, PhaseConfig(cfg, rate, span))
	}
	if peak == nil && (AnyRelative(s.Rates) || len(s.SLO) > 0) {
		p, err := Peak(ctx, m)
		if err != nil {
			return c, err
		}
		c.Peak, peak = &p, &p
	}
	qps := 0.0
	if peak != nil {
		qps, span = peak.QPS, peak.Elapsed
	}
	points, err := Sweep(ctx, s.Rates, qps, m)
	c.Points = points
	if err != nil {
		return c, fmt.Errorf("load curve: %w", err)
	}
	if len(s.SLO) > 0 {
		capa, err := Search(ctx, s.SLO, *peak, m, SearchOptions{Precision: s.Precision, MaxSteps: s.MaxSteps})
		c.Capacity = &capa
		if err != nil {
			return c, fmt.Errorf("capacity search: %w", err)
		}
	}
	return c, nil
}
