package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Where reads go (doc.go): the groups of clusterconn.go, with a socket
// to every replica besides those to the masters; a single server with
// replicas is a cluster of one master that serves every slot.

// readsReplicas reports whether the run's reads go to replicas.
func (c Config) readsReplicas() bool { return len(c.Replicas) > 0 || c.Cluster && c.ReadFromReplicas }

// replicaErrors says what of the replicas' settings cannot go together.
func (c Config) replicaErrors() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.ReadFromReplicas && !c.Cluster {
		bad("read from replicas: needs a cluster; a single server's replicas are given as Replicas")
	}
	if len(c.Replicas) == 0 {
		return errs
	}
	if c.Cluster {
		bad("replicas %v: a cluster's replicas come from its slot map: read from them with ReadFromReplicas", c.Replicas)
	}
	for _, a := range c.Replicas {
		if err := checkHostPort(a); err != nil {
			bad("replica %q: %w", a, err)
		} else if a == c.Addr {
			bad("replica %s: it is the server the writes go to", a)
		}
	}
	if c.Reconnect {
		bad("reconnect: not with replicas (a lost connection to the server or a replica fails the run)")
	}
	if c.MultiKeyGet > 0 {
		bad("multi-key get: not with replicas")
	}
	return errs
}

// checkHostPort checks a host:port address with a TCP port.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want host:port")
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return errors.New("want host:port, a TCP port from 1 to 65535")
	}
	return nil
}

// standaloneTopology is a single server with replicas as the route of a
// one-master cluster: Addr serves every slot, its replicas the reads.
func (c *Config) standaloneTopology() *cluster.Topology {
	t := &cluster.Topology{Masters: []string{c.Addr}, Replicas: []int{len(c.Replicas)}, ReplicaAddrs: [][]string{c.Replicas}}
	// Owner is all 0: the zero value.
	return t
}

// replicaWarnings are the findings about where a phase's reads went:
// the masters without a replica, whose reads they served, and replicas
// that got no request.
func (r *runner) replicaWarnings(res *Result) []error {
	var out []error
	if len(r.alone) > 0 {
		out = append(out, fmt.Errorf("no replica: the reads of the slots of %v went to the master", r.alone))
	}
	served := false
	replicas := false
	for _, n := range res.Nodes {
		if n.Role == RoleReplica {
			replicas = true
			served = served || n.Requests > 0
		}
	}
	if replicas && !served && res.Requests > 0 {
		out = append(out, errors.New("no request went to a replica: the run sent no read"))
	}
	return out
}

// The roles of a measure.Node.
const (
	RoleMaster  = "master"
	RoleReplica = "replica"
)

// dialReplica opens a socket to a replica: a cluster's replica gets
// READONLY after the handshake, so that it serves reads of its master's
// slots instead of redirecting them.
func dialReplica(ctx context.Context, addr string, cfg *Config) (link, error) {
	return dialAs(ctx, addr, cfg, cfg.Cluster)
}

// replPoll is how often awaitReplicas looks at a replica's offset.
const replPoll = 10 * time.Millisecond

// awaitReplicas waits until every replica the run reads from has
// received what its master holds now: its slave_repl_offset (INFO
// replication) reached the master's master_repl_offset, within
// cfg.Timeout per replica. A server whose INFO gives no offset is not
// waited for, and a warning says so.
func awaitReplicas(ctx context.Context, cfg Config) (warns []error, err error) {
	var pairs [][2]string // master, replica
	if cfg.Cluster {
		seeds := cfg.ClusterSeeds
		if len(seeds) == 0 {
			seeds = []string{cfg.Addr}
		}
		topo, err := cluster.FetchTopology(ctx, seeds, cfg.Control())
		if err != nil {
			return nil, fmt.Errorf("replicas: %w", err)
		}
		for m, reps := range topo.ReplicaAddrs {
			for _, r := range reps {
				pairs = append(pairs, [2]string{topo.Masters[m], r})
			}
		}
	} else {
		for _, r := range cfg.Replicas {
			pairs = append(pairs, [2]string{cfg.Addr, r})
		}
	}
	offset := func(addr, field string) (int64, bool, error) {
		v, err := control.Query(ctx, addr, cfg.Control(), "INFO", "replication")
		if err != nil {
			return 0, false, fmt.Errorf("INFO replication on %s: %w", addr, err)
		}
		s, ok := control.ParseInfo(infoText(v))[field]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil, nil
	}
	for _, p := range pairs {
		want, ok, err := offset(p[0], "master_repl_offset")
		if err != nil {
			return warns, err
		}
		if !ok {
			warns = append(warns, fmt.Errorf("replica %s: its master %s gives no master_repl_offset (INFO replication): the reads may find keys not yet replicated", p[1], p[0]))
			continue
		}
		deadline := time.Now().Add(cfg.Timeout)
		for {
			got, ok, err := offset(p[1], "slave_repl_offset")
			if err != nil {
				return warns, err
			}
			if !ok {
				warns = append(warns, fmt.Errorf("replica %s gives no slave_repl_offset (INFO replication): the reads may find keys not yet replicated", p[1]))
				break
			}
			if got >= want {
				break
			}
			if time.Now().After(deadline) {
				return warns, fmt.Errorf("replica %s: at replication offset %d %v after the prefill, its master %s at %d", p[1], got, cfg.Timeout, p[0], want)
			}
			select {
			case <-ctx.Done():
				return warns, ctx.Err()
			case <-time.After(replPoll):
			}
		}
	}
	return warns, nil
}

// infoText is the text of a raw INFO reply (a bulk string).
func infoText(raw []byte) string {
	r, _, err := resp.ParseReply(raw, resp.DefaultMaxBulkLen)
	if err != nil || r.Type != resp.TypeBulk {
		return ""
	}
	return string(r.Data)
}
