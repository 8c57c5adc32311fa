package runner

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/machine"
	"github.com/kvbench/kvbench/pkg/target"
)

// Placement: where the servers kvbench starts and its load generator run
// (--cpus). On a small shared machine it decides the noise more than
// anything else: a one-thread server and a one-thread load generator that
// the scheduler moves between two CPUs spread by about 20% from one
// measurement to the next, and by about 3% when both share one CPU, which
// is also where they run fastest on such a machine (docs/run.md has the
// measurements). Pinned to one CPU, the pair measures the cost of a
// request, client and server together; it cannot show what a server does
// with cores of its own (a multithreaded server, a cluster), so the
// automatic placement pins only runs of one-process servers.

// CPUsAuto is the automatic placement (--cpus auto, the default): the
// servers and the load generator share CPU 0 when every target is a
// one-process server kvbench starts (kvstore, redis), and run where the
// scheduler puts them otherwise (clusters, command and attached targets).
const CPUsAuto = "auto"

// autoCPU is the CPU the automatic placement shares.
const autoCPU = 0

// parseCPUs parses --cpus: CPUsAuto (or empty) is resolved by the plan,
// anything else is a placement.
func parseCPUs(s string) (machine.Placement, error) {
	if s = strings.TrimSpace(s); s == "" || s == CPUsAuto {
		return machine.Placement{}, nil
	}
	p, err := machine.ParsePlacement(s)
	if err != nil {
		return p, fmt.Errorf("--cpus: %w", err)
	}
	return p, nil
}

// resolvePlacement is the run's placement: --cpus as given, or the
// automatic one for these targets. An explicit placement with a target
// kvbench does not start pins the load generator only, and says so.
func (p *Plan) resolvePlacement(targets []target.Target) {
	o := &p.Options
	started := true
	for _, t := range targets {
		switch t.Desc().Kind {
		case target.KindKvstore, target.KindRedis:
		default:
			started = false
		}
	}
	if s := strings.TrimSpace(o.CPUs); s == "" || s == CPUsAuto {
		o.placement = machine.Placement{}
		if started && runtime.NumCPU() > 1 {
			o.placement = machine.Placement{Server: machine.CPUSet{autoCPU}, Client: machine.CPUSet{autoCPU}}
		}
		return
	}
	for _, t := range targets {
		if t.Desc().Kind == target.KindAttach && len(o.placement.Server) > 0 {
			p.Warnings = append(p.Warnings, fmt.Errorf("--cpus %s: target %s is attached, not started by kvbench: its server is not pinned", o.placement, t.Desc().Name))
		}
	}
}

// pinClient binds the load generator (this process) to the placement's
// client CPUs, for the run; it returns a function that undoes it.
func (r *run) pinClient() (undo func(), err error) {
	set := r.o.placement.Client
	if len(set) == 0 {
		return func() {}, nil
	}
	before, err := machine.Affinity(0)
	if err != nil {
		return nil, err
	}
	if err := machine.PinSelf(set); err != nil {
		return nil, fmt.Errorf("--cpus %s: %w", r.o.placement, err)
	}
	return func() { _ = machine.PinSelf(before) }, nil
}

// pinServer binds the processes of a server kvbench started to the
// placement's server CPUs.
func (r *run) pinServer(info target.Info) error {
	set := r.o.placement.Server
	if len(set) == 0 {
		return nil
	}
	for _, pid := range target.PIDs(info) {
		if err := machine.Pin(pid, set); err != nil {
			return fmt.Errorf("--cpus %s: %w", r.o.placement, err)
		}
	}
	return nil
}

// preflight logs, once per run, where the servers and the load generator
// run and what makes this machine noisy (machine.Check).
func (r *run) preflight(ctx context.Context) {
	r.log("placement: %s", r.placementLine())
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

// placementLine says where the servers and the load generator run.
func (r *run) placementLine() string {
	p := r.o.placement
	switch {
	case len(p.Server) == 0 && len(p.Client) == 0:
		return "off: servers and load generator where the scheduler puts them (--cpus)"
	case slices.Equal(p.Server, p.Client):
		return fmt.Sprintf("%s: servers and load generator share CPU %s (--cpus)", p, p.Server)
	}
	return fmt.Sprintf("%s (--cpus)", p)
}
