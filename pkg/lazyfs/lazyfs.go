// Package lazyfs is a FUSE file system that loses, on a simulated power
// cut, what was written but not synced, as Jepsen's LazyFS does.
//
// Every operation passes through to a backing directory at once; the
// layer keeps what it needs to undo the operations a power cut would
// lose:
//
//   - File data. Per file (by its backing inode), the size at its last
//     sync and the former content of the bytes below that size that were
//     overwritten, truncated away or reallocated since. An fsync or
//     fdatasync of the file through the mount makes its data durable. A
//     power cut puts the former bytes back and truncates the file to its
//     synced size. A file the layer has not seen written counts as synced
//     as it was found.
//   - The namespace. Creates, mkdirs, unlinks and renames are journaled;
//     an unlinked or replaced file is moved aside, not deleted. An fsync of
//     any directory through the mount commits every namespace change made
//     before it, in every directory, as a journaling file system's commit
//     does. A power cut undoes the uncommitted changes, newest first: a
//     created file or directory is removed, a renamed one gets its old name
//     back, an unlinked or replaced one is put back.
//
// Servers may be started by the process that mounts the file system, in
// a directory on it: the file system declines ACCESS requests (permission
// checks are the backing directory's), so the child's chdir between fork
// and exec needs no reply from the parent (go-fuse's documented fork
// deadlock).
//
// Limits: sync_file_range, syncfs and sync(2) do not reach a FUSE file
// system, so they sync nothing here; a file's fsync does not commit its
// directory entry (a new file needs its directory synced as well); rmdir,
// hard links, symlinks, mknod and attribute changes pass through and are
// kept; RENAME_EXCHANGE is refused. Memory grows with the bytes
// overwritten below a file's synced size until its next sync; appends cost
// nothing. Mounting needs /dev/fuse and the right to mount (root): see
// Available.
package lazyfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// FS is a mounted lazy file system: a mount point showing a backing
// directory.
type FS struct {
	mountpoint, backing, aside string

	mu      sync.Mutex
	server  *fuse.Server
	files   map[uint64]*fileState // by backing inode
	journal []change              // uncommitted namespace changes, oldest first
	asideN  int
}

// fileState is what a power cut restores of one file's data.
type fileState struct {
	synced int64
	undo   []undo // oldest first
}

// undo is the former content of the bytes at off.
type undo struct {
	off  int64
	data []byte
}

// change is one uncommitted namespace change; paths are relative to the
// backing directory.
type change struct {
	op       string // "create", "mkdir", "rename", "unlink"
	from, to string // rename: from -> to; unlink: the name and its place aside (to); create, mkdir: from
}

// Mount mounts a lazy view of the directory backing at mountpoint (both
// must exist). It keeps the files it moves aside in a sibling directory
// of backing, backing+".lazyfs-aside".
func Mount(mountpoint, backing string) (*FS, error) {
	for _, d := range []string{mountpoint, backing} {
		st, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("lazyfs: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("lazyfs: %s is not a directory", d)
		}
	}
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	f := &FS{mountpoint: mountpoint, backing: backing, aside: backing + ".lazyfs-aside", files: map[uint64]*fileState{}}
	if err := os.MkdirAll(f.aside, 0o700); err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	if err := f.mount(); err != nil {
		os.RemoveAll(f.aside)
		return nil, err
	}
	return f, nil
}

func (f *FS) mount() error {
	root := &fusefs.LoopbackRoot{Path: f.backing}
	var st syscall.Stat_t
	if err := syscall.Stat(f.backing, &st); err != nil {
		return fmt.Errorf("lazyfs: %w", err)
	}
	root.Dev = uint64(st.Dev)
	root.NewNode = func(r *fusefs.LoopbackRoot, _ *fusefs.Inode, _ string, _ *syscall.Stat_t) fusefs.InodeEmbedder {
		return &node{LoopbackNode: fusefs.LoopbackNode{RootData: r}, lfs: f}
	}
	root.RootNode = root.NewNode(root, nil, "", &st)
	zero := time.Duration(0)
	srv, err := fusefs.Mount(f.mountpoint, root.RootNode, &fusefs.Options{
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{DirectMount: true, FsName: "lazyfs", Name: "lazyfs", AllowOther: true},
	})
	if err != nil {
		return fmt.Errorf("lazyfs: mount %s: %w", f.mountpoint, err)
	}
	f.server = srv
	// The first ACCESS, declined, turns the operation off for the mount:
	// a server started with its working directory on it forks without
	// waiting on one.
	unix.Access(f.mountpoint, unix.X_OK)
	return nil
}

// Available reports why a lazy file system cannot be mounted here, or nil
// when it can: it mounts one on a scratch directory and unmounts it.
func Available() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("lazyfs: no FUSE: %w", err)
	}
	dir, err := os.MkdirTemp("", "lazyfs-probe-")
	if err != nil {
		return fmt.Errorf("lazyfs: %w", err)
	}
	defer os.RemoveAll(dir)
	mnt, back := filepath.Join(dir, "mnt"), filepath.Join(dir, "back")
	for _, d := range []string{mnt, back} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("lazyfs: %w", err)
		}
	}
	f, err := Mount(mnt, back)
	if err != nil {
		return err
	}
	return f.Unmount()
}

