package target

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The persistence jobs: the background work a server's persistence does
// while it serves, which "kvbench run --persist-job" sets off during a
// measured phase.
const (
	// JobBGSave is a snapshot of the dataset written in the background:
	// Redis's BGSAVE (a fork writes dump.rdb), the kvstore's BGSAVE
	// (dump.kvb, from a snapshot taken under its write lock).
	JobBGSave = "bgsave"
	// JobRewrite is a rewrite of the append-only log: Redis's
	// BGREWRITEAOF (a fork), the kvstore's (a snapshot written as the
	// log's new base).
	JobRewrite = "rewrite"
)

// PersistJobNames are the jobs, in the order their names are listed.
var PersistJobNames = []string{JobBGSave, JobRewrite}

// serverJobs are the commands that set off the jobs on Redis, its
// relatives and the kvstore alike.
func serverJobs() map[string][]string {
	return map[string][]string{JobBGSave: {"BGSAVE"}, JobRewrite: {"BGREWRITEAOF"}}
}

// ParsePersistJobs reads a command or attach target's persist_jobs:
// entries (job name → the command that sets it off, "BGSAVE"), each
// command split into words; an unknown job or an empty command is an
// error naming it.
func ParsePersistJobs(m map[string]string) (map[string][]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(m))
	for _, job := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(PersistJobNames, job) {
			return nil, fmt.Errorf("persist job %q: want %s", job, strings.Join(PersistJobNames, " or "))
		}
		words := strings.Fields(m[job])
		if len(words) == 0 {
			return nil, fmt.Errorf("persist job %s: an empty command", job)
		}
		out[job] = words
	}
	return out, nil
}

// PersistJob returns the command that sets off job on a server of the
// target under strategy s, or an error saying why that strategy has no
// such job: the target names no command for it (a command or attach
// target without persist_jobs:), or, for a log rewrite, the strategy
// keeps no append-only log (Redis's appendonly no, the kvstore's
// --persist none, a strategy whose persistence is none).
func (d Desc) PersistJob(s Strategy, job string) ([]string, error) {
	if !slices.Contains(PersistJobNames, job) {
		return nil, fmt.Errorf("persist job %q: want %s", job, strings.Join(PersistJobNames, " or "))
	}
	cmd, ok := d.PersistJobs[job]
	if !ok {
		if d.Kind == KindCommand || d.Kind == KindAttach {
			return nil, fmt.Errorf("target %s names no command for the %s job: give it persist_jobs: {%s: COMMAND} in the --config file", d.Name, job, job)
		}
		return nil, fmt.Errorf("target %s has no %s job", d.Name, job)
	}
	if job == JobRewrite && !keepsLog(s) {
		return nil, fmt.Errorf("strategy %s of %s keeps no append-only log to rewrite (%s)", s.Name, d.Name, logless(s))
	}
	return slices.Clone(cmd), nil
}

// keepsLog reports whether strategy s keeps an append-only log: its
// expected appendonly setting, else its persistence (none and rdb keep
// none).
func keepsLog(s Strategy) bool {
	if v, ok := s.Expect["appendonly"]; ok {
		return v == "yes"
	}
	return s.Persistence != "none" && s.Persistence != "rdb"
}

// logless says how a strategy without a log is configured.
func logless(s Strategy) string {
	if v, ok := s.Expect["appendonly"]; ok {
		return "appendonly " + v
	}
	return "persistence " + s.Persistence
}
