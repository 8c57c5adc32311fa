package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/persistjob"
	"github.com/kvbench/kvbench/pkg/target"
)

// TestPersistJobOptions: what --persist-job takes and refuses, each
// error naming the flag.
func TestPersistJobOptions(t *testing.T) {
	tests := []struct {
		mod  func(*Options)
		want string // "" for valid
	}{
		{func(o *Options) { o.PersistJob = "bgsave" }, ""},
		{func(o *Options) { o.PersistJob = "snapshot" }, `--persist-job "snapshot": want bgsave or rewrite`},
		{func(o *Options) { o.PersistJobAt = time.Second }, "--persist-job-at and --persist-job-every go with --persist-job"},
		{func(o *Options) {
			o.PersistJob, o.PersistJobAt, o.PersistJobEvery = "rewrite", time.Second, time.Second
		}, "give one of them"},
		{func(o *Options) { o.PersistJob, o.PersistJobAt = "rewrite", 20*time.Second }, "--persist-job-at 20s: want a time within the measured phase, before --duration 20s"},
		{func(o *Options) {
			o.PersistJob, o.Duration, o.PersistJobEvery = "rewrite", 5*time.Second, 5*time.Second
		}, "--persist-job-every 5s: want less than --duration 5s"},
		{func(o *Options) { o.PersistJob, o.Interval = "bgsave", 0 }, "its figures come from the series: want an --interval"},
		{func(o *Options) { o.PersistJob, o.Modes = "bgsave", []string{"set", "recovery"} }, "drop recovery from --modes"},
		{func(o *Options) { o.PersistJob, o.Rates = "50%", "bgsave" }, "--rates, --slo"},
		{func(o *Options) { o.PersistJob, o.Agents = "bgsave", 2 }, "drop --agents"},
	}
	for _, tt := range tests {
		o := DefaultOptions()
		tt.mod(&o)
		n, err := o.normalize()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", o.PersistJob, err)
		case tt.want == "" && n.Duration != DefaultPersistJobDuration:
			t.Errorf("duration %v, want the default %v", n.Duration, DefaultPersistJobDuration)
		case tt.want != "":
			checkErrorHas(t, err, tt.want, ErrOptions)
		}
	}
	o := DefaultOptions()
	o.PersistJob, o.Duration = "bgsave", 10*time.Second
	if got := persistjob.Offsets(o.PersistJobAt, o.PersistJobEvery, o.Duration); len(got) != 1 || got[0] != 5*time.Second {
		t.Errorf("default time %v, want the phase's middle", got)
	}
	o.PersistJobEvery = 3 * time.Second
	if got := persistjob.Offsets(o.PersistJobAt, o.PersistJobEvery, o.Duration); len(got) != 3 || got[2] != 9*time.Second {
		t.Errorf("every 3s of 10s: %v", got)
	}
}

// TestPersistJobPlan: a strategy without the job is left out, with a
// warning, when it is a target's default; named in --strategies, it is
// refused by name.
func TestPersistJobPlan(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.PersistJob = []string{"kvstore"}, target.JobRewrite
	o.SetCmd, o.GetCmd, o.Modes = "SET", "GET", []string{"mixed"}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range p.Scenarios {
		names = append(names, sc.Strategy.Name)
	}
	if strings.Join(names, " ") != "persist_no persist_everysec" {
		t.Errorf("scenarios %v: want the default strategies with a log", names)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Error(), "kvstore/nopersist left out") {
		t.Errorf("warnings %v", p.Warnings)
	}
	o.Strategies = []string{"persist_no", "nopersist"}
	_, err = NewPlan(o)
	checkErrorHas(t, err, "--persist-job rewrite: strategy nopersist of kvstore keeps no append-only log to rewrite (appendonly no): leave nopersist out of --strategies", ErrOptions)
}

