package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/pflag"
)

// Defaults of a connection ramp.
const (
	// DefaultStepDuration is how long each step of a ramp is measured
	// (--step-duration).
	DefaultStepDuration = 10 * time.Second
	// DefaultRampSettle is the unmeasured load before each step's
	// measurement when --warmup is not given: the new connections' first
	// requests are not the step's.
	DefaultRampSettle = time.Second
)

// rampOptions are bench's connection-ramp flags: --connections-start,
// --connections-step and --step-duration.
type rampOptions struct {
	start, step  int
	stepDuration time.Duration
	// Ramp is the staircase, its Max --connections; set once validate has
	// run with a ramp asked for.
	Ramp curve.Ramp
	on   bool
}

// enabled reports whether bench runs a connection ramp.
func (r *rampOptions) enabled() bool { return r.on }

func addRampFlags(f *pflag.FlagSet, r *rampOptions) {
	f.IntVar(&r.start, "connections-start", 0, "run a connection ramp: a closed-loop step (open loop with --rate) at this many connections, then at more by --connections-step, up to --connections (default --connections-step), e.g. --connections-start 10 --connections-step 10 --connections 100 --step-duration 10s; each step dials its connections anew and settles for --warmup (default "+DefaultRampSettle.String()+") unmeasured first")
	f.IntVar(&r.step, "connections-step", 0, "connections added at each step of a connection ramp")
	f.DurationVar(&r.stepDuration, "step-duration", DefaultStepDuration, "how long each step of a connection ramp is measured, after its settle")
}

// validate checks the ramp flags, and what a ramp cannot run with, and
// sets o's run to one step's (its Connections are set per step).
func (r *rampOptions) validate(f *pflag.FlagSet, o *benchOptions) error {
	given := f.Changed("connections-start") || f.Changed("connections-step")
	if !given {
		if f.Changed("step-duration") {
			return errors.New("--step-duration: give --connections-step (and --connections-start) to run a connection ramp")
		}
		return nil
	}
	if !f.Changed("connections-step") {
		return errors.New("--connections-start: give --connections-step too, the connections added at each step")
	}
	if !f.Changed("connections-start") {
		r.start = r.step
	}
	c := &o.Config
	switch {
	case r.step < 1:
		return fmt.Errorf("--connections-step %d: want at least 1", r.step)
	case r.start < 1:
		return fmt.Errorf("--connections-start %d: want at least 1", r.start)
	case r.start > c.Connections && !f.Changed("connections-start"):
		return fmt.Errorf("--connections-step %d: the first step, above --connections %d, the ramp's last step (give --connections)", r.start, c.Connections)
	case r.start > c.Connections:
		return fmt.Errorf("--connections-start %d: above --connections %d, the ramp's last step", r.start, c.Connections)
	case r.stepDuration <= 0:
		return fmt.Errorf("--step-duration %s: want a positive duration such as 10s", r.stepDuration)
	}
	for _, name := range []string{"requests", "duration", "rates", "slo", "tests", "segment", "start-at", "quiet", "percentiles", "hdr-file-prefix"} {
		if f.Changed(name) {
			return fmt.Errorf("--%s and a connection ramp (--connections-start/--connections-step) cannot be used together%s", name, rampConflict[name])
		}
	}
	if c.Mode == loadgen.ModeSet && len(c.Commands) == 0 && loadgen.InsertOnly(c.SetCmd) {
		return fmt.Errorf("%s only inserts: each step of a connection ramp writes the keys again and would count refused writes; use --mode get after a --prefill, or a write command that overwrites (--set-cmd SET)", c.SetCmd)
	}
	r.Ramp = curve.Ramp{Start: r.start, Step: r.step, Max: c.Connections}
	c.Requests, c.Duration = 0, r.stepDuration
	if !f.Changed("warmup") {
		c.Warmup = DefaultRampSettle
	}
	r.on = true
	return nil
}

// rampConflict says why a flag cannot run with a ramp, where the flag's
// name alone does not.
var rampConflict = map[string]string{
	"requests": ": each step lasts --step-duration",
	"duration": ": each step lasts --step-duration",
	"segment":  ": the steps of the agents would not line up",
	"start-at": ": only the first step could start then",
}

// runRamp measures each step of the ramp, one run per step, and prints
// the steps measured, also when one fails or Ctrl-C stops the ramp.
func runRamp(ctx context.Context, o *benchOptions) error {
	base := o.Config
	base.Progress = nil
	measure := func(ctx context.Context, n int) (loadgen.Result, error) {
		cfg := base
		cfg.Connections = n
		return o.runPoint(ctx, cfg, fmt.Sprintf("ramp: %d connections", n))
	}
	steps, err := o.ramp.Ramp.Sweep(ctx, measure)
	if err != nil && len(steps) > 0 {
		fmt.Fprintf(o.ErrOut, "ramp: stopped after %d of %d steps; the report has the steps measured\n", len(steps), len(o.ramp.Ramp.Counts()))
	}
	if len(steps) == 0 {
		if err == nil {
			err = errors.New("the ramp measured nothing")
		}
		return err
	}
	if werr := output.WriteCurve(o.Out, o.Output, output.Curve{Ramp: steps}); werr != nil && err == nil {
		err = werr
	}
	return err
}
