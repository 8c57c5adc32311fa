package runner

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A run's temporary directory, PARENT/.kvbench-tmp-XXXX, holds the
// servers' directories and a lock file the run keeps locked (flock) for its
// life. The kernel drops the lock when the run's process dies, however it
// dies, so a directory whose lock can be taken belongs to a run that is
// gone (kill -9, a crash, a reboot): the next run into PARENT removes it.
const (
	tempPrefix = ".kvbench-tmp-"
	tempLock   = "lock"
	// newPrefix names the directory until it holds its locked lock file:
	// renamed to tempPrefix..., it is never seen unlocked by a live run.
	newPrefix = ".kvbench-new-"
)

// tempDir is a run's temporary directory, locked while the run lasts.
type tempDir struct {
	path string
	lock *os.File
}

// newTempDir creates and locks a temporary directory in parent.
func newTempDir(parent string) (*tempDir, error) {
	dir, err := os.MkdirTemp(parent, newPrefix)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, tempLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			err = fmt.Errorf("lock %s: %w", f.Name(), err)
		}
	}
	final := filepath.Join(filepath.Dir(dir), tempPrefix+strings.TrimPrefix(filepath.Base(dir), newPrefix))
	if err == nil {
		if err = os.Rename(dir, final); err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &tempDir{path: final, lock: f}, nil
}

// remove removes the directory, then releases its lock.
func (d *tempDir) remove() error {
	err := os.RemoveAll(d.path)
	d.lock.Close()
	return err
}

// removeStale removes the temporary directories in parent whose lock is
// free (their run is gone) and says on w what it removed. A directory
// without a lock file is left alone: it is not known to be a dead run's.
func removeStale(parent string, w io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(parent, tempPrefix+"*"))
	for _, dir := range dirs {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, tempLock))
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			f.Close() // a live run holds it
			continue
		}
		size := diskUsage(dir)
		err = os.RemoveAll(dir)
		f.Close()
		if err != nil {
			fmt.Fprintf(w, "warning: could not remove %s, left by a run that did not finish: %v\n", dir, err)
			continue
		}
		fmt.Fprintf(w, "removed %s (%s), left by a run that did not finish\n", dir, formatBytes(size))
	}
}

// diskUsage is the size of the files under dir, as far as they can be
// read.
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// formatBytes is n in B, KB, MB or GB (powers of 1000).
func formatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	x, i := float64(n)/unit, 0
	for x >= unit && i < 2 {
		x, i = x/unit, i+1
	}
	return fmt.Sprintf("%.1f %s", x, []string{"KB", "MB", "GB"}[i])
}
