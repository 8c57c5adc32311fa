// Package placement is where the servers "kvbench run" starts and its
// load generator run (--cpus): parsed (Parse), resolved for the run's
// targets (Resolve), applied (PinClient, PinServer) and said (Line).
//
// On a small shared machine it decides the noise more than anything
// else: a one-thread server and a one-thread load generator that the
// scheduler moves between two CPUs spread by about 20% from one
// measurement to the next, and by about 3% when both share one CPU, which
// is also where they run fastest on such a machine (docs/run.md has the
// measurements). Pinned to one CPU, the pair measures the cost of a
// request, client and server together; it cannot show what a server does
// with cores of its own (a multithreaded server, a cluster), so the
// automatic placement pins only runs of one-process servers.
package placement

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/target"
)

// Auto is the automatic placement (--cpus auto, the default): the
// servers and the load generator share CPU 0 when every target is a
// one-process server kvbench starts (kvstore, redis), and run where the
// scheduler puts them otherwise (clusters, command and attached targets).
const Auto = "auto"

// autoCPU is the CPU the automatic placement shares.
const autoCPU = 0

// Parse parses --cpus: Auto (or empty) is resolved by Resolve, anything
// else is a placement.
func Parse(s string) (machine.Placement, error) {
	if s = strings.TrimSpace(s); s == "" || s == Auto {
		return machine.Placement{}, nil
	}
	p, err := machine.ParsePlacement(s)
	if err != nil {
		return p, fmt.Errorf("--cpus: %w", err)
	}
	return p, nil
}

// Resolve is the run's placement: --cpus (cpus, parsed: Parse) as given,
// or the automatic one for these targets. An explicit placement with a
// target kvbench does not start pins the load generator only, and the
// warnings say so.
func Resolve(cpus string, parsed machine.Placement, targets []target.Target) (_ machine.Placement, warnings []error) {
	started := true
	for _, t := range targets {
		switch t.Desc().Kind {
		case target.KindKvstore, target.KindRedis:
		default:
			started = false
		}
	}
	if s := strings.TrimSpace(cpus); s == "" || s == Auto {
		if started && runtime.NumCPU() > 1 {
			return machine.Placement{Server: machine.CPUSet{autoCPU}, Client: machine.CPUSet{autoCPU}}, nil
		}
		return machine.Placement{}, nil
	}
	for _, t := range targets {
		if t.Desc().Kind == target.KindAttach && len(parsed.Server) > 0 {
			warnings = append(warnings, fmt.Errorf("--cpus %s: target %s is attached, not started by kvbench: its server is not pinned", parsed, t.Desc().Name))
		}
	}
	return parsed, warnings
}

// PinClient binds the load generator (this process) to p's client CPUs,
// for the run; it returns a function that undoes it.
func PinClient(p machine.Placement) (undo func(), err error) {
	set := p.Client
	if len(set) == 0 {
		return func() {}, nil
	}
	before, err := machine.Affinity(0)
	if err != nil {
		return nil, err
	}
	if err := machine.PinSelf(set); err != nil {
		return nil, fmt.Errorf("--cpus %s: %w", p, err)
	}
	return func() { _ = machine.PinSelf(before) }, nil
}

// PinServer binds the processes of a server kvbench started (info) to
// p's server CPUs.
func PinServer(p machine.Placement, info target.Info) error {
	set := p.Server
	if len(set) == 0 {
		return nil
	}
	for _, pid := range target.PIDs(info) {
		if err := machine.Pin(pid, set); err != nil {
			return fmt.Errorf("--cpus %s: %w", p, err)
		}
	}
	return nil
}

// Line says where the servers and the load generator run under p.
func Line(p machine.Placement) string {
	switch {
	case len(p.Server) == 0 && len(p.Client) == 0:
		return "off: servers and load generator where the scheduler puts them (--cpus)"
	case slices.Equal(p.Server, p.Client):
		return fmt.Sprintf("%s: servers and load generator share CPU %s (--cpus)", p, p.Server)
	}
	return fmt.Sprintf("%s (--cpus)", p)
}
