package cli

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// replicaFlags are where bench's reads go: a cluster's replicas
// (--read-from-replicas) or a single server's (--replicas).
type replicaFlags struct {
	list string
}

// addReplicaFlags adds --read-from-replicas and --replicas.
func addReplicaFlags(f *pflag.FlagSet, o *benchOptions) {
	f.BoolVar(&o.Config.ReadFromReplicas, "read-from-replicas", false,
		"with --cluster, send each read to a replica of its key's slot (in turn over its replicas, each connection sending READONLY), writes to the masters; a slot range without a replica is read from its master")
	f.StringVar(&o.replicas.list, "replicas", "",
		"without --cluster, replicas of the server as host:port,host:port: reads go to them in turn, writes to --host/--port (or --uri)")
}

// validateReplicas reads --replicas and refuses what cannot go with the
// replicas' flags, naming the flag.
func (o *benchOptions) validateReplicas(f *pflag.FlagSet) error {
	c := &o.Config
	if c.ReadFromReplicas && !c.Cluster {
		return fmt.Errorf("--read-from-replicas needs --cluster (a single server's replicas are given with --replicas host:port,...)")
	}
	if !f.Changed("replicas") {
		return nil
	}
	if c.Cluster {
		return fmt.Errorf("--replicas and --cluster cannot be used together: a cluster's replicas come from its slot map, use --read-from-replicas")
	}
	c.Replicas = nil
	for _, a := range strings.Split(o.replicas.list, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("--replicas %q: %q is not host:port with a TCP port from 1 to 65535", o.replicas.list, a)
		}
		if a == c.Addr {
			return fmt.Errorf("--replicas %q: %s is the server the writes go to", o.replicas.list, a)
		}
		c.Replicas = append(c.Replicas, a)
	}
	for _, n := range []string{"reconnect", "multi-key-get"} {
		if f.Changed(n) {
			return fmt.Errorf("--replicas and --%s cannot be used together", n)
		}
	}
	return nil
}
