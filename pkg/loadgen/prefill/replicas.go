package prefill

import (
	"context"
	"fmt"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
)

// awaitReplicas waits until every replica the run reads from has
// received what its master holds now (cluster.AwaitReplicas), within
// cfg.Timeout per replica.
func awaitReplicas(ctx context.Context, cfg loadgen.Config) (warns []error, err error) {
	var pairs [][2]string // master, replica
	if cfg.Cluster {
		topo, err := cluster.FetchTopology(ctx, cfg.Seeds(), cfg.Control())
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
	return cluster.AwaitReplicas(ctx, pairs, cfg.Control(), cfg.Timeout)
}
