// Package calibration is the figures of this machine that the estimate
// of a "kvbench run" plan uses, per target (Rates): a measurement's rate
// by mode or workload (Key), the prefill's and a restarted server's
// reload rate, a server's start and stop. They come from the last run's
// detail CSV in the output directory (LastDetail, FromRows) when it
// measured the target with the same load, else from a short probe of a
// server (Probe); the spread of an adaptive run's blocks comes from the
// same CSV (BlockSpread).
package calibration

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// Sources of a target's figures.
const (
	SourceLastRun = "last run"
	SourceProbe   = "probe"
)

// Probe sizes: enough requests for a rate past the connections' setup,
// few enough that a probe takes well under a second a target (an
// fsync-always one a little more).
const (
	probeRequests       = 50_000
	probeAlwaysRequests = 10_000
	probeKeys           = 50_000
)

// probePrefix starts the keys a probe writes.
const probePrefix = "kvbench:calibrate:"

// Rates are one target's measured figures.
type Rates struct {
	// Source says where they come from: SourceLastRun or SourceProbe.
	Source string
	// QPS is a measurement's rate, by mode (or workload) and whether the
	// strategy fsyncs every write (always).
	QPS map[Key]float64
	// Prefill is the prefill's rate in keys per second; 0 when unknown.
	Prefill float64
	// Reload is a restarted server's rate of loading its keys, from the
	// recovery mode's rows (recovery_keys_per_s); 0 when unknown.
	Reload float64
	// Start and Stop are an attempt's; Start is per shard when Shards > 0.
	Start, Stop time.Duration
	Shards      int
}

// Key names a measured rate.
type Key struct {
	Always bool   // the strategy fsyncs every write (reads are not slowed)
	What   string // set, get, mixed, or a workload's name
}

// KeyOf is the key of a rate measured on a strategy of persistence (its
// class: always fsyncs every write) in mode, of what (the mode, or a
// workload's name).
func KeyOf(persistence, mode, what string) Key {
	return Key{Always: persistence == "always" && mode != string(loadgen.ModeGet), What: what}
}

// Rate is the rate of k: measured, or for mixed combined from set and get
// (a request's time is the mix of theirs), or for a workload the slower of
// set and get (its commands are neither: a loose bound); 0 when unknown.
func (r *Rates) Rate(k Key, setRatio int) float64 {
	if q := r.QPS[k]; q > 0 {
		return q
	}
	set, get := r.QPS[Key{k.Always, string(loadgen.ModeSet)}], r.QPS[Key{false, string(loadgen.ModeGet)}]
	if set <= 0 || get <= 0 {
		return 0
	}
	if k.What == string(loadgen.ModeMixed) {
		w := float64(setRatio) / 100
		return 1 / (w/set + (1-w)/get)
	}
	return min(set, get)
}

// StartOf is the start of an attempt of t: per shard times its shards.
func (r *Rates) StartOf(t target.Target) time.Duration {
	if r.Shards == 0 {
		return r.Start
	}
	return r.Start * time.Duration(PlannedShards(t, r.Shards))
}

// PlannedShards is the number of shards a cluster target forms, or
// measured when the target does not say.
func PlannedShards(t target.Target, measured int) int {
	if s, ok := t.(interface{ Shards() int }); ok {
		return s.Shards()
	}
	return measured
}

// LastDetail is the newest detail CSV (PREFIX_detail_*.csv) in the
// output directory dir; "" when there is none.
func LastDetail(dir, prefix string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, prefix+"_detail_*.csv"))
	if err != nil || len(files) == 0 {
		return "", err
	}
	newest, at := "", time.Time{}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(at) {
			newest, at = f, st.ModTime()
		}
	}
	return newest, nil
}

// Load is what a run's rows must have been measured with for their
// figures to be taken.
type Load struct {
	Pipeline, Connections, ValueSize, Agents int
}

