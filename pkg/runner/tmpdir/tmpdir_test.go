package tmpdir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveStale: of three temporary directories, the one whose lock is
// free (its run is gone) is removed and reported with its size; the one a
// live run holds, and one without a lock file, stay.
func TestRemoveStale(t *testing.T) {
	parent := t.TempDir()
	dead, err := New(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dead.Path, "kvstore-nopersist-r1-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead.Path, "kvstore-nopersist-r1-1", "appendonly.aof"), make([]byte, 2_500_000), 0o644); err != nil {
		t.Fatal(err)
	}
	dead.lock.Close() // as its process's death would
	live, err := New(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	unlocked := filepath.Join(parent, tempPrefix+"unlocked")
	if err := os.Mkdir(unlocked, 0o755); err != nil {
		t.Fatal(err)
	}

	var w bytes.Buffer
	RemoveStale(parent, &w)
	if want := "removed " + dead.Path + " (2.5 MB), left by a run that did not finish\n"; w.String() != want {
		t.Errorf("RemoveStale wrote %q, want %q", w.String(), want)
	}
	if _, err := os.Stat(dead.Path); !os.IsNotExist(err) {
		t.Errorf("the dead run's directory is still there: %v", err)
	}
	for _, d := range []string{live.Path, unlocked} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if !strings.HasPrefix(filepath.Base(live.Path), tempPrefix) {
		t.Errorf("temporary directory %s", live.Path)
	}
	if err := live.Remove(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 || entries[0].Name() != filepath.Base(unlocked) {
		t.Errorf("left in %s: %v", parent, entries)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 2_500_000: "2.5 MB", 412_345_678: "412.3 MB", 3_200_000_000: "3.2 GB", 4_000_000_000_000: "4000.0 GB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
