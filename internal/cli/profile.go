package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/flame"
	"github.com/spf13/pflag"
)

// profileFlags are bench's --profile-pid and --profile-out.
type profileFlags struct {
	pid pidValue
	out string
}

func addProfileFlags(f *pflag.FlagSet, p *profileFlags) {
	f.Var(&p.pid, "profile-pid", "record the CPU profile of the server process PID on this host with perf during the load, and draw it as a flame graph kvbench_flame_bench_TIME.svg (e.g. --profile-pid $(pidof redis-server))")
	f.StringVar(&p.out, "profile-out", "", "directory of the --profile-pid flame graph (default: the current directory)")
}

// pidValue is a process id of this host, checked when the flag is parsed.
type pidValue int

func (v *pidValue) String() string {
	if *v == 0 {
		return ""
	}
	return strconv.Itoa(int(*v))
}

func (v *pidValue) Type() string { return "PID" }

func (v *pidValue) Set(s string) error {
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return fmt.Errorf("want a process id, a whole number above 0")
	}
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return fmt.Errorf("no process %d on this host", pid)
	}
	*v = pidValue(pid)
	return nil
}

// start starts recording the process of --profile-pid, if given, and
// returns what stops the recording and writes the flame graph. Where perf
// is missing or may not record it says so in one line, and the load runs
// without a profile.
func (p *profileFlags) start(ctx context.Context, stderr io.Writer) (stop func()) {
	nothing := func() {}
	if p.pid == 0 {
		if p.out != "" {
			fmt.Fprintln(stderr, "warning: --profile-out without --profile-pid: no profile")
		}
		return nothing
	}
	dir := p.out
	if dir == "" {
		dir = "."
	}
	tmp, err := os.MkdirTemp("", "kvbench-perf-")
	if err != nil {
		fmt.Fprintf(stderr, "--profile-pid: no profile: %v\n", err)
		return nothing
	}
	rec, err := flame.Record(ctx, flame.DefaultPerf, []int{int(p.pid)}, filepath.Join(tmp, "perf.data"))
	if err != nil {
		os.RemoveAll(tmp)
		fmt.Fprintf(stderr, "--profile-pid: no profile: %v\n", err)
		return nothing
	}
	started := time.Now()
	return func() {
		defer os.RemoveAll(tmp)
		prof, err := rec.Stop(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "--profile-pid: no profile: %v\n", err)
			return
		}
		name := filepath.Join(dir, "kvbench_flame_bench_"+started.Format("20060102_150405")+".svg")
		var b bytes.Buffer
		title := fmt.Sprintf("CPU of process %d (%d samples)", p.pid, prof.Total())
		if err := flame.WriteSVG(&b, prof, flame.Options{Title: title}); err != nil {
			fmt.Fprintf(stderr, "--profile-pid: no flame graph: %v\n", err)
			return
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "--profile-pid: %v\n", err)
			return
		}
		fmt.Fprintf(stderr, "flame graph: %s\n", name)
	}
}
