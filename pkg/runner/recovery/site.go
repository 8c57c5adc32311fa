package recovery

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/pkg/lazyfs"
	"github.com/kvbench/kvbench/pkg/results"
)

// Site is where a server keeps its files and how a recovery attempt's
// crash ends: a process crash, or a power cut of the lazy file system its
// directory is on.
type Site struct {
	// Dir is the server's directory.
	Dir string
	// Crash is the crash kind of a recovery attempt (results.CrashProcess
	// or CrashPower); empty for a server that is not crashed.
	Crash string
	// fs is the lazy file system Dir is on; nil but for a power loss.
	fs *lazyfs.FS
}

// NewSite prepares the directory of a server in dir, a directory
// kvbench made for it, for a crash of the kind crash: for
// results.CrashPower the mount point of a lazy file system backed by
// dir/data; else (results.CrashProcess, or "" for no crash) dir itself.
func NewSite(dir, crash string) (*Site, error) {
	if crash != results.CrashPower {
		return &Site{Dir: dir, Crash: crash}, nil
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
	return &Site{Dir: mnt, Crash: crash, fs: fs}, nil
}

// cut drops what the killed server had not synced, for a power loss;
// nothing for a process crash.
func (c *Site) cut() error {
	if c.fs == nil {
		return nil
	}
	if err := c.fs.PowerCut(); err != nil {
		return fmt.Errorf("power cut: %w", err)
	}
	return nil
}

// Close unmounts the lazy file system, if any; the server must be
// stopped.
func (c *Site) Close() error {
	if c.fs == nil {
		return nil
	}
	return c.fs.Unmount()
}

// name is how the log names the site's crash.
func (c *Site) name() string {
	if c.fs != nil {
		return "power loss"
	}
	return "kill -9"
}