// Mountpoint is where the file system is mounted.
func (f *FS) Mountpoint() string { return f.mountpoint }

// Unmount unmounts the file system, keeping the backing directory as it
// is (unsynced data included), and removes the files moved aside.
func (f *FS) Unmount() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.unmount()
	if rerr := os.RemoveAll(f.aside); err == nil && rerr != nil {
		err = fmt.Errorf("lazyfs: %w", rerr)
	}
	return err
}

func (f *FS) unmount() error {
	if f.server == nil {
		return nil
	}
	var err error
	for range 50 { // a file just closed may keep the mount busy briefly
		if err = f.server.Unmount(); err == nil {
			f.server.Wait()
			f.server = nil
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("lazyfs: unmount %s: %w", f.mountpoint, err)
}

// PowerCut simulates a power loss: it unmounts the file system, drops
// what was not synced from the backing directory (see the package doc),
// and mounts it again, its page cache gone. No process may hold a file
// open on it: kill the writers first.
func (f *FS) PowerCut() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.unmount(); err != nil {
		return err
	}
	if err := f.drop(); err != nil {
		return err
	}
	return f.mount()
}

// drop restores the backing directory to its synced state.
func (f *FS) drop() error {
	for i := len(f.journal) - 1; i >= 0; i-- {
		c := f.journal[i]
		var err error
		switch c.op {
		case "create":
			err = os.Remove(f.path(c.from))
		case "mkdir":
			err = os.RemoveAll(f.path(c.from))
		case "rename":
			err = os.Rename(f.path(c.to), f.path(c.from))
		case "unlink":
			err = os.Rename(filepath.Join(f.aside, c.to), f.path(c.from))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("lazyfs: undo %s %s: %w", c.op, c.from, err)
		}
	}
	f.journal = nil
	err := filepath.WalkDir(f.backing, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := f.files[info.Sys().(*syscall.Stat_t).Ino]
		if st == nil {
			return nil
		}
		return st.restore(p)
	})
	if err != nil {
		return fmt.Errorf("lazyfs: restore: %w", err)
	}
	f.files = map[uint64]*fileState{}
	if err := os.RemoveAll(f.aside); err != nil {
		return fmt.Errorf("lazyfs: %w", err)
	}
	return os.MkdirAll(f.aside, 0o700)
}

// restore puts the former bytes back, newest change first, and truncates
// the file to its synced size.
func (s *fileState) restore(path string) error {
	fd, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer fd.Close()
	for i := len(s.undo) - 1; i >= 0; i-- {
		if _, err := fd.WriteAt(s.undo[i].data, s.undo[i].off); err != nil {
			return err
		}
	}
	if err := fd.Truncate(s.synced); err != nil {
		return err
	}
	return fd.Sync()
}

func (f *FS) path(rel string) string { return filepath.Join(f.backing, rel) }

func (f *FS) rel(abs string) string {
	r, err := filepath.Rel(f.backing, abs)
	if err != nil {
		return abs
	}
	return r
}

// state is the file state of the open file fd, created with its current
// size as the synced one when the file is new to the layer. f.mu is held.
func (f *FS) state(fd int) (*fileState, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	s := f.files[st.Ino]
	if s == nil {
		s = &fileState{synced: st.Size}
		f.files[st.Ino] = s
	}
	return s, nil
}

// keep records the former content of [off, off+n) of the open file fd,
// as far as it lies below the synced size. f.mu is held.
func (f *FS) keep(fd int, off, n int64) error {
	s, err := f.state(fd)
	if err != nil {
		return err
	}
	end := min(off+n, s.synced)
	if off >= end {
		return nil
	}
	buf := make([]byte, end-off)
	got, err := unix.Pread(fd, buf, off)
	if errors.Is(err, unix.EBADF) { // opened write-only: read through a descriptor of its own
		var rd int
		if rd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY, 0); err == nil {
			got, err = unix.Pread(rd, buf, off)
			unix.Close(rd)
		}
	}
	if err != nil {
		return err
	}
	if got > 0 {
		s.undo = append(s.undo, undo{off: off, data: buf[:got]})
	}
	return nil
}

// synced makes the open file fd's data durable. f.mu is held.
func (f *FS) synced(fd int) error {
	s, err := f.state(fd)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	s.synced, s.undo = st.Size, nil
	return nil
}

// moveAside moves the backing file at rel out of the tree and returns its
// name aside. f.mu is held.
func (f *FS) moveAside(rel string) (string, error) {
	f.asideN++
	name := strconv.Itoa(f.asideN)
	if err := os.Rename(f.path(rel), filepath.Join(f.aside, name)); err != nil {
		return "", err
	}
	return name, nil
}

// commit makes the namespace changes so far durable. f.mu is held.
func (f *FS) commit() {
	f.journal = nil
}

func errno(err error) syscall.Errno {
	return fusefs.ToErrno(err)
}

// withPath runs fn on a descriptor of the backing file at path opened for
// reading and writing.
func withPath(path string, fn func(fd int) error) error {
	fd, err := unix.Open(path, unix.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn(fd)
}
