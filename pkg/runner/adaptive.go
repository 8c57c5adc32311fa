package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/adaptive"
	"github.com/kvbench/kvbench/pkg/runner/placement"
	"github.com/kvbench/kvbench/pkg/runner/status"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// An adaptive run (Options.Precision) measures the servers of one mode
// side by side in blocks of short slices, in the order package adaptive
// designs, until its comparisons are precise enough or MaxTime has gone.
// A write slice writes keys no slice wrote before; when the next block
// would take a server past the keyspace, every server of the mode is
// started afresh together. A slice the machine disturbed
// (machine.DefaultRule) is written with its reason in the disturbed
// column and left out of the comparisons.

// Sliceable says whether the options can run adaptive (Precision): the
// modes set, get and mixed, measured in this process; the rest (curves,
// recovery, workloads, profiles, power loss, agents) measures rounds. The
// error names what cannot be sliced.
func (o Options) Sliceable() error {
	var why []string
	if o.Rates != "" || o.SLO != "" {
		why = append(why, "--rates and --slo measure curves per round")
	}
	if slices.Contains(o.Modes, results.ModeRecovery) {
		why = append(why, "--modes recovery crashes a server per round")
	}
	if len(o.Workloads) > 0 {
		why = append(why, "--workload runs a mix per round")
	}
	if o.Profile {
		why = append(why, "--profile profiles a round")
	}
	if o.PowerLoss {
		why = append(why, "--power-loss crashes a server per round")
	}
	if o.Agents > 1 {
		why = append(why, "--agents merges agents per round")
	}
	if o.Duration > 0 {
		why = append(why, "--duration sets a round's length (an adaptive run's slices are --slice long)")
	}
	if o.PersistJob != "" {
		why = append(why, "--persist-job sets a job off in each round's measured phase")
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

// checkAdaptive checks the adaptive options.
func (o Options) checkAdaptive() error {
	if o.Precision < 0 || o.Precision >= 1 {
		return fmt.Errorf("--precision %g%%: want a percentage above 0 and below 100", o.Precision*100)
	}
	if o.Precision == 0 {
		return nil
	}
	if err := o.Sliceable(); err != nil {
		return fmt.Errorf("--precision: %w: give --rounds instead", err)
	}
	if o.Slice < 10*time.Millisecond || o.MaxTime < time.Second {
		return fmt.Errorf("--slice %s, --max-time %s: want a slice of 10ms or more and a time of 1s or more", o.Slice, o.MaxTime)
	}
	return nil
}

// side is one scenario of an adaptive mode: its server and its slices.
type side struct {
	sc  *Scenario
	srv server
	up  bool
	cfg loadgen.Config // its load, before a slice's requests and keys
	// requests is a slice's length, warmup the requests sent before it
	// unmeasured; nextKey the first key of the next write slice.
	requests, warmup, nextKey int64
	// started and prefilled are its server's last start and prefill,
	// written on the next slice's row (start_s, prefill_s) and then
	// zeroed.
	started, prefilled time.Duration
	// slices counts its slices (their rows' round numbers), failures its
	// failed ones.
	slices, failures int
	failed           bool
	// qps and p99 are the logs of its ok, undisturbed slices' figures,
	// by block.
	qps, p99 map[int][]float64
}

// adaptive runs the plan's scenarios mode by mode in blocks of slices
// until the comparisons are precise enough or the time is up.
func (r *run) adaptive(ctx context.Context) error {
	deadline := r.started.Add(r.o.MaxTime)
	groups := r.plan.modeGroups()
	for i, g := range groups {
		if ctx.Err() != nil {
			r.res.Interrupted = true
			return nil
		}
		// What the modes before left is shared by the modes after.
		until := time.Now().Add(time.Until(deadline) / time.Duration(len(groups)-i))
		if err := r.measureMode(ctx, g, until); err != nil {
			return err
		}
		if r.res.Interrupted {
			return nil
		}
	}
	return nil
}

// modeGroups are the plan's scenarios by mode, in the plan's mode order
// but set last: the modes before share the time evenly and leave what
// they did not need to the ones after, and set's slices, each into a
// growing server, spread the most.
func (p *Plan) modeGroups() [][]*Scenario {
	var groups [][]*Scenario
	modes := slices.Clone(p.Options.Modes)
	if i := slices.Index(modes, string(loadgen.ModeSet)); i >= 0 {
		modes = append(slices.Delete(modes, i, i+1), string(loadgen.ModeSet))
	}
	for _, m := range modes {
		var g []*Scenario
		for _, sc := range p.Scenarios {
			if string(sc.Mode) == m {
				g = append(g, sc)
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// measureMode measures the scenarios of one mode side by side until
// their comparisons are precise enough, until, or an interruption.
func (r *run) measureMode(ctx context.Context, scs []*Scenario, until time.Time) error {
	sides := make([]*side, len(scs))
	for i, sc := range scs {
		sides[i] = &side{sc: sc, qps: map[int][]float64{}, p99: map[int][]float64{}}
	}
	defer r.stopSides(ctx, sides)
	mode := scs[0].Mode
	if err := r.startSides(ctx, sides); err != nil {
		return err
	}
	rule := stats.Precision{Target: r.o.Precision, Confidence: stats.DefaultConfidence, MinPairs: stats.DefaultMinPairs}
	active := liveSides(sides)
	for block := 1; len(active) > 0; block++ {
		if ctx.Err() != nil {
			r.res.Interrupted = true
			return nil
		}
		if block == 2 {
			r.resize(sides)
		}
		if mode == loadgen.ModeSet && needsRestart(active, r.o.Keyspace) {
			if err := r.restartSides(ctx, active); err != nil {
				return err
			}
		}
		var measured []*sliceResult
		for i, s := range adaptive.Order(active, block) {
			if s.failed || r.res.Interrupted {
				continue
			}
			res, err := r.slice(ctx, s, block, i+1)
			if res != nil {
				measured = append(measured, res)
			}
			if err != nil {
				return errors.Join(err, r.endBlock(mode, block, measured))
			}
		}
		if err := r.endBlock(mode, block, measured); err != nil || r.res.Interrupted {
			return err
		}
		all, open, err := r.openComparisons(mode, rule)
		if err != nil {
			return err
		}
		r.log("%s", adaptive.BlockLine(string(mode), block, all, open, r.o.Precision, status.Duration(max(time.Until(until), 0))))
		active = nil
		for _, c := range open {
			for _, s := range sides {
				k := [2]string{s.sc.Desc.Name, s.sc.Strategy.Name}
				if !s.failed && !slices.Contains(active, s) && (k == [2]string{c.Target, c.Strategy} || k == [2]string{c.AgainstTarget, c.AgainstStrategy}) {
					active = append(active, s)
				}
			}
		}
		if len(all) == 0 && block < stats.DefaultMinPairs {
			active = liveSides(sides) // nothing to compare: the scenarios' own figures, from as many blocks
		}
		if len(active) > 0 && time.Now().After(until) {
			r.log("%s: time is up (--max-time %s) with %d of %d comparisons short of ±%s:", mode, status.Duration(r.o.MaxTime),
				len(open), len(all), adaptive.Percent(r.o.Precision))
			for _, c := range open {
				r.log("  %s: QPS ratio %s, ±%s after %d blocks", adaptive.ComparisonName(c), c.Ratio, adaptive.Percent(c.Ratio.HalfWidth()), c.Ratio.N)
			}
			break
		}
	}
	return nil
}

// liveSides are the sides whose server is up.
func liveSides(sides []*side) []*side {
	var out []*side
	for _, s := range sides {
		if !s.failed {
			out = append(out, s)
		}
	}
	return out
}

// openComparisons are the QPS comparisons the report makes of the
// mode's slices so far (report.Build on the run's rows: the very
// comparisons it will print), and those whose interval is not yet
// precise enough by rule.
func (r *run) openComparisons(mode loadgen.Mode, rule stats.Precision) (all, open []report.Comparison, err error) {
	var rows []results.Row
	for _, row := range r.res.Rows {
		if row.Mode == string(mode) {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	opts, err := r.reportOptions()
	if err != nil {
		return nil, nil, err
	}
	rep, err := report.Build(rows, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("the comparisons of %s: %w", mode, err)
	}
	all, open = adaptive.Open(rep.Comparisons, rule)
	return all, open, nil
}

// startSides starts every side's server (and prefills it for reads) and
// sizes its slices from the plan's estimate of its rate.
func (r *run) startSides(ctx context.Context, sides []*side) error {
	for _, s := range sides {
		if err := r.startSide(ctx, s); err != nil {
			return err
		}
		if s.failed {
			continue
		}
		r.sizeSlice(s, r.plan.qpsOf(s.sc))
	}
	return nil
}

// startSide starts one side's server, retrying as an attempt does; a
// side out of retries is failed, and the run goes on without it.
func (r *run) startSide(ctx context.Context, s *side) error {
	for {
		err := r.tryStart(ctx, s)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			r.res.Interrupted = true
			return nil
		}
		s.failures++
		if s.failures > r.o.Retries {
			r.failSide(s, err)
			return nil
		}
		r.log("%s: start failed, retrying: %v", s.sc.Name(), err)
	}
}

// tryStart starts s's server and prefills it.
func (r *run) tryStart(ctx context.Context, s *side) error {
	e := Event{Kind: EventStart, Scenario: s.sc, Round: s.slices + 1, Attempt: 1}
	srv, err := r.start(ctx, e)
	r.res.Timing.Start += srv.took
	if err != nil {
		return err
	}
	s.srv, s.up, s.nextKey, s.started, s.prefilled = srv, true, 0, srv.took, 0
	if err := placement.PinServer(r.o.placement, srv.info); err != nil {
		return err
	}
	e.Instance = srv.info
	cfg, _, err := r.load(ctx, e)
	if err != nil {
		return err
	}
	s.cfg = cfg
	if s.sc.Mode != loadgen.ModeSet {
		took, err := r.prefillStep(ctx, e, &s.srv, cfg, nil)
		r.res.Timing.Prefill += took
		s.prefilled = took
		if err != nil {
			return err
		}
	}
	return nil
}

// failSide gives a side up: its scenario has failed.
func (r *run) failSide(s *side, err error) {
	s.failed = true
	r.failed[s.sc] = true
	r.res.Failed = append(r.res.Failed, fmt.Sprintf("%s (slice %d)", s.sc.Name(), s.slices))
	r.log("%s: FAILED, no retries left: %v", s.sc.Name(), err)
}

// stopSides stops the sides' servers.
func (r *run) stopSides(ctx context.Context, sides []*side) {
	for _, s := range sides {
		r.stopSide(ctx, s)
	}
}

// stopSide stops s's server, if it is up.
func (r *run) stopSide(ctx context.Context, s *side) {
	if !s.up {
		return
	}
	s.up = false
	took, err := r.stop(ctx, &s.srv)
	r.res.Timing.Stop += took
	if err != nil && ctx.Err() == nil {
		r.log("%s: warning: stop: %v", s.sc.Name(), err)
	}
}

// restartSides starts the sides' servers afresh, together.
func (r *run) restartSides(ctx context.Context, sides []*side) error {
	r.stopSides(ctx, sides)
	for _, s := range sides {
		if err := r.startSide(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// needsRestart says whether a write block would take a side past the
// keyspace.
func needsRestart(sides []*side, keyspace int64) bool {
	return slices.ContainsFunc(sides, func(s *side) bool { return s.nextKey+adaptive.SlicesPerBlock*(s.warmup+s.requests) > keyspace })
}

// sizeSlice sizes s's slices and their warmups at qps requests per
// second (adaptive.SliceSize).
func (r *run) sizeSlice(s *side, qps float64) {
	o := r.o
	s.requests, s.warmup = adaptive.SliceSize(qps, o.Slice, o.Pipeline, o.Connections, o.Keyspace, s.sc.Mode == loadgen.ModeSet)
}

// resize sizes the sides' slices from the first block's rates, which the
// plan only estimated.
func (r *run) resize(sides []*side) {
	for _, s := range sides {
		if len(s.qps[1]) > 0 {
			r.sizeSlice(s, math.Exp(stats.Mean(s.qps[1])))
		}
	}
}

// sliceResult is one slice's measurement, kept until its block ends.
type sliceResult struct {
	side *side
	out  attemptResult
	sig  machine.Signals
}

// slice measures one slice of s in block; a failed slice restarts the
// side's server, up to Retries times (and its result is kept, failed).
func (r *run) slice(ctx context.Context, s *side, block, pos int) (*sliceResult, error) {
	s.slices++
	e := Event{Kind: EventStart, Scenario: s.sc, Round: s.slices, Attempt: 1, Block: block, Instance: s.srv.info}
	r.event(e) // the display's slice
	cfg := s.cfg
	cfg.Requests = s.requests // the seed stays the prefill's: reads check its values
	cfg.WarmupRequests, cfg.Warmup = s.warmup, 0
	cfg.Progress = func(p loadgen.Progress) {
		pe := e
		pe.Kind, pe.Progress = EventProgress, p
		r.event(pe)
	}
	if s.sc.Mode == loadgen.ModeSet {
		// Keys no slice wrote, each once.
		cfg.KeyMinimum, cfg.Keyspace, cfg.KeyPattern = s.nextKey, s.warmup+s.requests, keyspace.Permutation
		s.nextKey += s.warmup + s.requests
	}
	st := &attemptSteps{at: time.Now(), load: cfg, srv: server{info: s.srv.info, site: s.srv.site, took: s.started}, prefill: s.prefilled}
	s.started, s.prefilled = 0, 0
	pids := append([]int{os.Getpid()}, target.PIDs(s.srv.info)...)
	// The load generator shares this process's heap: a collection due in
	// the middle of a slice would fall, block after block, on the scenario
	// at the same place in the rotated order. Collect before every slice.
	runtime.GC()
	before := machine.Take(pids...)
	loop, err := r.measureStep(ctx, e, &s.srv, cfg)
	sig := machine.Between(before, machine.Take(pids...))
	st.loop, st.signals = loop, &sig
	if loop != nil {
		st.tel = loop.tel.Finish(ctx, s.srv.info, s.sc.Desc.Password)
		r.res.Timing.Measure += loop.took
	}
	st.block, st.slice = block, pos
	status, msg := outcome(ctx, err)
	res := &sliceResult{side: s, out: r.resultOf(e, st, status, msg), sig: sig}
	e.Kind, e.Row, e.Err, e.Timing, e.Final = EventEnd, res.out.row, err, res.out.timing, true
	r.event(e)
	switch {
	case status == results.StatusInterrupted:
		r.res.Interrupted = true
	case err != nil:
		s.failures++
		r.log("%s slice %d: failed: %v", s.sc.Name(), s.slices, err)
		r.stopSide(ctx, s)
		if s.failures > r.o.Retries {
			r.failSide(s, err)
			return res, nil
		}
		return res, r.startSide(ctx, s)
	}
	return res, nil
}

// endBlock judges a block's slices against the block's own signals (a
// slice is disturbed when the machine did more besides it than besides
// the block's typical slice: machine.DefaultRule over the block's
// median), writes their rows and keeps the undisturbed figures.
func (r *run) endBlock(mode loadgen.Mode, block int, res []*sliceResult) error {
	var sigs []machine.Signals
	for _, x := range res {
		if x.sig.Err == nil {
			sigs = append(sigs, x.sig)
		}
	}
	typical := machine.Median(sigs)
	if bad, why := machine.DefaultRule.Disturbed(typical); bad && !r.busyWarned {
		r.busyWarned = true
		r.log("warning: %s block %d: the machine is busy besides the measurement (%s, the block's median): each slice is compared with its block's, which share it, but every figure is lower than on a quiet machine", mode, block, why)
	}
	for _, x := range res {
		row := &x.out.rows[0]
		if x.sig.Err == nil && row.Status == results.StatusOK {
			if bad, why := machine.DefaultRule.DisturbedAgainst(x.sig, typical); bad {
				row.Disturbed = why
				x.out.row.Disturbed = why
				r.log("%s slice %d: disturbed (%s): left out of the comparisons", x.side.sc.Name(), row.Round, why)
			}
		}
		if err := r.writeRows(x.out.rows); err != nil {
			return err
		}
		if err := r.writeSeries(x.out.series); err != nil {
			return err
		}
		r.rec.Attempt(x.out.rows, x.out.series)
		if row.Status == results.StatusOK && row.Disturbed == "" && row.QPS > 0 && row.Conflicts == 0 {
			s := x.side
			s.qps[block] = append(s.qps[block], math.Log(row.QPS))
			if row.LatP99Us > 0 {
				s.p99[block] = append(s.p99[block], math.Log(row.LatP99Us))
			}
		}
	}
	return nil
}

// qpsOf is the plan's estimate of a scenario's rate.
func (p *Plan) qpsOf(sc *Scenario) float64 {
	qps := float64(EstimateQPS)
	k := keyOf(sc)
	if k.Always {
		qps = EstimateAlwaysQPS
	}
	if r := p.cal[sc.Desc.Name]; r != nil {
		if q := r.Rate(k, p.Options.SetRatio); q > 0 {
			qps = q
		}
	}
	return qps
}

// adaptiveEstimate is the expected time of an adaptive run: per mode, its
// servers' starts and prefills, then the blocks its comparisons are
// expected to need, at most MaxTime in all.
func (p *Plan) adaptiveEstimate() time.Duration {
	var total time.Duration
	for _, g := range p.modeGroups() {
		total += p.modeEstimate(g)
	}
	return min(total, p.Options.MaxTime)
}

// modeEstimate is one mode's expected time.
func (p *Plan) modeEstimate(g []*Scenario) time.Duration {
	o := p.Options
	var setup, block time.Duration
	for _, sc := range g {
		setup += p.startStopOf(sc)
		if sc.Mode != loadgen.ModeSet {
			setup += seconds(float64(o.Keyspace) / p.prefillRateOf(sc))
		}
		block += adaptive.SlicesPerBlock * o.Slice
	}
	n := adaptive.ExpectedBlocks(p.spread(), o.Precision)
	d := setup + time.Duration(n)*block
	if g[0].Mode == loadgen.ModeSet { // servers started afresh when full
		d += time.Duration(n) * setup
	}
	return d
}

// spread is the spread of a block's log-ratio the estimate assumes.
func (p *Plan) spread() float64 {
	if p.calSpread > 0 {
		return p.calSpread
	}
	return adaptive.AssumedSpread
}

// writeAdaptive writes an adaptive plan: per mode, its scenarios and the
// blocks expected.
func (p *Plan) writeAdaptive(b *strings.Builder) {
	o := p.Options
	for _, g := range p.modeGroups() {
		var names []string
		for _, sc := range g {
			names = append(names, sc.Desc.Name+"/"+sc.Strategy.Name)
		}
		fmt.Fprintf(b, "%s: %d servers side by side (%s); blocks of %d slices each of %s, about %d blocks, ~%s\n",
			g[0].Mode, len(g), strings.Join(names, ", "), adaptive.SlicesPerBlock, status.Duration(o.Slice),
			adaptive.ExpectedBlocks(p.spread(), o.Precision), status.Duration(p.modeEstimate(g)))
	}
	src := "assumed"
	if p.calSpread > 0 {
		src = "from " + p.calSpreadFile
	}
	p.writeProfileLine(b)
	fmt.Fprintf(b, "estimated time: %s (a block's spread %s, %s; %s; at most --max-time %s)\n",
		status.Duration(p.Estimate()), adaptive.Percent(p.spread()), src, p.calibrationNote(), status.Duration(o.MaxTime))
}
