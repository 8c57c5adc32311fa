package lazyfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is a loopback node whose changes the layer can undo.
type node struct {
	fusefs.LoopbackNode
	lfs *FS
}

// rel is the node's path relative to the backing directory.
func (n *node) rel() string { return n.EmbeddedInode().Path(nil) }

func (n *node) child(name string) string { return filepath.Join(n.rel(), name) }

var (
	_ fusefs.NodeCreater        = (*node)(nil)
	_ fusefs.NodeOpener         = (*node)(nil)
	_ fusefs.NodeSetattrer      = (*node)(nil)
	_ fusefs.NodeMkdirer        = (*node)(nil)
	_ fusefs.NodeUnlinker       = (*node)(nil)
	_ fusefs.NodeRenamer        = (*node)(nil)
	_ fusefs.NodeOpendirHandler = (*node)(nil)
	_ fusefs.NodeAccesser       = (*node)(nil)
)

// Access declines the ACCESS operation, so that the kernel stops sending
// it (see FS.mount): a process this one forks into a directory on the
// mount would otherwise chdir into it before exec, waiting on an ACCESS
// reply that this process, blocked in the fork, may not give.
func (n *node) Access(ctx context.Context, mask uint32) syscall.Errno {
	return syscall.ENOSYS
}

// Create journals a new file; an existing one is opened (and its
// truncation kept for undoing).
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	f := n.lfs
	f.mu.Lock()
	defer f.mu.Unlock()
	rel := n.child(name)
	_, statErr := os.Lstat(f.path(rel))
	existed := statErr == nil
	if existed && flags&syscall.O_TRUNC != 0 {
		if err := withPath(f.path(rel), func(fd int) error { return f.keep(fd, 0, 1<<62) }); err != nil {
			return nil, nil, 0, errno(err)
		}
	}
	ch, fh, fflags, e := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if e != 0 {
		return nil, nil, 0, e
	}
	if !existed {
		f.journal = append(f.journal, change{op: "create", from: rel})
	}
	h, err := f.wrap(fh)
	if err != nil {
		fh.(fusefs.FileReleaser).Release(ctx)
		return nil, nil, 0, errno(err)
	}
	if !existed {
		if s, err := f.state(h.fd); err == nil {
			s.synced, s.undo = 0, nil
		}
	}
	return ch, h, fflags, 0
}

// Open wraps the file's handle; an O_TRUNC is kept for undoing.
func (n *node) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	f := n.lfs
	f.mu.Lock()
	defer f.mu.Unlock()
	if flags&syscall.O_TRUNC != 0 {
		if err := withPath(f.path(n.rel()), func(fd int) error { return f.keep(fd, 0, 1<<62) }); err != nil {
			return nil, 0, errno(err)
		}
	}
	fh, fflags, e := n.LoopbackNode.Open(ctx, flags)
	if e != 0 {
		return nil, 0, e
	}
	h, err := f.wrap(fh)
	if err != nil {
		fh.(fusefs.FileReleaser).Release(ctx)
		return nil, 0, errno(err)
	}
	return h, fflags, 0
}

// Setattr keeps what a truncation cuts off.
func (n *node) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f := n.lfs
	f.mu.Lock()
	defer f.mu.Unlock()
	if size, ok := in.GetSize(); ok {
		keep := func(fd int) error { return f.keep(fd, int64(size), 1<<62) }
		var err error
		if h, ok := fh.(*file); ok {
			err = keep(h.fd)
		} else {
			err = withPath(f.path(n.rel()), keep)
		}
		if err != nil {
			return errno(err)
		}
	}
	if h, ok := fh.(*file); ok {
		fh = h.LoopbackFile
	}
	return n.LoopbackNode.Setattr(ctx, fh, in, out)
}

// Mkdir journals a new directory.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	f := n.lfs
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, e := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if e == 0 {
		f.journal = append(f.journal, change{op: "mkdir", from: n.child(name)})
	}
	return ch, e
}

// Unlink moves the file aside and journals it.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	f := n.lfs
	f.mu.Lock()
	defer f.mu.Unlock()
	rel := n.child(name)
	aside, err := f.moveAside(rel)
	if err != nil {
		return errno(err)
	}
	f.journal = append(f.journal, change{op: "unlink", from: rel, to: aside})
	return 0
}

