package runner

import (
	"errors"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/runner/workloadrun"
	"github.com/kvbench/kvbench/pkg/workload"
)

// workloadConfig is the load generator's configuration of a workload in
// a run: the run's settings, then what the workload file sets (its
// commands, key pattern, value size, keyspace) over them.
func workloadConfig(o Options, w *workload.Workload) loadgen.Config {
	cfg := loadgen.DefaultConfig()
	cfg.Load = o.Load
	w.Apply(&cfg, func(string) bool { return false })
	return cfg
}

// ProbePrefix starts the keys on which a server without COMMAND is asked
// whether it has a workload's commands (workloadrun.ProbePrefix).
const ProbePrefix = workloadrun.ProbePrefix

// errUnsupported reports whether an attempt's error is a target lacking
// a workload's commands.
func errUnsupported(err error) bool { return errors.Is(err, mix.ErrUnsupported) }
