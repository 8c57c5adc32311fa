package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kvbench/kvbench/pkg/lazyfs"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/recovery"
	"github.com/kvbench/kvbench/pkg/target"
)

// powerCheck finds once whether this machine can mount the lazy file
// system.
type powerCheck struct {
	once sync.Once
	err  error
}

// powerLoss reports whether the recovery attempts can cut the power; the
// first time it cannot, it says so in the log.
func (r *run) powerLoss() bool {
	r.power.once.Do(func() {
		if r.power.err = lazyfs.Available(); r.power.err != nil {
			r.log("--power-loss: %v; the recovery attempts crash the process only", r.power.err)
		}
	})
	return r.power.err == nil
}

// checkPowerLoss refuses --power-loss without the recovery mode, where it
// would do nothing.
func checkPowerLoss(o Options) error {
	if o.PowerLoss && !slices.Contains(o.Modes, results.ModeRecovery) {
		return fmt.Errorf("%w: --power-loss applies to the recovery mode only: add recovery to --modes", ErrOptions)
	}
	return nil
}

// crashSite prepares the server directory of an attempt in the directory
// dir kvbench made for it: a recovery attempt's crashes the process, or
// with Options.PowerLoss is the mount point of a lazy file system backed
// by dir/data.
func (r *run) crashSite(sc *Scenario, dir string) (*recovery.Site, error) {
	crash := ""
	if sc.Mode == results.ModeRecovery {
		crash = results.CrashProcess
		if r.o.PowerLoss && r.powerLoss() {
			crash = results.CrashPower
		}
	}
	return recovery.NewSite(dir, crash)
}

// recovery is the recovery mode's measure: package recovery's Run on the
// attempt's prefilled server.
func (r *run) recovery(ctx context.Context, sc *Scenario, srv *server) (target.Instance, recovery.Figures, error) {
	o := recovery.Config{Connections: r.o.Connections, Requests: r.o.Requests, Timeout: r.o.Timeout, ReadyTimeout: r.o.ReadyTimeout, Tracker: r.o.Tracker}
	return recovery.Run(ctx, sc.Target, sc.Strategy, srv.inst, srv.site, o)
}
