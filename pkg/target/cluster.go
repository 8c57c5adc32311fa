package target

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
)

// Redis Cluster defaults.
const (
	// DefaultRedisClusterName is the redis-cluster target's name.
	DefaultRedisClusterName = "redis-cluster"
	// DefaultClusterShards is the number of masters.
	DefaultClusterShards = 3
	// DefaultClusterReplicas is the number of replicas per master.
	DefaultClusterReplicas = 0
	// ClusterSlots is the number of hash slots of a Redis Cluster.
	ClusterSlots = 16384
	// ClusterBusOffset is added to a node's port for its cluster bus.
	ClusterBusOffset = 10000
	// MaxClusterNodes bounds shards × (1 + replicas).
	MaxClusterNodes = 64
)

// ErrClusterNotReady: the cluster did not agree on its slot map, or did
// not report cluster_state:ok, within the ready timeout.
var ErrClusterNotReady = errors.New("cluster not ready")

// RedisClusterConfig configures a redis-cluster target: the Redis settings
// of every node, and the cluster's shape. Zero fields take the defaults.
type RedisClusterConfig struct {
	// RedisConfig is every node's configuration; its Name defaults to
	// DefaultRedisClusterName.
	RedisConfig
	// Shards is the number of masters, each given an even share of the
	// slots; DefaultClusterShards when 0.
	Shards int
	// Replicas is the number of replicas per master.
	Replicas int
}

// RedisCluster is a Redis Cluster of redis-server nodes that kvbench
// starts, each with its own port, directory and nodes file, and with the
// strategy's persistence settings. kvbench assigns the slots itself
// (CLUSTER ADDSLOTSRANGE), joins the nodes (CLUSTER MEET) and attaches
// the replicas (CLUSTER REPLICATE).
type RedisCluster struct {
	redis    *Redis
	cfg      RedisClusterConfig
	desc     Desc
	shards   int
	replicas int
}

// NewRedisCluster returns the redis-cluster target. The error wraps
// ErrNotFound when the executable cannot be found.
func NewRedisCluster(cfg RedisClusterConfig) (*RedisCluster, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultRedisClusterName
	}
	if cfg.Shards == 0 {
		cfg.Shards = DefaultClusterShards
	}
	switch {
	case cfg.Shards < 1:
		return nil, fmt.Errorf("%s: shards %d: want at least 1", cfg.Name, cfg.Shards)
	case cfg.Replicas < 0:
		return nil, fmt.Errorf("%s: replicas %d: want 0 or more", cfg.Name, cfg.Replicas)
	case cfg.DB != 0:
		return nil, fmt.Errorf("%s: db %d: a cluster has only database 0", cfg.Name, cfg.DB)
	case cfg.Shards*(1+cfg.Replicas) > MaxClusterNodes:
		return nil, fmt.Errorf("%s: %d shards with %d replicas each make %d nodes: at most %d", cfg.Name,
			cfg.Shards, cfg.Replicas, cfg.Shards*(1+cfg.Replicas), MaxClusterNodes)
	}
	r, err := NewRedis(cfg.RedisConfig)
	if err != nil {
		return nil, err
	}
	cfg.Bin = r.cfg.Bin // the executable found on PATH when none was given
	c := &RedisCluster{redis: r, cfg: cfg, shards: cfg.Shards, replicas: cfg.Replicas}
	c.desc = r.Desc()
	c.desc.Kind, c.desc.Replicas = KindRedisCluster, cfg.Replicas
	c.desc.Strategies = slices.Clone(c.desc.Strategies)
	for i, s := range c.desc.Strategies {
		e := maps.Clone(s.Expect)
		e["cluster-enabled"] = "yes"
		c.desc.Strategies[i].Expect = e
	}
	return c, nil
}

