package kvstore

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Cluster mode: the kvstore answers as one master of a Redis Cluster whose
// layout is fixed by a configuration file that every node is given. There
// is no gossip, no failover, no replicas and no resharding: a node knows
// the others only from the file, and their slots never move.
//
// The file is YAML:
//
//	nodes:
//	  - id: node-a         # letters, digits, '-' and '_'
//	    host: 127.0.0.1
//	    port: 7001
//	    slots: [0-5460]    # inclusive ranges, or single slots
//	  - id: node-b
//	    host: 127.0.0.1
//	    port: 7002
//	    slots: [5461-10922]
//	  - ...
//
// The ranges of all the nodes must cover the 16384 slots exactly once.

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = keyslot.Count

// SlotRange is an inclusive range of hash slots.
type SlotRange struct{ Start, End int }

func (r SlotRange) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	return strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End)
}

// ClusterNode is one master of the cluster.
type ClusterNode struct {
	ID    string
	Host  string
	Port  int
	Slots []SlotRange
}

// Addr is host:port.
func (n *ClusterNode) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// ClusterConfig is the layout of a cluster: its nodes, in the file's order.
type ClusterConfig struct {
	Nodes []ClusterNode
}

// clusterFile is the file's YAML shape.
type clusterFile struct {
	Nodes []struct {
		ID    string   `yaml:"id"`
		Host  string   `yaml:"host"`
		Port  int      `yaml:"port"`
		Slots []string `yaml:"slots"`
	} `yaml:"nodes"`
}

// ParseClusterConfig reads a cluster configuration and checks it: node ids
// unique, ports valid, and every slot owned by exactly one node. name is
// the file's name, for errors.
func ParseClusterConfig(r io.Reader, name string) (*ClusterConfig, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var f clusterFile
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Nodes) == 0 {
		return nil, fmt.Errorf("%s: no nodes: a cluster needs at least one", name)
	}
	cfg := &ClusterConfig{}
	ids := make(map[string]bool)
	for i, fn := range f.Nodes {
		where := fmt.Sprintf("%s: node %d", name, i+1)
		if fn.ID != "" {
			where = fmt.Sprintf("%s: node %q", name, fn.ID)
		}
		if !validNodeID(fn.ID) {
			return nil, fmt.Errorf("%s: id %q: want letters, digits, '-' and '_'", where, fn.ID)
		}
		if ids[fn.ID] {
			return nil, fmt.Errorf("%s: the id is used twice", where)
		}
		ids[fn.ID] = true
		if fn.Host == "" || strings.ContainsAny(fn.Host, " \t,@") {
			return nil, fmt.Errorf("%s: host %q: want a host name or IP address", where, fn.Host)
		}
		if fn.Port < 1 || fn.Port > 65535 {
			return nil, fmt.Errorf("%s: port %d: want 1 to 65535", where, fn.Port)
		}
		if len(fn.Slots) == 0 {
			return nil, fmt.Errorf("%s: no slot ranges", where)
		}
		n := ClusterNode{ID: fn.ID, Host: fn.Host, Port: fn.Port}
		for _, s := range fn.Slots {
			r, err := parseSlotRange(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			n.Slots = append(n.Slots, r)
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	if err := cfg.checkCoverage(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

func validNodeID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, ch := range id {
		if !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

// parseSlotRange parses "start-end" or "slot".
func parseSlotRange(s string) (SlotRange, error) {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(s), "-")
	a, err1 := strconv.Atoi(lo)
	b := a
	var err2 error
	if isRange {
		b, err2 = strconv.Atoi(hi)
	}
	switch {
	case err1 != nil || err2 != nil:
		return SlotRange{}, fmt.Errorf("slot range %q: want start-end or a single slot", s)
	case a < 0 || b >= ClusterSlots || a > b:
		return SlotRange{}, fmt.Errorf("slot range %q: want 0 <= start <= end <= %d", s, ClusterSlots-1)
	}
	return SlotRange{a, b}, nil
}

// checkCoverage checks that every slot belongs to exactly one node.
func (cfg *ClusterConfig) checkCoverage() error {
	var owner [ClusterSlots]int16 // node index + 1
	for i, n := range cfg.Nodes {
		for _, r := range n.Slots {
			for s := r.Start; s <= r.End; s++ {
				if o := owner[s]; o != 0 {
					return fmt.Errorf("node %q: slot range %s overlaps node %q's ranges (slot %d)", n.ID, r, cfg.Nodes[o-1].ID, s)
				}
				owner[s] = int16(i + 1)
			}
		}
	}
	for s := 0; s < ClusterSlots; s++ {
		if owner[s] == 0 {
			e := s
			for e+1 < ClusterSlots && owner[e+1] == 0 {
				e++
			}
			return fmt.Errorf("slots %s belong to no node: every slot from 0 to %d needs one", SlotRange{s, e}, ClusterSlots-1)
		}
	}
	return nil
}

// Node returns the node with id, or nil.
func (cfg *ClusterConfig) Node(id string) *ClusterNode {
	for i := range cfg.Nodes {
		if cfg.Nodes[i].ID == id {
			return &cfg.Nodes[i]
		}
	}
	return nil
}

// cluster is a server's view of its cluster.
type cluster struct {
	cfg   *ClusterConfig
	me    int     // index of this node in cfg.Nodes
	own16 []int16 // index of the node owning each slot
}

// newCluster checks that myID names a node of cfg.
func newCluster(cfg *ClusterConfig, myID string) (*cluster, error) {
	me := slices.IndexFunc(cfg.Nodes, func(n ClusterNode) bool { return n.ID == myID })
	if me < 0 {
		ids := make([]string, len(cfg.Nodes))
		for i, n := range cfg.Nodes {
			ids[i] = n.ID
		}
		return nil, fmt.Errorf("cluster id %q names no node of the configuration (its nodes: %s)", myID, strings.Join(ids, ", "))
	}
	if err := cfg.checkCoverage(); err != nil {
		return nil, err
	}
	cl := &cluster{cfg: cfg, me: me, own16: make([]int16, ClusterSlots)}
	for i, n := range cfg.Nodes {
		for _, r := range n.Slots {
			for s := r.Start; s <= r.End; s++ {
				cl.own16[s] = int16(i)
			}
		}
	}
	return cl, nil
}

// Redis Cluster's error replies.
const errCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot"
const errNoCluster = "ERR This instance has cluster support disabled"

// route answers -CROSSSLOT or -MOVED when the keys of the request are not
// all in one slot of this node, and reports whether it did.
func (c *conn) route(cmd *command, args [][]byte) bool {
	cl := c.s.cluster
	if cl == nil || cmd.first == 0 || len(args) <= cmd.first {
		return false
	}
	last := cmd.last
	if last < 0 {
		last = len(args) + last
	}
	last = min(last, len(args)-1)
	slot := -1
	for i := cmd.first; i <= last; i += cmd.step {
		s := keyslot.Of(args[i])
		if slot >= 0 && s != slot {
			c.out = resp.AppendError(c.out, errCrossSlot)
			return true
		}
		slot = s
	}
	if o := int(cl.own16[slot]); o != cl.me {
		c.out = resp.AppendError(c.out, "MOVED "+strconv.Itoa(slot)+" "+cl.cfg.Nodes[o].Addr())
		return true
	}
	return false
}