// Rename moves a file it replaces aside, renames and journals both.
func (n *node) Rename(ctx context.Context, name string, newParent fusefs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	f := n.lfs
	if flags&unix.RENAME_EXCHANGE != 0 {
		return syscall.EINVAL
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	from, to := n.child(name), np.child(newName)
	if _, err := os.Lstat(f.path(from)); err != nil {
		return errno(err)
	}
	if st, err := os.Lstat(f.path(to)); err == nil {
		if flags&unix.RENAME_NOREPLACE != 0 {
			return syscall.EEXIST
		}
		if st.IsDir() {
			return n.LoopbackNode.Rename(ctx, name, &np.LoopbackNode, newName, flags) // an empty directory: kept as is
		}
		aside, err := f.moveAside(to)
		if err != nil {
			return errno(err)
		}
		f.journal = append(f.journal, change{op: "unlink", from: to, to: aside})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return errno(err)
	}
	if err := os.Rename(f.path(from), f.path(to)); err != nil {
		return errno(err)
	}
	f.journal = append(f.journal, change{op: "rename", from: from, to: to})
	return 0
}

// OpendirHandle wraps the directory's handle so that its fsync commits.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	ds, e := fusefs.NewLoopbackDirStream(n.lfs.path(n.rel()))
	if e != 0 {
		return nil, 0, e
	}
	return &dir{DirStream: ds, lfs: n.lfs}, 0, 0
}

// file is an open file whose writes below its synced size are kept for
// undoing and whose fsync makes its data durable.
type file struct {
	*fusefs.LoopbackFile
	fd  int
	lfs *FS
}

// wrap turns a loopback handle into a file. f.mu is held.
func (f *FS) wrap(fh fusefs.FileHandle) (*file, error) {
	lf, ok := fh.(*fusefs.LoopbackFile)
	if !ok {
		return nil, syscall.ENOTSUP
	}
	fd, ok := lf.PassthroughFd()
	if !ok {
		return nil, syscall.ENOTSUP
	}
	if _, err := f.state(fd); err != nil {
		return nil, err
	}
	return &file{LoopbackFile: lf, fd: fd, lfs: f}, nil
}

// PassthroughFd refuses the kernel's passthrough: the writes must come
// through Write.
func (h *file) PassthroughFd() (int, bool) { return 0, false }

// Write keeps the bytes it overwrites below the synced size.
func (h *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.lfs.mu.Lock()
	defer h.lfs.mu.Unlock()
	if err := h.lfs.keep(h.fd, off, int64(len(data))); err != nil {
		return 0, errno(err)
	}
	return h.LoopbackFile.Write(ctx, data, off)
}

// Allocate keeps the bytes a hole punched or a range zeroed loses.
func (h *file) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	h.lfs.mu.Lock()
	defer h.lfs.mu.Unlock()
	if err := h.lfs.keep(h.fd, int64(off), int64(size)); err != nil {
		return errno(err)
	}
	return h.LoopbackFile.Allocate(ctx, off, size, mode)
}

// Setattr keeps what a truncation cuts off.
func (h *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	h.lfs.mu.Lock()
	defer h.lfs.mu.Unlock()
	if size, ok := in.GetSize(); ok {
		if err := h.lfs.keep(h.fd, int64(size), 1<<62); err != nil {
			return errno(err)
		}
	}
	return h.LoopbackFile.Setattr(ctx, in, out)
}

// Fsync syncs the backing file and makes its data durable.
func (h *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if e := h.LoopbackFile.Fsync(ctx, flags); e != 0 {
		return e
	}
	h.lfs.mu.Lock()
	defer h.lfs.mu.Unlock()
	return errno(h.lfs.synced(h.fd))
}

// dir is an open directory whose fsync commits the namespace changes.
type dir struct {
	fusefs.DirStream
	lfs *FS
}

var (
	_ fusefs.FileReaddirenter = (*dir)(nil)
	_ fusefs.FileReleasedirer = (*dir)(nil)
	_ fusefs.FileSeekdirer    = (*dir)(nil)
	_ fusefs.FileFsyncdirer   = (*dir)(nil)
)

func (d *dir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if r, ok := d.DirStream.(fusefs.FileReaddirenter); ok {
		return r.Readdirent(ctx)
	}
	if !d.HasNext() {
		return nil, 0
	}
	e, errno := d.Next()
	return &e, errno
}

func (d *dir) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.DirStream.(fusefs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
		return
	}
	d.Close()
}

func (d *dir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.DirStream.(fusefs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

// Fsyncdir syncs the backing directory and commits every namespace change
// made before it.
func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if s, ok := d.DirStream.(fusefs.FileFsyncdirer); ok {
		if e := s.Fsyncdir(ctx, flags); e != 0 {
			return e
		}
	}
	d.lfs.mu.Lock()
	defer d.lfs.mu.Unlock()
	d.lfs.commit()
	return 0
}
