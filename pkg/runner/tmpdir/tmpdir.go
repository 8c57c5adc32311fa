// Package tmpdir is a run's temporary directory, PARENT/.kvbench-tmp-XXXX:
// created and locked for the run's life (New), removed by a watcher
// however the run's process ends (Dir.Watch), and, where that could not
// happen, by the next run into PARENT (RemoveStale).
package tmpdir

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A run's temporary directory, PARENT/.kvbench-tmp-XXXX, holds the
// servers' directories and a lock file the run keeps locked (flock) for its
// life. It stays on PARENT's disk (by default in --out: /tmp may be memory,
// where an fsync costs nothing), so it cannot be an unlinked directory
// (nothing can be created in one) nor live under $TMPDIR.
//
// A watcher removes it when the run's process ends, however it ends: a
// shell in a process group of its own (a terminal's Ctrl-C is the run's to
// handle) waiting on a pipe whose other end only the run holds. The kernel
// closes that end when the run dies, kill -9 included; the shell then
// removes the directory, again while the dying servers' last files are
// going, and exits. Where the watcher could not do it (killed with the
// run, a reboot), the lock is the fallback: the kernel drops it when the
// run's process dies, so a directory whose lock can be taken belongs to a
// run that is gone, and the next run into PARENT removes it.
const (
	tempPrefix = ".kvbench-tmp-"
	tempLock   = "lock"
	// newPrefix names the directory until it holds its locked lock file:
	// renamed to tempPrefix..., it is never seen unlocked by a live run.
	newPrefix = ".kvbench-new-"
)

// Dir is a run's temporary directory, locked while the run lasts.
type Dir struct {
	// Path is the directory's absolute path.
	Path string
	lock *os.File
	// watcher removes the directory when pipe, the run's end of its
	// stdin, closes; nil when it could not start (the lock remains).
	watcher *exec.Cmd
	pipe    *os.File
}

// watchScript is the watcher's shell script: wait for the end of stdin,
// then remove the directory $KVBENCH_WATCHED_DIR, trying again for up to
// 5 s while a dying server still writes into it. The directory is in its
// environment, not its command line: a search of the processes by the
// directory (the servers') does not find the watcher.
const watchScript = `read -r _
i=0
while [ -e "$KVBENCH_WATCHED_DIR" ] && [ "$i" -lt 100 ]; do
	rm -rf -- "$KVBENCH_WATCHED_DIR" 2>/dev/null || sleep 0.05
	i=$((i + 1))
done`

// Watch starts the directory's watcher.
func (d *Dir) Watch() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", watchScript, "kvbench-tmp-watcher")
	cmd.Env = append(os.Environ(), "KVBENCH_WATCHED_DIR="+d.Path)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("start the temporary directory's watcher: %w", err)
	}
	d.watcher, d.pipe = cmd, w
	return nil
}

// New creates and locks a temporary directory in parent.
func New(parent string) (*Dir, error) {
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
	return &Dir{Path: final, lock: f}, nil
}

// Remove removes the directory, releases its lock and ends its watcher,
// waiting for it.
func (d *Dir) Remove() error {
	err := os.RemoveAll(d.Path)
	d.lock.Close()
	if d.watcher != nil {
		d.pipe.Close()
		_ = d.watcher.Wait() // it finds nothing left to remove
	}
	return err
}

// RemoveStale removes the temporary directories in parent whose lock is
// free (their run is gone) and says on w what it removed. A directory
// without a lock file is left alone: it is not known to be a dead run's.
func RemoveStale(parent string, w io.Writer) {
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
