package cluster

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
)

// replPoll is how often AwaitReplicas looks at a replica's offset.
const replPoll = 10 * time.Millisecond

// AwaitReplicas waits until each replica of pairs (master, replica
// addresses) has received what its master holds now: its
// slave_repl_offset (INFO replication) reached the master's
// master_repl_offset, within timeout per replica. A server whose INFO
// gives no offset is not waited for, and a warning says so.
func AwaitReplicas(ctx context.Context, pairs [][2]string, o control.Options, timeout time.Duration) (warns []error, err error) {
	offset := func(addr, field string) (int64, bool, error) {
		v, err := control.Query(ctx, addr, o, "INFO", "replication")
		if err != nil {
			return 0, false, fmt.Errorf("INFO replication on %s: %w", addr, err)
		}
		s, ok := control.ParseInfo(replyText(v))[field]
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
		deadline := time.Now().Add(timeout)
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
				return warns, fmt.Errorf("replica %s: at replication offset %d %v after the prefill, its master %s at %d", p[1], got, timeout, p[0], want)
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

// replyText is the text of a raw INFO or CLUSTER NODES reply: a bulk
// string, or a RESP3 verbatim one without its format.
func replyText(raw []byte) string {
	r, _, err := resp.ParseReply(raw, resp.DefaultMaxBulkLen)
	switch {
	case err != nil:
		return ""
	case r.Type == resp.TypeBulk:
		return string(r.Data)
	case r.Type == resp.TypeVerbatim:
		return string(r.Data[4:])
	}
	return ""
}
