package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/pkg/flame"
)

// startProfile starts recording the CPU profile of process pid (none when
// 0) with perf, and returns what stops the recording and writes the flame
// graph kvbench_flame_bench_TIME.svg in dir (the current directory when
// empty). Where perf is missing or may not record, it says so in one line
// on log, and the load runs without a profile.
func startProfile(ctx context.Context, pid int, dir string, log io.Writer) (stop func()) {
	nothing := func() {}
	if pid == 0 {
		if dir != "" {
			fmt.Fprintln(log, "warning: --profile-out without --profile-pid: no profile")
		}
		return nothing
	}
	if dir == "" {
		dir = "."
	}
	tmp, err := os.MkdirTemp("", "kvbench-perf-")
	if err != nil {
		fmt.Fprintf(log, "--profile-pid: no profile: %v\n", err)
		return nothing
	}
	rec, err := flame.Record(ctx, flame.DefaultPerf, []int{pid}, filepath.Join(tmp, "perf.data"))
	if err != nil {
		os.RemoveAll(tmp)
		fmt.Fprintf(log, "--profile-pid: no profile: %v\n", err)
		return nothing
	}
	started := time.Now()
	return func() {
		defer os.RemoveAll(tmp)
		prof, err := rec.Stop(ctx)
		if err != nil {
			fmt.Fprintf(log, "--profile-pid: no profile: %v\n", err)
			return
		}
		name := filepath.Join(dir, "kvbench_flame_bench_"+started.Format("20060102_150405")+".svg")
		var b bytes.Buffer
		title := fmt.Sprintf("CPU of process %d (%d samples)", pid, prof.Total())
		if err := flame.WriteSVG(&b, prof, flame.Options{Title: title}); err != nil {
			fmt.Fprintf(log, "--profile-pid: no flame graph: %v\n", err)
			return
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(log, "--profile-pid: %v\n", err)
			return
		}
		fmt.Fprintf(log, "flame graph: %s\n", name)
	}
}