// FromRows are the rates and timings of the targets named from a detail
// CSV's rows: its ok rows measured with load, the workloads' total rows;
// a target whose rows do not record the server's start and stop (files
// written before start_s) has none, and is left to the probe.
func FromRows(rows []results.Row, load Load, targets []string) map[string]*Rates {
	type sums struct {
		requests, elapsed           map[Key]float64
		keys, prefill, start, stop  float64
		attempts, shards, prefilled int
		reloads                     []float64 // recovery_keys_per_s
	}
	by := make(map[string]*sums)
	for _, r := range rows {
		if !r.OK() || r.Pipeline != load.Pipeline || r.Connections != load.Connections || r.ValueSize != load.ValueSize ||
			max(r.Agents, 1) != max(load.Agents, 1) || r.StartS <= 0 && r.Block == 0 || r.Workload != "" && r.Command != results.CommandTotal {
			continue
		}
		s := by[r.Target]
		if s == nil {
			s = &sums{requests: make(map[Key]float64), elapsed: make(map[Key]float64)}
			by[r.Target] = s
		}
		what := r.Mode
		if r.Workload != "" {
			what = r.Workload
		}
		k := KeyOf(r.Persistence, r.Mode, what)
		if r.Requests > 0 && r.ElapsedS > 0 {
			s.requests[k] += float64(r.Requests)
			s.elapsed[k] += r.ElapsedS
		}
		if r.RecoveryKeysPerS != nil && *r.RecoveryKeysPerS > 0 {
			s.reloads = append(s.reloads, *r.RecoveryKeysPerS)
		}
		if r.PrefillS > 0 && r.Workload == "" {
			s.keys += float64(r.Keyspace)
			s.prefill += r.PrefillS
			s.prefilled++
		}
		if r.StartS <= 0 { // a slice of an adaptive run that started no server
			continue
		}
		start := r.StartS
		if r.Shards > 0 {
			start /= float64(r.Shards)
			s.shards = r.Shards
		}
		s.start += start
		s.stop += r.StopS
		s.attempts++
	}
	out := make(map[string]*Rates)
	for _, name := range targets {
		s := by[name]
		if s == nil {
			continue
		}
		r := &Rates{Source: SourceLastRun, QPS: make(map[Key]float64), Shards: s.shards}
		if s.attempts > 0 {
			r.Start, r.Stop = seconds(s.start/float64(s.attempts)), seconds(s.stop/float64(s.attempts))
		}
		for k, n := range s.requests {
			r.QPS[k] = n / s.elapsed[k]
		}
		if s.prefill > 0 {
			r.Prefill = s.keys / s.prefill
		}
		if len(s.reloads) > 0 {
			r.Reload = stats.Median(s.reloads)
		}
		out[name] = r
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Sizes bound a probe: the run's requests and keyspace, and its
// prefill's pipeline.
type Sizes struct {
	Requests, Keyspace int64
	PrefillPipeline    int
}

// Probe measures a set burst on the server cfg loads (cfg: the run's load
// on it) into r, as a strategy that fsyncs every write when always, and
// first, with reads, a prefill and a get burst: the reads and the
// prefill are measured once, on the first server of a target (fsync does
// not slow them).
func Probe(ctx context.Context, cfg loadgen.Config, sz Sizes, always, reads bool, r *Rates) error {
	cfg.VerifyGet, cfg.Progress = false, nil
	burst := func(mode loadgen.Mode, requests, keys int64, prefix string) (float64, error) {
		c := cfg
		c.Mode, c.Requests, c.Keyspace, c.KeyPrefix = mode, requests, keys, probePrefix+prefix
		res, err := loadgen.Run(ctx, c)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", mode, err)
		}
		return float64(res.Requests) / res.Elapsed.Seconds(), nil
	}
	if reads { // first: a prefill wants an empty server
		pc := cfg
		pc.Keyspace, pc.Pipeline, pc.KeyPrefix = min(sz.Keyspace, probeKeys), sz.PrefillPipeline, probePrefix+"get:"
		pre, err := prefill.Prefill(ctx, pc)
		if err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
		r.Prefill = float64(pc.Keyspace) / pre.Elapsed.Seconds()
		if r.QPS[Key{false, string(loadgen.ModeGet)}], err = burst(loadgen.ModeGet, min(sz.Requests, probeRequests), pc.Keyspace, "get:"); err != nil {
			return err
		}
	}
	n := min(sz.Requests, probeRequests)
	if always {
		n = min(sz.Requests, probeAlwaysRequests)
	}
	// Each key once: an insert-only write (RSET) refuses a key twice.
	var err error
	r.QPS[Key{always, string(loadgen.ModeSet)}], err = burst(loadgen.ModeSet, n, n, "set:")
	return err
}

// BlockSpread is the median, over the pairs of scenarios of a mode, of
// the standard deviation of their blocks' log-ratios in an adaptive run's
// rows (undisturbed ok slices); 0 when the rows have no blocks.
func BlockSpread(rows []results.Row) float64 {
	type key struct{ mode, scenario string }
	logs := map[key]map[int][]float64{}
	modes := map[string][]string{}
	for _, r := range rows {
		if r.Block == 0 || !r.OK() || r.Disturbed != "" || r.QPS <= 0 || r.Workload != "" {
			continue
		}
		k := key{r.Mode, r.Target + "/" + r.Strategy}
		if logs[k] == nil {
			logs[k] = map[int][]float64{}
			modes[r.Mode] = append(modes[r.Mode], k.scenario)
		}
		logs[k][r.Block] = append(logs[k][r.Block], math.Log(r.QPS))
	}
	var sds []float64
	for mode, scs := range modes {
		for i, a := range scs {
			for _, b := range scs[i+1:] {
				var d []float64
				for blk, xs := range logs[key{mode, a}] {
					if ys := logs[key{mode, b}][blk]; len(ys) > 0 {
						d = append(d, stats.Mean(xs)-stats.Mean(ys))
					}
				}
				if len(d) >= 3 {
					sds = append(sds, stats.Describe(d, stats.DefaultConfidence).StdDev)
				}
			}
		}
	}
	if len(sds) == 0 {
		return 0
	}
	return stats.Median(sds)
}
