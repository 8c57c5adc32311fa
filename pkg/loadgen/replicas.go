package loadgen

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
)

// Where reads go (doc.go): the groups of clusterconn.go, with a socket
// to every replica besides those to the masters; a single server with
// replicas is a cluster of one master that serves every slot.

// standaloneTopology is a single server with replicas as the route of a
// one-master cluster: Addr serves every slot, its replicas the reads.
func standaloneTopology(c *Config) *cluster.Topology {
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
