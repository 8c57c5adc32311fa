package testutil

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// syncTimeout bounds how long a replica may take to sync with its master.
const syncTimeout = 20 * time.Second

// StartReplica starts a redis-server that replicates master (--replicaof
// on loopback), with StartRedis's settings plus any extra arguments, and
// waits until it is in sync: master_link_status:up and no sync in
// progress. The master's first sync to a replica starts at once
// (repl-diskless-sync-delay 0), not 5 s later.
func StartReplica(t testing.TB, master *Redis, args ...string) *Redis {
	t.Helper()
	mc := redis.NewClient(&redis.Options{Addr: master.Addr, Protocol: 2, DisableIdentity: true, DialTimeout: time.Second})
	err := mc.ConfigSet(context.Background(), "repl-diskless-sync-delay", "0").Err()
	mc.Close()
	if err != nil {
		t.Fatalf("master %s: %v", master.Addr, err)
	}
	host, port, _ := strings.Cut(master.Addr, ":")
	r := StartRedis(t, append([]string{"--replicaof", host, port}, args...)...)
	if err := waitInfo(r.Addr, syncTimeout, func(rep map[string]string) bool {
		return rep["master_link_status"] == "up" && rep["master_sync_in_progress"] == "0"
	}); err != nil {
		t.Fatalf("replica %s of %s: %v", r.Addr, master.Addr, err)
	}
	return r
}

// info returns the replication section of INFO on addr.
func info(addr string) (map[string]string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, DialTimeout: time.Second})
	defer c.Close()
	s, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		return nil, fmt.Errorf("INFO replication on %s: %w", addr, err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}

// waitInfo polls INFO replication on addr until ok holds or timeout
// passes; the error quotes the last state.
func waitInfo(addr string, timeout time.Duration, ok func(map[string]string) bool) error {
	deadline := time.Now().Add(timeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		rep, err := info(addr)
		if err == nil && ok(rep) {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return fmt.Errorf("not in sync within %v: master_link_status:%s master_sync_in_progress:%s slave_repl_offset:%s",
				timeout, rep["master_link_status"], rep["master_sync_in_progress"], rep["slave_repl_offset"])
		}
		time.Sleep(wait) // bounded poll of the replica's state
	}
}

// CommandCalls returns the calls of each command INFO commandstats
// reports on addr, by lower-case name ("get", "set").
func CommandCalls(t testing.TB, addr string) map[string]int64 {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, DialTimeout: time.Second})
	defer c.Close()
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats on %s: %v", addr, err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(n, 10, 64)
	}
	return out
}
