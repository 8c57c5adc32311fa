package kvstore

import (
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/resp"
)

// cmdCluster is CLUSTER SLOTS, SHARDS, NODES, INFO, MYID and KEYSLOT, in
// Redis 7's formats. The layout is the configuration's; every node is a
// master (config epoch: its position in the file) and always reachable.
func cmdCluster(c *conn, args [][]byte) {
	sub := args[1]
	if equalFold(sub, "keyslot") && len(args) == 3 {
		c.out = resp.AppendInt(c.out, int64(keyslot.Of(args[2])))
		return
	}
	cl := c.s.cluster
	if cl == nil {
		c.out = resp.AppendError(c.out, errNoCluster)
		return
	}
	nodes := cl.cfg.Nodes
	switch {
	case equalFold(sub, "myid") && len(args) == 2:
		c.out = resp.AppendBulkString(c.out, nodes[cl.me].ID)
	case equalFold(sub, "info") && len(args) == 2:
		c.out = resp.AppendBulkString(c.out, cl.info())
	case equalFold(sub, "nodes") && len(args) == 2:
		c.out = resp.AppendBulkString(c.out, cl.nodes())
	case equalFold(sub, "slots") && len(args) == 2:
		n := 0
		for _, node := range nodes {
			n += len(node.Slots)
		}
		c.out = resp.AppendArray(c.out, n)
		for _, node := range nodes {
			for _, r := range node.Slots {
				c.out = resp.AppendArray(c.out, 3)
				c.out = resp.AppendInt(c.out, int64(r.Start))
				c.out = resp.AppendInt(c.out, int64(r.End))
				c.out = resp.AppendArray(c.out, 4)
				c.out = resp.AppendBulkString(c.out, node.Host)
				c.out = resp.AppendInt(c.out, int64(node.Port))
				c.out = resp.AppendBulkString(c.out, node.ID)
				c.out = resp.AppendArray(c.out, 0) // networking metadata
			}
		}
	case equalFold(sub, "shards") && len(args) == 2:
		c.out = resp.AppendArray(c.out, len(nodes))
		for _, node := range nodes {
			c.out = resp.AppendArray(c.out, 4)
			c.out = resp.AppendBulkString(c.out, "slots")
			c.out = resp.AppendArray(c.out, 2*len(node.Slots))
			for _, r := range node.Slots {
				c.out = resp.AppendInt(c.out, int64(r.Start))
				c.out = resp.AppendInt(c.out, int64(r.End))
			}
			c.out = resp.AppendBulkString(c.out, "nodes")
			c.out = resp.AppendArray(c.out, 1)
			c.out = resp.AppendArray(c.out, 14)
			for _, kv := range [...][2]string{
				{"id", node.ID}, {"port", ""}, {"ip", node.Host}, {"endpoint", node.Host},
				{"role", "master"}, {"replication-offset", ""}, {"health", "online"},
			} {
				c.out = resp.AppendBulkString(c.out, kv[0])
				switch kv[0] {
				case "port":
					c.out = resp.AppendInt(c.out, int64(node.Port))
				case "replication-offset":
					c.out = resp.AppendInt(c.out, 0)
				default:
					c.out = resp.AppendBulkString(c.out, kv[1])
				}
			}
		}
	default:
		c.out = resp.AppendError(c.out, unknownSubcommand(sub, "cluster"))
	}
}

// info is CLUSTER INFO's text.
func (cl *cluster) info() string {
	n := strconv.Itoa(len(cl.cfg.Nodes))
	var b strings.Builder
	for _, kv := range [...][2]string{
		{"cluster_state", "ok"},
		{"cluster_slots_assigned", strconv.Itoa(ClusterSlots)},
		{"cluster_slots_ok", strconv.Itoa(ClusterSlots)},
		{"cluster_slots_pfail", "0"},
		{"cluster_slots_fail", "0"},
		{"cluster_known_nodes", n},
		{"cluster_size", n},
		{"cluster_current_epoch", n},
		{"cluster_my_epoch", strconv.Itoa(cl.me + 1)},
		{"cluster_stats_messages_sent", "0"},
		{"cluster_stats_messages_received", "0"},
		{"total_cluster_links_buffer_limit_exceeded", "0"},
	} {
		b.WriteString(kv[0] + ":" + kv[1] + "\r\n")
	}
	return b.String()
}

// nodes is CLUSTER NODES's text: one line a node,
// "id ip:port@cport flags master ping-sent pong-recv config-epoch link-state slot...".
func (cl *cluster) nodes() string {
	var b strings.Builder
	for i, node := range cl.cfg.Nodes {
		flags := "master"
		if i == cl.me {
			flags = "myself,master"
		}
		b.WriteString(node.ID + " " + node.Addr() + "@" + strconv.Itoa(node.Port+10000) + " " + flags +
			" - 0 0 " + strconv.Itoa(i+1) + " connected")
		for _, r := range node.Slots {
			b.WriteString(" " + r.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cmdOK answers +OK: READONLY and READWRITE, which change nothing here.
func cmdOK(c *conn, _ [][]byte) { c.out = resp.AppendOK(c.out) }
