package machine

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Description describes the machine that runs the load generator: the
// client_host, cpu_model, cores and kernel columns of every detail row.
type Description struct {
	Host, CPUModel, Kernel string
	Cores                  int
}

// Describe reads the machine's description (once per run); what cannot be
// read stays empty (the column is then left empty).
func Describe() Description {
	m := Description{Cores: runtime.NumCPU(), Kernel: kernelRelease()}
	m.Host, _ = os.Hostname()
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(data)
	}
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo, "" if none.
func cpuModel(cpuinfo []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return ""
}

// kernelRelease is uname's release ("6.1.0-18-amd64"), "" if unknown.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
