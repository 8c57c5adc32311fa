package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/pflag"
)

// curveOptions are bench's load-curve flags: --rates, --slo and
// --slo-precision.
type curveOptions struct {
	rates, slo, precision string
	// Rates is the rate list; SLO the objective of a capacity search;
	// Precision the search's bracket width.
	Rates     []curve.Rate
	SLO       curve.SLO
	Precision float64
}

// enabled reports whether bench measures a curve or a capacity.
func (c *curveOptions) enabled() bool { return len(c.Rates) > 0 || len(c.SLO) > 0 }

func addCurveFlags(f *pflag.FlagSet, c *curveOptions) {
	f.StringVar(&c.rates, "rates", "", "measure a latency-throughput curve: an open-loop phase at each rate of this list, requests per second (20000,50000) or percentages of the closed-loop peak, measured first (25%,50%,75%,90%)")
	f.StringVar(&c.slo, "slo", "", "find the capacity at this latency objective, the highest rate at which it holds: STAT<DURATION joined by commas, STAT p50, p90, p99, p999 or max (p99<1ms)")
	f.StringVar(&c.precision, "slo-precision", strconv.FormatFloat(curve.DefaultPrecision*100, 'f', -1, 64)+"%", "the capacity search stops when its bracket is this narrow, relative to its top")
}

// validate parses the curve flags and refuses what they cannot run with.
func (c *curveOptions) validate(f *pflag.FlagSet, o *benchOptions) error {
	var err error
	if c.rates != "" {
		if c.Rates, err = curve.ParseRates(c.rates); err != nil {
			return fmt.Errorf("--rates: %w", err)
		}
	}
	if c.slo != "" {
		if c.SLO, err = curve.ParseSLO(c.slo); err != nil {
			return fmt.Errorf("--slo: %w", err)
		}
	}
	if c.Precision, err = curve.ParsePrecision(c.precision); err != nil {
		return fmt.Errorf("--slo-precision: %w", err)
	}
	if f.Changed("slo-precision") && len(c.SLO) == 0 {
		return errors.New("--slo-precision: give --slo too")
	}
	if !c.enabled() {
		return nil
	}
	cfg := &o.Config
	switch {
	case cfg.Rate > 0:
		return errors.New("--rate and --rates/--slo cannot be used together: the curve sets each phase's rate")
	case len(o.Tests) > 0:
		return errors.New("--rates/--slo and --tests cannot be used together")
	case o.Output != output.FormatText && o.Output != output.FormatJSON:
		return fmt.Errorf("--output %s: --rates/--slo print text or json", o.Output)
	case cfg.Segments > 1:
		return errors.New("--rates/--slo cannot run as an agent's segment (--segment): each phase's rate depends on the one before")
	case cfg.Mode == loadgen.ModeSet && len(cfg.Commands) == 0 && loadgen.InsertOnly(cfg.SetCmd):
		return fmt.Errorf("%s only inserts: each phase of --rates/--slo writes the keys again and would count refused writes; use --mode get after a --prefill, or a write command that overwrites (--set-cmd SET)", cfg.SetCmd)
	}
	return nil
}

// runCurve measures the curve and the capacity bench was asked for and
// prints them.
func runCurve(ctx context.Context, o *benchOptions) error {
	c := o.curve
	base := o.Config
	base.Progress = nil
	var span time.Duration // the closed-loop peak's length, once measured
	measureAt := func(ctx context.Context, rate float64) (loadgen.Result, error) {
		cfg := base
		cfg.Rate = rate
		if cfg.Duration == 0 && rate > 0 && span > 0 {
			cfg.Requests = curve.PhaseRequests(cfg.Requests, rate, span)
		}
		what := fmt.Sprintf("open loop at %.0f req/s", rate)
		if rate == 0 {
			what = "closed loop (the peak)"
		}
		return o.runPoint(ctx, cfg, "curve: "+what)
	}
	var doc output.Curve
	if curve.AnyRelative(c.Rates) || len(c.SLO) > 0 {
		peak, err := curve.Peak(ctx, measureAt)
		if err != nil {
			return err
		}
		doc.Peak = &peak
		span = peak.Elapsed
	}
	peakQPS := 0.0
	if doc.Peak != nil {
		peakQPS = doc.Peak.QPS
	}
	points, err := curve.Sweep(ctx, c.Rates, peakQPS, measureAt)
	doc.Points = points
	if err == nil && len(c.SLO) > 0 {
		var capa curve.Capacity
		capa, err = curve.Search(ctx, c.SLO, peakQPS, measureAt, curve.SearchOptions{Precision: c.Precision})
		doc.Capacity = &capa
	}
	if werr := output.WriteCurve(o.Out, o.Output, doc); werr != nil && err == nil {
		err = werr
	}
	return err
}

// runPoint measures one point of a curve or a ramp, named what on the
// progress lines it writes before and after.
func (o *benchOptions) runPoint(ctx context.Context, cfg loadgen.Config, what string) (loadgen.Result, error) {
	fmt.Fprintf(o.ErrOut, "%s ...\n", what)
	res, err := loadgen.Run(ctx, cfg)
	o.meter.Done(&res.Result)
	if err == nil {
		fmt.Fprintf(o.ErrOut, "%s: %.0f req/s, p99 %.0f us\n", what, res.QPS, res.Latency.P99)
	}
	return res, err
}
