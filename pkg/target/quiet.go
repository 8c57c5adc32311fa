package target

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
)

// quietFields are the INFO persistence fields that show background work:
// a log rewrite running or scheduled, a snapshot being saved.
var quietFields = []string{"aof_rewrite_in_progress", "aof_rewrite_scheduled", "rdb_bgsave_in_progress"}

// QuietPoll is how often WaitQuiet asks.
const QuietPoll = 20 * time.Millisecond

// WaitQuiet waits until the server at addr (reached with o) has no background persistence
// work under way (INFO persistence: no AOF rewrite running or scheduled, no
// RDB save), so that a measurement does not share the machine with the
// compaction a prefill set off. A prefill of a million keys writes more
// than the 64 MiB after which Redis and the kvstore compact their logs by
// default. A server without INFO persistence counts as quiet. busy is true
// if the server was still busy when limit ran out.
func WaitQuiet(ctx context.Context, addr string, o control.Options, limit time.Duration) (busy bool, err error) {
	c, err := dialControl(ctx, addr, creds{Options: o}, DefaultReadyTimeout)
	if err != nil {
		return false, err
	}
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		m, err := c.Info(ctx, "persistence")
		var re *control.ReplyError
		if errors.As(err, &re) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		busy := false
		for _, f := range quietFields {
			if v, ok := m[f]; ok && v != "0" {
				busy = true
			}
		}
		if !busy {
			return false, nil
		}
		if time.Now().After(deadline) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(QuietPoll):
		}
	}
}

// WaitQuietAll waits, as WaitQuiet does, until every server of addrs (a
// cluster's masters) has no background persistence work under way, within
// one limit for them all. busy is true if one was still busy when limit
// ran out.
func WaitQuietAll(ctx context.Context, addrs []string, o control.Options, limit time.Duration) (busy bool, err error) {
	deadline := time.Now().Add(limit)
	for _, addr := range addrs {
		busy, err := WaitQuiet(ctx, addr, o, max(time.Until(deadline), 0))
		if err != nil {
			if len(addrs) > 1 {
				err = fmt.Errorf("%s: %w", addr, err)
			}
			return busy, err
		}
		if busy {
			return true, nil
		}
	}
	return false, nil
}