// Desc describes the target.
func (c *RedisCluster) Desc() Desc { return c.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (c *RedisCluster) Config() RedisClusterConfig { return c.cfg }

// Shards is the number of masters the cluster is formed of.
func (c *RedisCluster) Shards() int { return c.shards }

// clusterNode is one started node.
type clusterNode struct {
	inst *instance
	id   string
}

// Start starts the cluster's nodes for strategy s, each in a directory
// node-N of env.Dir (masters first), forms the cluster and returns once
// every node reports cluster_state:ok and the same slot map, within the
// ready timeout. On error every node started is stopped.
func (c *RedisCluster) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	lines, ok := c.redis.conf[s.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", c.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	env, err := env.abs()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	// One CA and certificate pair for all the nodes: the cluster bus and
	// replication run over TLS too.
	cr, tlsLines, err := c.redis.tlsSetup(env.Dir)
	if err != nil {
		return nil, err
	}
	if tlsLines != nil {
		tlsLines = append(tlsLines, "tls-cluster yes", "tls-replication yes")
	}
	cr.RESP3 = c.cfg.RESP3
	ci := &clusterInstance{cr: cr}
	n := c.shards * (1 + c.replicas)
	for i := range n {
		dir := filepath.Join(env.Dir, "node-"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			ci.stopAll(ctx)
			return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
		}
		nenv := env
		nenv.Dir = dir
		conf := filepath.Join(dir, "redis.conf")
		name := fmt.Sprintf("%s node %d", c.cfg.Name, i)
		inst, err := spawnOnPort(ctx, name, s, nenv, configParams(redisParams, s), mustOwn, true, cr, freeClusterPort, func(port int) ([]string, error) {
			listen := []string{"port " + strconv.Itoa(port)}
			if tlsLines != nil {
				listen = append([]string{"port 0", "tls-port " + strconv.Itoa(port)}, tlsLines...)
			}
			text := strings.Join(slices.Concat([]string{"bind 127.0.0.1"}, listen, []string{
				"dir " + redisQuote(dir),
				"daemonize no",
				`logfile ""`,
				"cluster-enabled yes",
				"cluster-config-file nodes.conf",
				// A replica's first sync starts at once, not 5 s later.
				"repl-diskless-sync-delay 0",
			}, lines, c.cfg.Config), "\n") + "\n"
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return []string{c.cfg.Bin, conf}, nil
		})
		if err != nil {
			ci.stopAll(ctx)
			return nil, err
		}
		ci.nodes = append(ci.nodes, &clusterNode{inst: inst})
	}
	if err := c.form(ctx, ci, started.Add(env.readyTimeout())); err != nil {
		ci.stopAll(ctx)
		return nil, fmt.Errorf("%s: %w", c.cfg.Name, err)
	}
	ci.info = ci.nodes[0].inst.info
	ci.info.StartedIn = time.Since(started)
	for _, nd := range ci.nodes[:c.shards] {
		ci.info.Nodes = append(ci.info.Nodes, nd.inst.info.Addr)
		ci.info.NodePIDs = append(ci.info.NodePIDs, nd.inst.info.PID)
	}
	return ci, nil
}

// form assigns the slots, joins the nodes, attaches the replicas and
// waits for the cluster to agree, until deadline.
func (c *RedisCluster) form(ctx context.Context, ci *clusterInstance, deadline time.Time) error {
	clients := make([]*control.Conn, len(ci.nodes))
	defer func() {
		for _, cl := range clients {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	for i, nd := range ci.nodes {
		cl, err := dialControl(ctx, nd.inst.info.Addr, ci.cr, cmdTimeout)
		if err != nil {
			return err
		}
		clients[i] = cl
		v, err := cl.Do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", nd.inst.info.Addr, err)
		}
		nd.id, _ = v.(string)
	}
	for i := range c.shards {
		lo, hi := SlotRange(i, c.shards)
		if _, err := clients[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, ci.nodes[i].inst.info.Addr, err)
		}
	}
	// meet introduces to node i the nodes its CLUSTER NODES, known, does
	// not list.
	meet := func(i int, known string) error {
		for j, nd := range ci.nodes {
			if j == i || strings.Contains(known, " "+nd.inst.info.Addr+"@") {
				continue
			}
			host, port, _ := net.SplitHostPort(nd.inst.info.Addr)
			if _, err := clients[i].Do(ctx, "CLUSTER", "MEET", host, port); err != nil {
				return fmt.Errorf("CLUSTER MEET %s on %s: %w", nd.inst.info.Addr, ci.nodes[i].inst.info.Addr, err)
			}
		}
		return nil
	}
	if err := meet(0, ""); err != nil {
		return err
	}
	met := time.Now()
	// A replica can only follow a master it knows.
	if err := c.await(ctx, deadline, "every node knowing every other", func() (string, bool, error) {
		for i, cl := range clients {
			v, err := cl.Do(ctx, "CLUSTER", "NODES")
			if err != nil {
				return "", false, fmt.Errorf("CLUSTER NODES on %s: %w", ci.nodes[i].inst.info.Addr, err)
			}
			s, _ := v.(string)
			lines := strings.Split(strings.TrimSpace(s), "\n")
			if len(lines) != len(ci.nodes) || strings.Contains(s, "handshake") || strings.Contains(s, "noaddr") {
				// A handshake that failed (its packets lost on a loaded
				// machine) is dropped, not retried: meet again.
				if time.Since(met) > remeetAfter {
					if err := meet(i, s); err != nil {
						return "", false, err
					}
					met = time.Now()
				}
				return fmt.Sprintf("%s knows %d of %d nodes", ci.nodes[i].inst.info.Addr, len(lines), len(ci.nodes)), false, nil
			}
		}
		return "", true, nil
	}); err != nil {
		return err
	}
	for i := c.shards; i < len(ci.nodes); i++ {
		master := ci.nodes[(i-c.shards)%c.shards]
		if _, err := clients[i].Do(ctx, "CLUSTER", "REPLICATE", master.id); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE on %s: %w", ci.nodes[i].inst.info.Addr, err)
		}
	}
	want := c.slotMap(ci)
	return c.await(ctx, deadline, "cluster_state:ok and the same slot map on every node", func() (string, bool, error) {
		for i, cl := range clients {
			addr := ci.nodes[i].inst.info.Addr
			info, err := clusterInfo(ctx, cl)
			if err != nil {
				return "", false, fmt.Errorf("CLUSTER INFO on %s: %w", addr, err)
			}
			if st := info["cluster_state"]; st != "ok" {
				return fmt.Sprintf("%s reports cluster_state:%s", addr, st), false, nil
			}
			got, err := clusterNodesMap(ctx, cl)
			if err != nil {
				return "", false, fmt.Errorf("CLUSTER NODES on %s: %w", addr, err)
			}
			if got != want {
				return fmt.Sprintf("%s reports slots %s, want %s", addr, got, want), false, nil
			}
			if i >= c.shards {
				rep, err := cl.Info(ctx, "replication")
				if err != nil {
					return "", false, err
				}
				if st := rep["master_link_status"]; st != "up" {
					return fmt.Sprintf("replica %s reports master_link_status:%s", addr, st), false, nil
				}
			}
		}
		return "", true, nil
	})
}

