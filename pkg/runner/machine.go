package runner

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// machine describes the machine that runs the load generator: the
// client_host, cpu_model, cores and kernel columns of every detail row.
type machine struct {
	host, cpuModel, kernel string
	cores                  int
}

// thisMachine reads the machine's description once per run; what cannot
// be read stays empty (the column is then left empty).
func thisMachine() machine {
	m := machine{cores: runtime.NumCPU(), kernel: kernelRelease()}
	m.host, _ = os.Hostname()
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.cpuModel = cpuModel(data)
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
