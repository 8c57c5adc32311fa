package kvstore

import (
	"fmt"
	"sync/atomic"
	"time"
)

// cmdStat is one command's INFO commandstats counters: the calls executed
// and the time spent in them. Each sits on a cache line of its own, so that
// event loops running different commands do not share one.
type cmdStat struct {
	calls atomic.Int64
	ns    atomic.Int64
	name  string
	_     [32]byte
}

// cmdStats are a server's commandstats, indexed by command.index.
type cmdStats []cmdStat

func newCmdStats() cmdStats {
	st := make(cmdStats, len(commandList))
	for i := range commandList {
		st[i].name = commandList[i].name
	}
	return st
}

// record adds a batch's commands (batch[:n], as exec ran them) and the
// time they took: each command gets its share of the batch's time by its
// number of calls. A batch is timed once rather than each command: a
// pipeline repeats one command, and a clock read per command would cost
// as much as a GET. The calls are counted per distinct command of the
// batch first (a pipeline holds one or a few), so that the shared
// counters are added to once per command per batch.
func (st cmdStats) record(batch []call, n int, took time.Duration) {
	var seen [4]cmdCount
	k := 0
	for i := range batch[:n] {
		cmd := batch[i].cmd
		if cmd == nil {
			continue
		}
		j := 0
		for j < k && seen[j].cmd != cmd {
			j++
		}
		if j == k {
			if k == len(seen) {
				st.add(seen[:k], n, took)
				k, j = 0, 0
			}
			seen[k] = cmdCount{cmd: cmd}
			k++
		}
		seen[j].calls++
	}
	st.add(seen[:k], n, took)
}

// cmdCount is a command's calls in a batch.
type cmdCount struct {
	cmd   *command
	calls int64
}

// add adds the counts of a batch of n commands that took took.
func (st cmdStats) add(counts []cmdCount, n int, took time.Duration) {
	for _, c := range counts {
		s := &st[c.cmd.index]
		s.calls.Add(c.calls)
		s.ns.Add(int64(took) * c.calls / int64(n))
	}
}

// reset zeroes the counters (CONFIG RESETSTAT).
func (st cmdStats) reset() {
	for i := range st {
		st[i].calls.Store(0)
		st[i].ns.Store(0)
	}
}

// infoCommandstats is INFO commandstats in Redis's format: a
// cmdstat_NAME line per command called since the start or the last
// CONFIG RESETSTAT, with its calls, total microseconds and microseconds
// per call. Every call counts as executed: none is rejected or failed.
func infoCommandstats(s *Server, b *infoBuilder) {
	for i := range s.cmdStats {
		st := &s.cmdStats[i]
		calls := st.calls.Load()
		if calls == 0 {
			continue
		}
		usec := st.ns.Load() / 1000
		b.field("cmdstat_"+st.name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=0,failed_calls=0",
			calls, usec, float64(usec)/float64(calls)))
	}
}
