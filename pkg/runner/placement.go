package runner

import (
	"context"
	"strings"

	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/runner/placement"
)

// CPUsAuto is the automatic placement (--cpus auto, the default):
// placement.Auto.
const CPUsAuto = placement.Auto

// preflight logs, once per run, where the servers and the load generator
// run and what makes this machine noisy (machine.Check).
func (r *run) preflight(ctx context.Context) {
	r.log("placement: %s", placement.Line(r.o.placement))
	var noisy []string
	var all []string
	for _, f := range machine.Check(ctx) {
		all = append(all, f.What+" "+f.Value)
		if f.Noisy {
			noisy = append(noisy, f.String())
		}
	}
	r.log("machine: %s", strings.Join(all, "; "))
	for _, n := range noisy {
		r.log("warning: machine: %s", n)
	}
}
