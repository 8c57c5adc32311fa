package kvstore

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// logFS is every change the log makes to its directory: the files it
// writes, renames, removals and the directory's fsync. The log reads its
// files through package os; what it changes goes through this, so that
// tests can put a layer under it that fails operations (a full disk) or
// records them to rebuild every state a crash could leave
// (crashstate_test.go).
type logFS interface {
	// OpenFile opens name with flag (os.O_*), mode 0644 if it creates it.
	OpenFile(name string, flag int) (logFile, error)
	Rename(from, to string) error
	Remove(name string) error
	// SyncDir fsyncs a directory: the renames, creations and removals
	// in it so far reach the disk.
	SyncDir(dir string) error
}

// osFS is the operating system's files.
type osFS struct{}

func (osFS) OpenFile(name string, flag int) (logFile, error) { return openLogFile(name, flag) }
func (osFS) Rename(from, to string) error                    { return os.Rename(from, to) }
func (osFS) Remove(name string) error                        { return os.Remove(name) }
func (osFS) SyncDir(dir string) error                        { return syncDir(dir) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeFileAtomic replaces dir/name with data: a temporary file, fsync,
// rename, fsync of the directory. A crash leaves the old file or the new
// one, whole.
func writeFileAtomic(fsys logFS, dir, name string, data []byte) error {
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on Linux
	tmp := filepath.Join(dir, "temp-"+name+"-"+hex.EncodeToString(r[:]))
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			fsys.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	renamed = true
	return fsys.SyncDir(dir)
}
