package history

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperCmd is this test binary run as a helper process (see helper).
func helperCmd(ctx context.Context, job string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+job)
	return cmd
}

// TestConcurrentWriters: two processes recording a run each into one
// store at the same moment both land, every attempt of both.
func TestConcurrentWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, loc string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		const attempts = 200
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				out, err := helperCmd(ctx, "writer", loc, fmt.Sprintf("run%d", i), fmt.Sprint(attempts)).CombinedOutput()
				if err != nil {
					t.Errorf("writer %d: %v\n%s", i, err, out)
				}
			})
		}
		wg.Wait()
		s, err := Open(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		runs, err := s.Runs(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 2 {
			t.Fatalf("%d runs, want 2", len(runs))
		}
		for _, r := range runs {
			if r.Rows != attempts || r.Status != StatusComplete {
				t.Errorf("run %s: %d rows, status %s; want %d rows, complete", r.RunID, r.Rows, r.Status, attempts)
			}
		}
	})
}

// TestKilledWriter: a process killed (SIGKILL) while it records leaves a
// consistent store with every attempt it committed, its run shown as
// incomplete and left out of the analysis.
func TestKilledWriter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loc := filepath.Join(t.TempDir(), "history.db")
	cmd := helperCmd(ctx, "slow", loc, "killed")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	seen := 0
	for sc.Scan() && seen < 5 {
		if strings.HasPrefix(sc.Text(), "attempt ") {
			seen++
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	s, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var check string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check: %q %v", check, err)
	}
	runs, err := s.Runs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != StatusIncomplete || runs[0].Rows < seen {
		t.Fatalf("after the kill: %+v, want one incomplete run of at least %d rows", runs, seen)
	}
	a, err := s.Analyze(ctx, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Series) != 0 || a.Skipped != 1 {
		t.Errorf("analysis of a killed run: %d series, %d skipped; want it left out", len(a.Series), a.Skipped)
	}
}
