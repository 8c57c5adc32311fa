package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/curve"
	"github.com/kvbench/kvbench/pkg/flame"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// Profiles (Options.Profile) are taken in a round of their own: after the
// measured rounds, every scenario that was measured runs once more on a
// fresh server, prefilled as the others, and perf records the server's
// processes during that attempt's measured phase. The attempt's row is
// not written: the sampling costs the server CPU, and the measured rounds
// stay as they would be without it.

// profiling is the profile of the attempt running.
type profiling struct {
	// data is perf's file.
	data string
	prof *flame.Profile
	err  error
}

// startProfile starts recording the server's CPU profile when the
// attempt is a profile round, and returns what stops it.
func (r *run) startProfile(ctx context.Context, info target.Info) (stop func()) {
	p := r.profiling
	if p == nil {
		return func() {}
	}
	pids := info.NodePIDs
	if len(pids) == 0 && info.PID > 0 {
		pids = []int{info.PID}
	}
	if len(pids) == 0 || slices.Contains(pids, 0) {
		p.err = errors.New("the server is not a process kvbench started: nothing to profile")
		return func() {}
	}
	rec, err := flame.Record(ctx, flame.DefaultPerf, pids, p.data)
	if err != nil {
		p.err = err
		return func() {}
	}
	return func() { p.prof, p.err = rec.Stop(ctx) }
}

// profileRounds runs the profile round of every scenario measured, and
// writes each one's flame graph and its differential graph against the
// baseline strategy of the same target and mode into Files.Flames. Where
// perf is missing or may not record it says so in one line and goes on.
func (r *run) profileRounds(ctx context.Context) {
	if !r.o.Profile || ctx.Err() != nil {
		return
	}
	if _, err := exec.LookPath(flame.DefaultPerf); err != nil {
		r.log("--profile: no profiles: %v", err)
		return
	}
	// A profile round is not measured: it feeds no live metric, its
	// events stay out of the progress display, and it profiles the closed
	// loop alone, without the load curve's phases.
	meter, spec := r.o.Meter, r.o.curve
	r.o.Meter, r.o.curve, r.quiet = nil, curve.Spec{}, true
	defer func() { r.o.Meter, r.o.curve, r.quiet = meter, spec, false }()
	profiles := make(map[*Scenario]*flame.Profile)
	var done []*Scenario
	for _, sc := range r.plan.Scenarios {
		if ctx.Err() != nil {
			r.res.Interrupted = true
			break
		}
		if r.failed[sc] || sc.Workload != nil && r.unsupported[[2]string{sc.Desc.Name, sc.Workload.Name}] != "" {
			continue
		}
		if sc.Mode == results.ModeRecovery {
			r.log("%s: no profile: recovery has no measured load", sc.Name())
			continue
		}
		r.log("%s: profile round", sc.Name())
		p := &profiling{data: filepath.Join(r.tmp, "perf-"+safeName(sc.Name())+".data")}
		r.profiling = p
		_, err := r.attempt(ctx, Event{Scenario: sc, Round: r.o.Rounds + 1, Attempt: 1})
		r.profiling = nil
		os.Remove(p.data)
		if errors.Is(p.err, flame.ErrNoPerf) {
			r.log("--profile: no profiles: %v", p.err)
			return
		}
		if err == nil {
			err = p.err
		}
		if err == nil && p.prof == nil {
			err = errors.New("nothing was recorded")
		}
		if err != nil {
			r.log("%s: no profile: %v", sc.Name(), err)
			continue
		}
		profiles[sc] = p.prof
		done = append(done, sc)
	}
	for _, sc := range done {
		fp := report.Profile{Target: sc.Desc.Name, Strategy: sc.Strategy.Name, Mode: sc.what()}
		name := r.flameName(sc, false)
		title := fmt.Sprintf("CPU of %s (%d samples)", sc.Name(), profiles[sc].Total())
		if err := writeFlame(name, func(b *bytes.Buffer) error {
			return flame.WriteSVG(b, profiles[sc], flame.Options{Title: title})
		}); err != nil {
			r.log("%s: no flame graph: %v", sc.Name(), err)
			continue
		}
		fp.Flame = filepath.Base(name)
		r.log("flame graph: %s", name)
		if base := r.profileBaseline(sc, done); base != nil {
			name := r.flameName(sc, true)
			title := fmt.Sprintf("CPU of %s against %s: red grew, blue shrank", sc.Name(), base.Strategy.Name)
			if err := writeFlame(name, func(b *bytes.Buffer) error {
				return flame.WriteDiffSVG(b, profiles[sc], profiles[base], flame.Options{Title: title})
			}); err != nil {
				r.log("%s: no differential flame graph: %v", sc.Name(), err)
			} else {
				fp.Diff, fp.Baseline = filepath.Base(name), base.Strategy.Name
				r.log("differential flame graph: %s", name)
			}
		}
		r.res.Files.Flames = append(r.res.Files.Flames, fp)
	}
}

// flameName is the file of a scenario's flame graph:
// PREFIX_flame_TARGET_STRATEGY_MODE_TIME.svg, or PREFIX_flame_diff_...
func (r *run) flameName(sc *Scenario, diff bool) string {
	kind := "flame"
	if diff {
		kind = "flame_diff"
	}
	return filepath.Join(r.o.OutDir, fmt.Sprintf("%s_%s_%s_%s_%s_%s.svg", r.o.Prefix, kind,
		safeName(sc.Desc.Name), safeName(sc.Strategy.Name), safeName(sc.what()), r.res.RunID))
}

// writeFlame writes the SVG draw makes to the file name.
func writeFlame(name string, draw func(*bytes.Buffer) error) error {
	var b bytes.Buffer
	if err := draw(&b); err != nil {
		return err
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}

// profileBaseline is the profiled scenario of sc's target, mode and alloc
// whose strategy is its baseline, by the report's rule (report.Build):
// Options.Baselines' strategy for the target, else the strategy whose
// persistence is "none" (the first by name), else, when the target's
// strategies name no persistence, "none" or "nopersist". Nil when sc is
// the baseline, or the baseline was not profiled.
func (r *run) profileBaseline(sc *Scenario, profiled []*Scenario) *Scenario {
	var same []*Scenario
	anyPersistence := false
	for _, o := range profiled {
		if o.Desc.Name == sc.Desc.Name && o.what() == sc.what() && o.Strategy.Alloc == sc.Strategy.Alloc {
			same = append(same, o)
			anyPersistence = anyPersistence || o.Strategy.Persistence != ""
		}
	}
	slices.SortFunc(same, func(a, b *Scenario) int { return strings.Compare(a.Strategy.Name, b.Strategy.Name) })
	baselines, _ := report.ParseBaselines(r.o.Baselines) // checked by Validate
	var base *Scenario
	for _, o := range same {
		st := o.Strategy
		want, set := baselines[sc.Desc.Name]
		if set && st.Name == want ||
			!set && anyPersistence && st.Persistence == "none" ||
			!set && !anyPersistence && (st.Name == "none" || st.Name == "nopersist") {
			base = o
			break
		}
	}
	if base == sc {
		return nil
	}
	return base
}
