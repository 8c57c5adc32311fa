package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/kvbench/kvbench/pkg/lazyfs"
	"github.com/kvbench/kvbench/pkg/results"
)

// crashSite is where an attempt's server keeps its files and how a
// recovery attempt's crash ends: a process crash, or, with
// Options.PowerLoss, a power cut of the lazy file system its directory is
// on.
type crashSite struct {
	// dir is the server's directory.
	dir string
	// fs is the lazy file system dir is on; nil for a process crash.
	fs *lazyfs.FS
	// crash is a recovery attempt's crash kind (results.CrashProcess or
	// CrashPower); empty for the other modes.
	crash string
}

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
// dir kvbench made for it, and for a recovery attempt its crash kind.
// With Options.PowerLoss a recovery attempt's server gets the mount point
// of a lazy file system backed by dir/data.
func (r *run) crashSite(sc *Scenario, dir string) (*crashSite, error) {
	if sc.Mode != results.ModeRecovery {
		return &crashSite{dir: dir}, nil
	}
	if !r.o.PowerLoss || !r.powerLoss() {
		return &crashSite{dir: dir, crash: results.CrashProcess}, nil
	}
	mnt, back := filepath.Join(dir, "mnt"), filepath.Join(dir, "data")
	for _, d := range []string{mnt, back} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("power loss: %w", err)
		}
	}
	fs, err := lazyfs.Mount(mnt, back)
	if err != nil {
		return nil, fmt.Errorf("power loss: %w", err)
	}
	return &crashSite{dir: mnt, fs: fs, crash: results.CrashPower}, nil
}

// cut drops what the killed server had not synced, for a power loss;
// nothing for a process crash.
func (c *crashSite) cut() error {
	if c.fs == nil {
		return nil
	}
	if err := c.fs.PowerCut(); err != nil {
		return fmt.Errorf("power cut: %w", err)
	}
	return nil
}

// close unmounts the lazy file system, if any; the server must be
// stopped.
func (c *crashSite) close() error {
	if c.fs == nil {
		return nil
	}
	return c.fs.Unmount()
}

// name is how the log names the site's crash.
func (c *crashSite) name() string {
	if c.fs != nil {
		return "power loss"
	}
	return "kill -9"
}