// remeetAfter is how long form waits for the nodes to know each other
// before it meets the ones still unknown again.
const remeetAfter = 2 * time.Second

// await calls check until it reports done, fails, or deadline passes;
// the last state it described goes in the timeout's error.
func (c *RedisCluster) await(ctx context.Context, deadline time.Time, what string, check func() (state string, done bool, err error)) error {
	return awaitState(ctx, deadline, ErrClusterNotReady, what, check)
}

// awaitState calls check until it reports done, fails, or deadline
// passes: then the error wraps notReady, with the last state check
// described.
func awaitState(ctx context.Context, deadline time.Time, notReady error, what string, check func() (state string, done bool, err error)) error {
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		state, done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: waiting for %s: %s", notReady, what, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// slotMap is the slot map the cluster must agree on, in clusterSlots's
// form.
func (c *RedisCluster) slotMap(ci *clusterInstance) string {
	var parts []string
	for i := range c.shards {
		lo, hi := SlotRange(i, c.shards)
		nodes := []string{ci.nodes[i].inst.info.Addr}
		var reps []string
		for j := c.shards + i; j < len(ci.nodes); j += c.shards {
			reps = append(reps, ci.nodes[j].inst.info.Addr)
		}
		slices.Sort(reps)
		parts = append(parts, fmt.Sprintf("%d-%d:%s", lo, hi, strings.Join(append(nodes, reps...), ",")))
	}
	return strings.Join(parts, " ")
}

// SlotRange returns the slots, lo to hi inclusive, of shard i of n: an
// even share of ClusterSlots.
func SlotRange(i, n int) (lo, hi int) {
	return i * ClusterSlots / n, (i+1)*ClusterSlots/n - 1
}

// clusterInfo returns the fields of CLUSTER INFO.
func clusterInfo(ctx context.Context, cl *control.Conn) (map[string]string, error) {
	v, err := cl.Do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return nil, err
	}
	s, _ := v.(string)
	m := make(map[string]string)
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// clusterSlots returns CLUSTER SLOTS as "lo-hi:master,replica,..."
// entries in slot order, separated by spaces, replicas sorted.
func clusterSlots(ctx context.Context, cl *control.Conn) (string, error) {
	v, err := cl.Do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return "", err
	}
	arr, _ := v.([]any)
	type entry struct {
		lo    int64
		nodes []string
	}
	var es []entry
	for _, x := range arr {
		e, _ := x.([]any)
		if len(e) < 3 {
			return "", fmt.Errorf("CLUSTER SLOTS: malformed entry %v", x)
		}
		lo, _ := e[0].(int64)
		hi, _ := e[1].(int64)
		var addrs []string
		for _, n := range e[2:] {
			nd, _ := n.([]any)
			if len(nd) < 2 {
				return "", fmt.Errorf("CLUSTER SLOTS: malformed node %v", n)
			}
			host, _ := nd[0].(string)
			port, _ := nd[1].(int64)
			addrs = append(addrs, net.JoinHostPort(host, strconv.FormatInt(port, 10)))
		}
		slices.Sort(addrs[1:])
		es = append(es, entry{lo, []string{fmt.Sprintf("%d-%d:%s", lo, hi, strings.Join(addrs, ","))}})
	}
	slices.SortFunc(es, func(a, b entry) int { return int(a.lo - b.lo) })
	var parts []string
	for _, e := range es {
		parts = append(parts, e.nodes...)
	}
	return strings.Join(parts, " "), nil
}