// TestRunPersistJob: a Redis BGSAVE and the kvstore's log rewrite, each
// set off during a run over a 1,000,000-key data set, are found: their
// time, the pause to start them, what they copied, the server's memory,
// and the load's p99 before and during them, and its recovery.
func TestRunPersistJob(t *testing.T) {
	if testing.Short() {
		t.Skip("two attempts over a million keys")
	}
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Rounds, o.Keyspace, o.Modes = 1, 1_000_000, []string{"mixed"}
	o.Pipeline, o.Connections = 16, 10
	o.Targets = []string{"kvstore", "redis"}
	o.SetCmd, o.GetCmd = "SET", "GET"
	// The job's fork or goroutine gets the other CPU, and the phase the
	// time to see p99 come back on a busy machine.
	o.Duration, o.Interval, o.CPUs = 20*time.Second, DefaultPersistJobInterval, "off"
	for _, c := range []struct{ job, strategy string }{{target.JobBGSave, "none"}, {target.JobRewrite, "persist_no"}} {
		t.Run(c.job, func(t *testing.T) {
			o := o
			o.OutDir = t.TempDir()
			o.PersistJob, o.PersistJobAt, o.Strategies = c.job, 2*time.Second, []string{c.strategy}
			res, stdout, _, err := runQuiet(t, context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			checkClean(t, o)
			rows := readDetail(t, res)
			if len(rows) != 1 {
				t.Fatalf("%d rows", len(rows))
			}
			r := rows[0]
			if r.PersistJob != c.job || r.JobS == nil || *r.JobS <= 0 || r.ForkMs == nil || *r.ForkMs <= 0 {
				t.Errorf("%s/%s: job %q took %v s, fork %v ms", r.Target, r.Strategy, r.PersistJob, deref(r.JobS), deref(r.ForkMs))
			}
			if r.CowBytes == nil {
				t.Errorf("%s: no copy-on-write figure", r.Target)
			}
			if r.RSSBeforeBytes == nil || r.RSSPeakBytes == nil || *r.RSSPeakBytes < *r.RSSBeforeBytes {
				t.Errorf("memory before %v, peak %v", r.RSSBeforeBytes, r.RSSPeakBytes)
			}
			switch {
			case r.P99BeforeUs == nil || r.P99DuringUs == nil:
				t.Errorf("p99 before %v, during %v", deref(r.P99BeforeUs), deref(r.P99DuringUs))
			case r.P99RecoveryS == nil && (r.P99AfterUs == nil || *r.P99AfterUs <= *r.P99BeforeUs*1.1):
				t.Errorf("no p99 recovery, though p99 after the job (%v us) is back within 10%% of before (%v us)", deref(r.P99AfterUs), *r.P99BeforeUs)
			case r.P99RecoveryS == nil:
				// A machine too busy for p99 to come back by the phase's
				// end: the row says so (no recovery time), as it must.
				t.Logf("p99 not back by the phase's end: before %v us, after %v us", *r.P99BeforeUs, *r.P99AfterUs)
			}
			marked := 0
			for _, s := range readSeries(t, res) {
				if strings.Contains(s.Events, results.EventPersistJob) {
					marked++
				}
			}
			if marked == 0 {
				t.Error("no interval of the series marks the job")
			}
			if !strings.Contains(stdout, "## Persistence jobs") || !strings.Contains(stdout, c.job) {
				t.Errorf("the report does not name the job:\n%s", stdout)
			}
		})
	}
}

// checkErrorHas checks that err wraps is and says want.
func checkErrorHas(t *testing.T, err error, want string, is error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, is) {
		t.Errorf("error %v: want %q, wrapping %v", err, want, is)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRunWait: a workload's writes followed by WAIT on a redis target
// with a replica kvbench starts: the wait command's row, every WAIT
// acknowledged; the kvstore, and a redis target without enough replicas,
// refused by name.
func TestRunWait(t *testing.T) {
	testutil.RequireRedisServer(t)
	conf := filepath.Join(t.TempDir(), "targets.yaml")
	if err := os.WriteFile(conf, []byte("targets:\n  - kind: redis\n    replicas: 1\n    strategies: [none]\n  - name: lonely\n    kind: redis\n    strategies: [none]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runOptions(t)
	o.Rounds, o.Requests, o.Keyspace, o.Modes, o.Workloads = 1, 5000, 1000, []string{}, []string{"ycsb-a"}
	o.ConfigFile, o.Targets = conf, []string{"redis"}
	o.Wait = mix.Wait{Waits: 1, Writes: 10, Replicas: 1, Timeout: 100 * time.Millisecond}
	res, _, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	if strings.Contains(stderr, "WAITs timed out") {
		t.Errorf("WAITs timed out with a replica in sync:\n%s", stderr)
	}
	var wait *results.Row
	for _, r := range readDetail(t, res) {
		if r.Command == mix.WaitName {
			wait = &r
		}
	}
	if wait == nil || !wait.OK() || wait.Requests == 0 || wait.LatP99Us <= 0 {
		t.Fatalf("the wait row: %+v", wait)
	}
	for _, c := range []struct {
		targets []string
		want    string
	}{
		{[]string{"lonely"}, "--wait-ratio: target lonely starts 0 replicas, and each WAIT waits for 1 (--num-replicas): give it replicas: 1 in a --config file"},
		{[]string{"kvstore"}, "--wait-ratio: target kvstore: the kvstore has no replication"},
	} {
		o.Targets = c.targets
		_, err := NewPlan(o)
		checkErrorHas(t, err, c.want, ErrOptions)
	}
	o.Modes = []string{"set"}
	_, err = NewPlan(o)
	checkErrorHas(t, err, "measure --workloads (e.g. ycsb-a), not --modes [set]", ErrOptions)
}
