package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KindKvstoreCluster is a cluster of kvstore nodes ("kvbench serve
// --cluster-config").
const KindKvstoreCluster Kind = "kvstore-cluster"

// DefaultKvstoreClusterName is the kvstore-cluster target's name.
const DefaultKvstoreClusterName = "kvstore-cluster"

// KvstoreClusterConfig configures a kvstore-cluster target: every node's
// kvstore settings, and the number of nodes. Zero fields take the
// defaults.
type KvstoreClusterConfig struct {
	// KvstoreConfig is every node's configuration; its Name defaults to
	// DefaultKvstoreClusterName, and its Port is not used (every node
	// gets a free port).
	KvstoreConfig
	// Shards is the number of nodes, each given an even share of the
	// slots; DefaultClusterShards when 0.
	Shards int
}

// KvstoreCluster is a cluster of kvstore nodes that kvbench starts: it
// picks a free port per node, writes the cluster configuration file that
// lists them all (ids node-0, node-1, ..., even slot ranges), and runs
// "kvbench serve --cluster-config FILE --cluster-id ID" per node, each in
// its own directory with the strategy's persistence and allocator. The
// kvstore has no gossip: the file is the whole topology.
type KvstoreCluster struct {
	kv     *Kvstore
	cfg    KvstoreClusterConfig
	desc   Desc
	shards int
}

// NewKvstoreCluster returns the kvstore-cluster target.
func NewKvstoreCluster(cfg KvstoreClusterConfig) (*KvstoreCluster, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultKvstoreClusterName
	}
	if cfg.Shards == 0 {
		cfg.Shards = DefaultClusterShards
	}
	if cfg.Shards < 1 || cfg.Shards > MaxClusterNodes {
		return nil, fmt.Errorf("%s: shards %d: want 1 to %d", cfg.Name, cfg.Shards, MaxClusterNodes)
	}
	cfg.Port = 0
	kv, err := NewKvstore(cfg.KvstoreConfig)
	if err != nil {
		return nil, err
	}
	c := &KvstoreCluster{kv: kv, cfg: cfg, shards: cfg.Shards}
	c.desc = kv.Desc()
	c.desc.Kind = KindKvstoreCluster
	return c, nil
}

// Desc describes the target.
func (c *KvstoreCluster) Desc() Desc { return c.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (c *KvstoreCluster) Config() KvstoreClusterConfig { return c.cfg }

// Shards is the number of nodes the cluster is formed of.
func (c *KvstoreCluster) Shards() int { return c.shards }

// Start starts the cluster's nodes for strategy s, each in a directory
// node-N of env.Dir, with the cluster file cluster.yaml in env.Dir, and
// returns once every node answers PING with the strategy's configuration.
// A port taken between its choice and the node's start fails the start
// (every node's port is in the file): the caller retries. On error every
// node started is stopped.
func (c *KvstoreCluster) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	flags, ok := c.kv.args[s.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", c.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	env, err := env.abs()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	var ports []int
	for len(ports) < c.shards {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("%s: find a free port: %w", c.cfg.Name, err)
		}
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	file := filepath.Join(env.Dir, "cluster.yaml")
	if err := os.WriteFile(file, []byte(kvClusterFile(ports)), 0o644); err != nil {
		return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
	}
	ci := &clusterInstance{}
	for i, port := range ports {
		dir := filepath.Join(env.Dir, "node-"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			ci.stopAll(ctx)
			return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
		}
		nenv := env
		nenv.Dir = dir
		name := fmt.Sprintf("%s node-%d (127.0.0.1:%d)", c.cfg.Name, i, port)
		picked := false
		pick := func() (int, error) {
			if picked {
				return 0, errors.New("the port in the cluster file was taken")
			}
			picked = true
			return port, nil
		}
		inst, err := spawnOnPort(ctx, name, s, nenv, kvstoreParams, mustOwn, true, creds{}, pick, func(port int) ([]string, error) {
			argv := []string{c.kv.cfg.Bin, "serve", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
				"--cluster-config", file, "--cluster-id", "node-" + strconv.Itoa(i)}
			return slices.Concat(argv, flags, c.kv.cfg.Args), nil
		})
		if err != nil {
			ci.stopAll(ctx)
			return nil, err
		}
		ci.nodes = append(ci.nodes, &clusterNode{inst: inst, id: "node-" + strconv.Itoa(i)})
	}
	ci.info = ci.nodes[0].inst.info
	ci.info.StartedIn = time.Since(started)
	for _, nd := range ci.nodes {
		ci.info.Nodes = append(ci.info.Nodes, nd.inst.info.Addr)
		ci.info.NodePIDs = append(ci.info.NodePIDs, nd.inst.info.PID)
	}
	return ci, nil
}

// kvClusterFile is the cluster configuration of nodes node-0, node-1, ...
// on ports of 127.0.0.1, each with an even share of the slots.
func kvClusterFile(ports []int) string {
	var b strings.Builder
	b.WriteString("nodes:\n")
	for i, port := range ports {
		lo, hi := SlotRange(i, len(ports))
		fmt.Fprintf(&b, "  - {id: node-%d, host: 127.0.0.1, port: %d, slots: [%d-%d]}\n", i, port, lo, hi)
	}
	return b.String()
}
