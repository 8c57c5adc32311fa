package cli

import (
	"fmt"
	"strconv"
)

// pidValue is --profile-pid: a process id, a whole number above 0 (that
// it is a process of this host bench.Options.Validate checks).
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
	*v = pidValue(pid)
	return nil
}
