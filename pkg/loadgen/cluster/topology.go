package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Topology is a cluster's slot map: its masters and which owns each slot.
type Topology struct {
	// Masters are the masters' addresses, host:port, in slot order.
	Masters []string
	// Owner is the index in Masters of each slot's master; -1 for a slot
	// no master serves.
	Owner [Slots]int16
	// Replicas is the number of replicas CLUSTER SLOTS lists for each of
	// Masters (the most over its slot ranges).
	Replicas []int
	// ReplicaAddrs are the addresses of each of Masters' replicas,
	// host:port, in the order CLUSTER SLOTS first lists them over the
	// master's slot ranges.
	ReplicaAddrs [][]string
}

// FetchTopology reads the slot map with CLUSTER SLOTS from the first of
// seeds that answers.
func FetchTopology(ctx context.Context, seeds []string, o control.Options) (*Topology, error) {
	if len(seeds) == 0 {
		return nil, errors.New("cluster: no seed address")
	}
	var errs []error
	for _, seed := range seeds {
		t, err := fetchTopology(ctx, seed, o)
		if err == nil {
			return t, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", seed, err))
	}
	return nil, fmt.Errorf("cluster topology: %w", errors.Join(errs...))
}

func fetchTopology(ctx context.Context, addr string, o control.Options) (*Topology, error) {
	raw, err := control.Query(ctx, addr, o, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	return parseSlots(raw, addr)
}

// parseSlots reads a CLUSTER SLOTS reply: an array of [start, end,
// [host, port, ...] of the master, replicas...]. An empty host is seed's.
func parseSlots(b []byte, seed string) (*Topology, error) {
	bad := func(what string) error { return fmt.Errorf("CLUSTER SLOTS: %s", what) }
	r, n, err := resp.ParseReply(b, 0)
	if err != nil {
		return nil, err
	}
	if r.Type == resp.TypeError {
		return nil, fmt.Errorf("CLUSTER SLOTS: %s", r.Data)
	}
	if r.Type != resp.TypeArray || r.Int <= 0 {
		return nil, bad("no slot is served (is cluster mode enabled?)")
	}
	seedHost, _, _ := net.SplitHostPort(seed)
	t := &Topology{}
	for i := range t.Owner {
		t.Owner[i] = -1
	}
	next := func() (resp.Reply, error) {
		r, m, err := resp.ParseReply(b[n:], 0)
		if err == nil && m == 0 {
			err = bad("truncated reply")
		}
		n += m
		return r, err
	}
	for range r.Int {
		e, err := next()
		if err != nil {
			return nil, err
		}
		if e.Type != resp.TypeArray || e.Int < 3 {
			return nil, bad("malformed entry")
		}
		lo, err1 := next()
		hi, err2 := next()
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if lo.Type != resp.TypeInt || hi.Type != resp.TypeInt || lo.Int < 0 || hi.Int < lo.Int || hi.Int >= Slots {
			return nil, bad("malformed slot range")
		}
		master := ""
		var replicas []string
		for k := range e.Int - 2 {
			nd, err := next()
			if err != nil {
				return nil, err
			}
			if nd.Type != resp.TypeArray || nd.Int < 2 {
				return nil, bad("malformed node")
			}
			host, err1 := next()
			port, err2 := next()
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			for range nd.Int - 2 {
				m, err := resp.SkipReply(b[n:], 0)
				if err != nil || m == 0 {
					return nil, bad("malformed node")
				}
				n += m
			}
			h := string(host.Data)
			if h == "" || h == "?" {
				h = seedHost
			}
			addr := net.JoinHostPort(h, strconv.FormatInt(port.Int, 10))
			if k == 0 {
				master = addr
			} else {
				replicas = append(replicas, addr)
			}
		}
		idx := slices.Index(t.Masters, master)
		if idx < 0 {
			idx = len(t.Masters)
			t.Masters = append(t.Masters, master)
			t.Replicas = append(t.Replicas, 0)
			t.ReplicaAddrs = append(t.ReplicaAddrs, nil)
		}
		t.Replicas[idx] = max(t.Replicas[idx], int(e.Int-3))
		for _, a := range replicas {
			if !slices.Contains(t.ReplicaAddrs[idx], a) {
				t.ReplicaAddrs[idx] = append(t.ReplicaAddrs[idx], a)
			}
		}
		for s := lo.Int; s <= hi.Int; s++ {
			t.Owner[s] = int16(idx)
		}
	}
	return t, nil
}

// followers counts the replicas that CLUSTER NODES, read from the first
// of seeds that answers, lists as following the master at addr and not
// failed. CLUSTER SLOTS lists a replica only once the node asked has
// heard of the replica's replication offset, which a replica that has
// just joined or synced may not have told every node yet; CLUSTER NODES
// lists it at once. ok is false when no seed answers or none lists addr.
func followers(ctx context.Context, seeds []string, addr string, o control.Options) (n int, ok bool) {
	for _, seed := range seeds {
		raw, err := control.Query(ctx, seed, o, "CLUSTER", "NODES")
		if err != nil {
			continue
		}
		if s := replyText(raw); s != "" {
			return countFollowers(s, addr)
		}
	}
	return 0, false
}

// countFollowers reads a CLUSTER NODES text: one node a line, "id
// ip:port@cport[,hostname] flags master-id ...".
func countFollowers(nodes, addr string) (n int, ok bool) {
	id := ""
	masters := map[string]int{} // master id → replicas not failed
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		a, _, _ := strings.Cut(f[1], "@")
		if a == addr {
			id = f[0]
		}
		if f[3] != "-" && !slices.Contains(strings.Split(f[2], ","), "fail") {
			masters[f[3]]++
		}
	}
	if id == "" {
		return 0, false
	}
	return masters[id], true
}