// clusterNodesMap returns the slot map of CLUSTER NODES in clusterSlots's
// form, with every replica that follows a master (CLUSTER SLOTS lists a
// replica only once it has replicated some data); a node marked failing
// gets a "!" after its address.
func clusterNodesMap(ctx context.Context, cl *control.Conn) (string, error) {
	v, err := cl.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	type master struct {
		lo    int
		parts []string
		addr  string
		reps  []string
	}
	masters := map[string]*master{}
	replicas := map[string][]string{} // master id → replica addresses
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return "", fmt.Errorf("CLUSTER NODES: malformed line %q", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		if strings.Contains(f[2], "fail") {
			addr += "!"
		}
		if f[3] != "-" {
			replicas[f[3]] = append(replicas[f[3]], addr)
			continue
		}
		if len(f) == 8 {
			continue // a master without slots
		}
		m := &master{lo: -1, addr: addr}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated or imported
			}
			lo, _, _ := strings.Cut(r, "-")
			n, _ := strconv.Atoi(lo)
			if m.lo < 0 || n < m.lo {
				m.lo = n
			}
			if !strings.Contains(r, "-") {
				r += "-" + r
			}
			m.parts = append(m.parts, r)
		}
		masters[f[0]] = m
	}
	ms := slices.SortedFunc(maps.Values(masters), func(a, b *master) int { return a.lo - b.lo })
	var out []string
	for id, m := range masters {
		m.reps = slices.Sorted(slices.Values(replicas[id]))
	}
	for _, m := range ms {
		for _, r := range m.parts {
			out = append(out, r+":"+strings.Join(append([]string{m.addr}, m.reps...), ","))
		}
	}
	return strings.Join(out, " "), nil
}

// freeClusterPort returns a port of 127.0.0.1 that was free a moment ago,
// with its cluster bus port (port + ClusterBusOffset) free too.
func freeClusterPort() (int, error) {
	for range 50 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if port+ClusterBusOffset > 65535 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+ClusterBusOffset)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("no port found with its cluster bus port (+10000) free")
}

// clusterInstance is a running cluster, masters first, then replicas; or
// a redis master and its replicas (Redis.Start), the master first. Its
// Info is a single server's then (no Nodes).
type clusterInstance struct {
	nodes []*clusterNode
	info  Info
	cr    creds // how to reach the nodes

	exitOnce sync.Once
	exited   chan struct{} // closed when the first node exits
}

func (ci *clusterInstance) Info() Info {
	info := ci.info
	info.Nodes = slices.Clone(info.Nodes)
	info.NodePIDs = slices.Clone(info.NodePIDs)
	return info
}

// Err returns the first node's error.
func (ci *clusterInstance) Err() error {
	for _, nd := range ci.nodes {
		if err := nd.inst.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Exited is closed once any node has exited.
func (ci *clusterInstance) Exited() <-chan struct{} {
	ci.exitOnce.Do(func() {
		ci.exited = make(chan struct{})
		var once sync.Once
		for _, nd := range ci.nodes {
			if ch := nd.inst.Exited(); ch != nil {
				go func() {
					<-ch
					once.Do(func() { close(ci.exited) })
				}()
			}
		}
	})
	return ci.exited
}

// Stop stops every node, at once.
func (ci *clusterInstance) Stop(ctx context.Context) error {
	errs := make([]error, len(ci.nodes))
	var wg sync.WaitGroup
	for i, nd := range ci.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nd.inst.Stop(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopAll stops every node within failedStartGrace, whether or not ctx
// (the failed start's) is done.
func (ci *clusterInstance) stopAll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failedStartGrace)
	defer cancel()
	_ = ci.Stop(ctx)
}
