package lazyfs

import (
	"os"
	"path/filepath"
	"testing"
)

// mountT mounts a lazy file system for the test, or skips it with the
// reason FUSE cannot be used here (failing instead under
// KVBENCH_REQUIRE_FUSE=1); it runs only under KVBENCH_TEST_FUSE=1
// (make test-fuse).
func mountT(t *testing.T) *FS {
	t.Helper()
	if os.Getenv("KVBENCH_TEST_FUSE") != "1" {
		t.Skip("mounting FUSE file systems is opt-in: KVBENCH_TEST_FUSE=1 (make test-fuse)")
	}
	if err := Available(); err != nil {
		if os.Getenv("KVBENCH_REQUIRE_FUSE") == "1" {
			t.Fatalf("KVBENCH_REQUIRE_FUSE=1: %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	mnt, back := filepath.Join(dir, "mnt"), filepath.Join(dir, "back")
	for _, d := range []string{mnt, back} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Mount(mnt, back)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return f
}

func writeFile(t *testing.T, path, data string, sync bool) {
	t.Helper()
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if _, err := fd.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := fd.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

func syncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func cut(t *testing.T, f *FS) {
	t.Helper()
	if err := f.PowerCut(); err != nil {
		t.Fatal(err)
	}
}

func TestUnsyncedWriteLost(t *testing.T) {
	f := mountT(t)
	p := filepath.Join(f.Mountpoint(), "log")
	writeFile(t, p, "synced,", true)
	syncDir(t, f.Mountpoint())
	writeFile(t, p, "unsynced", false)
	if got, _ := content(t, p); got != "synced,unsynced" {
		t.Fatalf("before the cut: %q", got)
	}
	cut(t, f)
	if got, ok := content(t, p); !ok || got != "synced," {
		t.Fatalf("after the cut: %q (exists %v), want the synced part only", got, ok)
	}
}

func TestSyncedWriteKept(t *testing.T) {
	f := mountT(t)
	p := filepath.Join(f.Mountpoint(), "log")
	writeFile(t, p, "one,", true)
	syncDir(t, f.Mountpoint())
	writeFile(t, p, "two", true)
	cut(t, f)
	if got, _ := content(t, p); got != "one,two" {
		t.Fatalf("after the cut: %q, want %q", got, "one,two")
	}
}

func TestOverwriteAndTruncateRestored(t *testing.T) {
	f := mountT(t)
	p := filepath.Join(f.Mountpoint(), "data")
	writeFile(t, p, "abcdefgh", true)
	syncDir(t, f.Mountpoint())
	fd, err := os.OpenFile(p, os.O_WRONLY, 0) // write-only: the layer reads the former bytes on its own
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.WriteAt([]byte("XY"), 2); err != nil {
		t.Fatal(err)
	}
	if err := fd.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if _, err := fd.WriteAt([]byte("ZZZZZZZZZZ"), 1); err != nil {
		t.Fatal(err)
	}
	fd.Close()
	cut(t, f)
	if got, _ := content(t, p); got != "abcdefgh" {
		t.Fatalf("after the cut: %q, want the synced %q", got, "abcdefgh")
	}
}

// A new file synced but whose directory was not is gone after the cut;
// with its directory synced it stays.
func TestCreateNeedsDirectorySync(t *testing.T) {
	f := mountT(t)
	p := filepath.Join(f.Mountpoint(), "new")
	writeFile(t, p, "data", true)
	cut(t, f)
	if _, ok := content(t, p); ok {
		t.Fatal("a file created without a directory sync survived the cut")
	}
	writeFile(t, p, "data", true)
	syncDir(t, f.Mountpoint())
	cut(t, f)
	if got, ok := content(t, p); !ok || got != "data" {
		t.Fatalf("after a directory sync: %q (exists %v)", got, ok)
	}
}

// A rename over an existing file without a directory sync is undone: the
// old file is back under its name and the new one under its own.
func TestRenameWithoutDirectorySync(t *testing.T) {
	f := mountT(t)
	final, tmp := filepath.Join(f.Mountpoint(), "manifest"), filepath.Join(f.Mountpoint(), "manifest.tmp")
	writeFile(t, final, "old", true)
	syncDir(t, f.Mountpoint())
	writeFile(t, tmp, "new", true)
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	cut(t, f)
	if got, _ := content(t, final); got != "old" {
		t.Fatalf("after the cut: %q, want the old file back", got)
	}
	if _, ok := content(t, tmp); ok {
		t.Fatal("the temporary file, never committed, survived")
	}

	writeFile(t, tmp, "new", true)
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	syncDir(t, f.Mountpoint())
	cut(t, f)
	if got, _ := content(t, final); got != "new" {
		t.Fatalf("after a directory sync and a cut: %q, want %q", got, "new")
	}
}

// An unlink without a directory sync is undone.
func TestUnlinkUndone(t *testing.T) {
	f := mountT(t)
	p := filepath.Join(f.Mountpoint(), "keep")
	writeFile(t, p, "data", true)
	syncDir(t, f.Mountpoint())
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	cut(t, f)
	if got, ok := content(t, p); !ok || got != "data" {
		t.Fatalf("after the cut: %q (exists %v), want the file back", got, ok)
	}
}
