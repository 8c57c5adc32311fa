//go:build unix

package output

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used so far, so
// that the benchmark can report it beside the wall time: on a shared
// machine the wall time mostly measures the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
