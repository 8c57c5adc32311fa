package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/agents"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// runAgents runs n bench agents at once in-process, segment i of n each,
// with args, and returns their JSON outputs by segment.
func runAgents(t *testing.T, n int, args ...string) []string {
	t.Helper()
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a := append([]string{"bench", "--segment", fmt.Sprintf("%d/%d", i, n), "--output", "json"}, args...)
			code, stdout, stderr := execute(t, a...)
			if code != 0 {
				t.Errorf("agent %d/%d: exit %d\n%s", i, n, code, stderr)
			}
			outs[i] = stdout
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return outs
}

// writeFiles writes each output to a file of its own and returns the paths.
func writeFiles(t *testing.T, outs []string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, o := range outs {
		p := filepath.Join(dir, fmt.Sprintf("agent-%d.json", i))
		if err := os.WriteFile(p, []byte(o), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func decodeHist(t *testing.T, s string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode histogram: %v", err)
	}
	return h
}

// TestAgents: N agents (1, 2, 4) with segments and a common start do
// exactly one run's work: in set mode every key of the keyspace once
// (DBSIZE), the exact request count, and the merge's histogram is the sum
// of the agents', bucket by bucket; then with --prefill each agent loads
// its share and reads verify everywhere.
func TestAgents(t *testing.T) {
	r := testutil.StartRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	ctx := context.Background()
	_, port, _ := strings.Cut(r.Addr, ":")
	const keys = 6007
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if err := rc.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			start := time.Now().Add(500 * time.Millisecond).Format(time.RFC3339Nano)
			outs := runAgents(t, n, "--port", port, "--mode", "set", "--requests", fmt.Sprint(keys), "--keyspace", fmt.Sprint(keys),
				"--connections", "3", "--pipeline", "8", "--threads", "1", "--seed", "7", "--start-at", start, "--interval", "10ms")
			if size, err := rc.DBSize(ctx).Result(); err != nil || size != keys {
				t.Errorf("DBSIZE %d (%v), want %d: every key written once", size, err, keys)
			}

			// The merge, from files.
			code, stdout, stderr := execute(t, append([]string{"merge", "--agents", fmt.Sprint(n), "--output", "json"}, writeFiles(t, outs)...)...)
			if code != 0 {
				t.Fatalf("merge: exit %d\n%s", code, stderr)
			}
			var m benchDoc
			if err := json.Unmarshal([]byte(stdout), &m); err != nil {
				t.Fatal(err)
			}
			sum := hdrhistogram.New(1, 3600e9, 3)
			var first, last int64
			for i, o := range outs {
				var j benchDoc
				if err := json.Unmarshal([]byte(o), &j); err != nil {
					t.Fatal(err)
				}
				sum.Merge(decodeHist(t, j.LatencyHistogram))
				if i == 0 || j.StartUnixNs < first {
					first = j.StartUnixNs
				}
				last = max(last, j.EndUnixNs)
			}
			// The series merge interval by interval: each point is the sum
			// of the agents' points of the same start.
			perStart := map[int64]int64{}
			for _, o := range outs {
				var j benchDoc
				if err := json.Unmarshal([]byte(o), &j); err != nil {
					t.Fatal(err)
				}
				for _, p := range j.Series {
					perStart[p.StartUnixNs] += p.Requests
				}
			}
			var inSeries int64
			for _, p := range m.Series {
				inSeries += p.Requests
				if p.Requests != perStart[p.StartUnixNs] {
					t.Errorf("merged point at %d: %d requests, the agents' sum %d", p.StartUnixNs, p.Requests, perStart[p.StartUnixNs])
				}
			}
			if len(m.Series) != len(perStart) || inSeries != keys {
				t.Errorf("merged series: %d points holding %d requests; the agents have %d starts, want %d requests", len(m.Series), inSeries, len(perStart), keys)
			}
			merged := decodeHist(t, m.LatencyHistogram)
			if !merged.Equals(sum) || merged.TotalCount() != keys {
				t.Errorf("merged histogram: %d values, equal to the agents' sum: %v; want %d", merged.TotalCount(), merged.Equals(sum), keys)
			}
			if m.Requests != keys || m.Sets != keys || len(m.Agents) != n || m.StartUnixNs != first || m.EndUnixNs != last {
				t.Errorf("merged: %d requests, %d sets, %d agents, window %d-%d; want %d, %d, %d, %d-%d",
					m.Requests, m.Sets, len(m.Agents), m.StartUnixNs, m.EndUnixNs, keys, keys, n, first, last)
			}
			if want := float64(keys) / (float64(last-first) / 1e9); m.QPS < want*0.999 || m.QPS > want*1.001 {
				t.Errorf("merged QPS %.2f, want requests over the union of the windows, %.2f", m.QPS, want)
			}

			// Prefill, then verified reads: each agent loads its share
			// before the common start.
			if err := rc.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			start = time.Now().Add(time.Second).Format(time.RFC3339Nano)
			outs = runAgents(t, n, "--port", port, "--prefill", "--mode", "get", "--verify-get", "--requests", "3000", "--keyspace", fmt.Sprint(keys),
				"--connections", "2", "--threads", "1", "--seed", "8", "--start-at", start)
			if size, err := rc.DBSize(ctx).Result(); err != nil || size != keys {
				t.Errorf("after the prefill: DBSIZE %d (%v), want %d", size, err, keys)
			}
			// From standard input, as kubectl logs prints the pods' logs.
			var stdin bytes.Buffer
			for _, o := range outs {
				stdin.WriteString(o)
				stdin.WriteString("a line that is not JSON\n")
			}
			var out, errOut bytes.Buffer
			if code := Run(ctx, []string{"merge", "--agents", fmt.Sprint(n), "-"}, &stdin, &out, &errOut); code != 0 {
				t.Fatalf("merge -: exit %d\n%s", code, errOut.String())
			}
			for _, want := range []string{"requests: 3000\n", "misses: 0\n", "verify failures: 0\n", fmt.Sprintf("agents: %d,", n), fmt.Sprintf("agent %d/%d: ", n-1, n)} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("merge - lacks %q:\n%s", want, out.String())
				}
			}
			if got := strings.Count(errOut.String(), "skipped, not a JSON result"); got != n {
				t.Errorf("%d notes of skipped lines, want %d:\n%s", got, n, errOut.String())
			}
		})
	}
}

// TestMergeMix: agents running a command mix merge per command: each
// command's requests, errors and histogram are the sums of the agents',
// and the merged settings keep the mix.
func TestMergeMix(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	outs := runAgents(t, 2, "--port", port, "--requests", "6000", "--keyspace", "500", "--threads", "1", "--seed", "3",
		"--command", "SET __key__ __data__", "--command-ratio", "1", "--command", "GET __key__", "--command-ratio", "3")
	code, stdout, stderr := execute(t, append([]string{"merge", "--agents", "2", "--output", "json"}, writeFiles(t, outs)...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	var m benchDoc
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	type sums struct {
		requests, errors int64
		hist             *hdrhistogram.Histogram
	}
	want := map[string]*sums{}
	for _, o := range outs {
		var j benchDoc
		if err := json.Unmarshal([]byte(o), &j); err != nil {
			t.Fatal(err)
		}
		for _, c := range j.Commands {
			s := want[c.Command]
			if s == nil {
				s = &sums{hist: hdrhistogram.New(1, 3600e9, 3)}
				want[c.Command] = s
			}
			s.requests += c.Requests
			s.errors += c.Errors
			s.hist.Merge(decodeHist(t, c.LatencyHistogram))
		}
	}
	if len(m.Commands) != 2 || len(want) != 2 {
		t.Fatalf("merged %d commands, agents %d; want SET and GET", len(m.Commands), len(want))
	}
	var total int64
	for _, c := range m.Commands {
		s := want[c.Command]
		if s == nil || c.Requests != s.requests || c.Errors != s.errors || !decodeHist(t, c.LatencyHistogram).Equals(s.hist) {
			t.Errorf("merged %s: %d requests, %d errors; want the agents' sums", c.Command, c.Requests, c.Errors)
		}
		total += c.Requests
	}
	if total != 6000 || m.Requests != 6000 {
		t.Errorf("merged commands sum to %d, requests %d; want 6000", total, m.Requests)
	}
	if got := m.Settings.Commands; len(got) != 2 || got[1].Ratio != 3 || strings.Join(got[1].Args, " ") != "GET __key__" {
		t.Errorf("merged settings' mix: %+v", got)
	}
}

// TestMergeChecks: agents that did not run at once are merged with a
// warning; missing, duplicate and mismatched segments fail, naming them.
func TestMergeChecks(t *testing.T) {
	r := testutil.StartRedis(t)
	_, port, _ := strings.Cut(r.Addr, ":")
	args := []string{"--port", port, "--mode", "set", "--requests", "3000", "--keyspace", "3000", "--threads", "1", "--seed", "3", "--output", "json"}
	var outs []string
	for i := range 2 { // one after the other: disjoint windows
		code, stdout, stderr := execute(t, append([]string{"bench", "--segment", fmt.Sprintf("%d/2", i)}, args...)...)
		if code != 0 {
			t.Fatalf("agent %d: exit %d\n%s", i, code, stderr)
		}
		outs = append(outs, stdout)
	}
	files := writeFiles(t, outs)
	code, stdout, stderr := execute(t, "merge", files[0], files[1])
	if code != 0 || !strings.Contains(stdout, "warning: agents' windows overlap too little") || !strings.Contains(stdout, "requests: 3000\n") {
		t.Errorf("disjoint windows: exit %d, want a warning\n%s%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--agents", "2", files[1]}, "no result from segment 0"},
		{[]string{"merge", "--agents", "3", files[0], files[1]}, "segments of 2, not of 3"},
		{[]string{"merge", files[0], files[0]}, "segment 0/2 reported twice"},
	} {
		code, _, stderr := execute(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %v: exit %d, %q; want exit 1 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	// Counts are checked: totals that overflow, and negative counts, fail
	// naming the file; an empty file fails unless --skip-bad.
	requestsField := regexp.MustCompile(`"requests": *[0-9]+`)
	huge := writeFiles(t, []string{requestsField.ReplaceAllString(outs[1], `"requests": 9223372036854775807`)})[0]
	negative := writeFiles(t, []string{requestsField.ReplaceAllString(outs[1], `"requests": -5`)})[0]
	empty := writeFiles(t, []string{""})[0]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", files[0], huge}, huge + ":1: "},
		{[]string{"merge", files[0], negative}, negative + ":1: "},
		{[]string{"merge", files[0], empty}, empty + ": empty"},
		{[]string{"merge", "--skip-bad", empty, files[1] + ".missing"}, "no agent result"},
	} {
		code, stdout, stderr := execute(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stdout, "QPS") ||
			tc.args[2] == huge && !strings.Contains(stderr, "9223372036854775807 does not fit in a 64-bit count") ||
			tc.args[2] == negative && !strings.Contains(stderr, "is -5, a count cannot be negative") {
			t.Errorf("kvbench %v: exit %d, %q; want exit 1 naming %q and no figures", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, stderr = execute(t, "merge", "--skip-bad", "--agents", "2", files[0], empty, files[1])
	if code != 0 || !strings.Contains(stderr, "note: skipped (--skip-bad): "+empty+": empty") || !strings.Contains(stdout, "requests: 3000\n") {
		t.Errorf("--skip-bad with an empty file: exit %d\n%s%s", code, stdout, stderr)
	}
	// Agents measuring for the same time from the same start overlap.
	start := time.Now().Add(500 * time.Millisecond).Format(time.RFC3339Nano)
	timed := runAgents(t, 2, "--port", port, "--mode", "get", "--duration", "500ms", "--threads", "1", "--start-at", start, "--seed", "3")
	if code, stdout, _ := execute(t, append([]string{"merge", "--agents", "2"}, writeFiles(t, timed)...)...); code != 0 || strings.Contains(stdout, "warning") {
		t.Errorf("a common start and duration: exit %d, want no warning\n%s", code, stdout)
	}
	// A different value size is merged, with a warning naming it.
	code, stdout, _ = execute(t, append([]string{"bench", "--segment", "1/2", "--value-size", "8"}, args...)...)
	if code != 0 {
		t.Fatal("bench --value-size 8 failed")
	}
	other := writeFiles(t, []string{stdout})[0]
	if code, stdout, _ := execute(t, "merge", files[0], other); code != 0 || !strings.Contains(stdout, "settings differ: value_size: 32 (segment 0) vs 8 (segment 1)") {
		t.Errorf("different settings: exit %d\n%s", code, stdout)
	}
}

// TestBenchAgentFlags: --segment (auto from JOB_COMPLETION_INDEX),
// --start-at and the password from the environment reach the Config; a
// start more than a second past fails the run.
func TestBenchAgentFlags(t *testing.T) {
	t.Setenv(JobIndexEnv, "2")
	t.Setenv(PasswordEnv, "from-env")
	var got *benchOptions
	parse := func(args ...string) {
		t.Helper()
		cmd := newBenchCmd(func(_ context.Context, o *benchOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
	}
	parse("--segment", "auto/3", "--start-at", "2030-01-02T03:04:05Z", "--prefill")
	c := got.Config
	if c.Segment != 2 || c.Segments != 3 || !c.StartAt.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) || c.Password != "from-env" || !got.Prefill {
		t.Errorf("segment %d/%d, start %v, password %q, prefill %v", c.Segment, c.Segments, c.StartAt, c.Password, got.Prefill)
	}
	parse("--password", "flag")
	if got.Config.Password != "flag" {
		t.Errorf("--password flag: %q, want the flag to win", got.Config.Password)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--segment", "3/3"}, "--segment"},
		{[]string{"bench", "--segment", "1"}, "--segment"},
		{[]string{"bench", "--segment", "auto/2"}, "JOB_COMPLETION_INDEX=\"2\": want 0 to 1"},
		{[]string{"bench", "--start-at", "tomorrow"}, "--start-at"},
		{[]string{"merge"}, "at least one result file"},
		{[]string{"merge", "--output", "xml", "-"}, "--output"},
	} {
		code, _, stderr := execute(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	code, _, stderr := execute(t, "bench", "--port", "1", "--start-at", time.Now().Add(-5*time.Second).Format(time.RFC3339))
	if code != 1 || !strings.Contains(stderr, "start time already passed") {
		t.Errorf("late --start-at: exit %d, %q", code, stderr)
	}
}

// TestK8sJob: the manifest decodes strictly into a batch/v1 Job with the
// documented shape, and its command, with the pod's index set, is
// accepted by bench as that agent's segment.
func TestK8sJob(t *testing.T) {
	var out bytes.Buffer
	cmd := newK8sJobCmd(func(_ context.Context, opts *jobOptions) error {
		opts.Now = func() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }
		opts.Out = &out
		return runK8sJob(context.Background(), opts)
	})
	cmd.SetArgs([]string{"--agents", "3", "--image", "reg.example/kvbench:v1", "--lead", "45s", "--password-secret", "redis/pw",
		"--", "--host", "redis.default", "--mode", "set", "--connections", "12", "--duration", "20s", "--prefill"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(out.Bytes(), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, out.String())
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		*s.Parallelism != 3 || *s.Completions != 3 || *s.BackoffLimit != 0 || s.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("job spec: %+v", s)
	}
	pod := s.Template.Spec
	aa := pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity: %+v", aa)
	}
	c := pod.Containers[0]
	env := c.Env
	if len(env) != 1 || env[0].Name != PasswordEnv || env[0].ValueFrom.SecretKeyRef.Name != "redis" || env[0].ValueFrom.SecretKeyRef.Key != "pw" {
		t.Errorf("env: %+v", env)
	}
	if c.Resources.Requests.Cpu().String() != "1" || c.Resources.Requests.Memory().String() != "256Mi" || strings.Contains(out.String(), "password:") {
		t.Errorf("resources %v, or a password in the manifest", c.Resources.Requests)
	}
	// Each pod's command, as bench parses it.
	for i := range 3 {
		t.Setenv(JobIndexEnv, fmt.Sprint(i))
		var got *benchOptions
		bench := newBenchCmd(func(_ context.Context, o *benchOptions) error { got = o; return nil })
		if c.Args[0] != "bench" {
			t.Fatalf("args %q: want bench first", c.Args)
		}
		bench.SetArgs(c.Args[1:])
		if err := bench.Execute(); err != nil {
			t.Fatalf("pod %d: bench %q: %v", i, c.Args[1:], err)
		}
		cfg := got.Config
		if cfg.Segment != i || cfg.Segments != 3 || cfg.Connections != 12 || got.Output != "json" || !got.Prefill ||
			!cfg.StartAt.Equal(time.Date(2030, 1, 2, 3, 4, 50, 0, time.UTC)) || cfg.Addr != "redis.default:6379" {
			t.Errorf("pod %d: segment %d/%d, %d connections, output %s, start %v, addr %s", i, cfg.Segment, cfg.Segments, cfg.Connections, got.Output, cfg.StartAt, cfg.Addr)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"k8s", "job", "--image", "x"}, "--agents 0"},
		{[]string{"k8s", "job", "--agents", "2"}, "--image"},
		{[]string{"k8s", "job", "--agents", "2", "--image", "x", "--", "--password", "secret"}, "--password-secret"},
		{[]string{"k8s", "job", "--agents", "2", "--image", "x", "--", "--segment", "0/2"}, "--segment is set by the Job"},
		{[]string{"k8s", "job", "--agents", "2", "--image", "x", "--", "--pipeline", "0"}, "pipeline 0"},
		{[]string{"k8s", "job", "--agents", "2", "--image", "x", "--cpu", "lots"}, "--cpu"},
		{[]string{"k8s", "job", "--agents", "2", "--image", "x", "--name", "Bad_Name"}, "--name"},
	} {
		code, _, stderr := execute(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("kvbench %v: exit %d, %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}

// agentBench returns the bench options an agent gets for c: the flags
// agents.BenchArgs writes (with the TLS files tlsOpts), parsed by bench;
// and those flags, for messages.
func agentBench(t *testing.T, c loadgen.Config, tlsOpts tlsconf.Options) (*benchOptions, []string) {
	t.Helper()
	args, err := agents.BenchArgs(c, tlsOpts)
	if err != nil {
		t.Fatal(err)
	}
	if args[0] != "bench" {
		t.Fatalf("args %q: want bench first", args)
	}
	return benchOptionsOf(t, args[1:]...), args[1:]
}

// TestBenchArgsRoundTrip: the bench flags agents.BenchArgs writes for a
// Config (as run's local agents get them) parse back into that Config.
func TestBenchArgsRoundTrip(t *testing.T) {
	want, err := loadgen.Config{Addr: "10.1.2.3:7001", Mode: loadgen.ModeMixed, Requests: 12345, WarmupRequests: 77, Rate: 1500.5,
		Pipeline: 9, Connections: 5, Threads: 2, Keyspace: 999, KeyPrefix: "p:", Zipf: 0.8, ValueSize: 0, SetRatio: 30,
		SetCmd: "SETX", GetCmd: "GETX", Seed: -4, VerifyGet: true, AllowMisses: true, ContinueOnError: true, Cluster: true, RESP3: true,
		ConnectTimeout: 2 * time.Second, Timeout: 3 * time.Second, ProgressInterval: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	got, args := agentBench(t, want, tlsconf.Options{})
	c, err := got.Config.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	c.Progress = nil
	if fmt.Sprintf("%+v", c) != fmt.Sprintf("%+v", want) {
		t.Errorf("bench %q\ngives %+v\nwant  %+v", args, c, want)
	}

	// A command mix: names, weights, key patterns, a read-modify-write,
	// arguments that need quoting, and value sizes by weight.
	mixed := want
	mixed.TLS = nil
	mixed.Commands = []mix.Command{
		{Name: "READ", Args: []string{"GET", "__key__"}, Ratio: 3, KeyPattern: keyspace.Latest},
		{Args: []string{"HSET", "h:__key__", "a field", `q"uo\te`, "__data__"}, KeyPattern: keyspace.Insert},
		{Args: []string{"GET", "__key__"}, Then: []string{"SET", "__key__", "__data__"}},
		{Args: []string{"SET", "k\n", ""}},
	}
	mix.NameCommands(mixed.Commands)
	mixed.ValueSizes = []keyspace.SizeRange{{Min: 32, Max: 32, Weight: 60}, {Min: 100, Max: 1000, Weight: 40}}
	mixed.KeyPattern, mixed.Zipf, mixed.KeyMedian, mixed.KeyStddev = keyspace.Gaussian, 0, 500, 50.5
	got, args = agentBench(t, mixed, tlsconf.Options{})
	if !reflect.DeepEqual(got.Config.Commands, mixed.Commands) || !slices.Equal(got.Config.ValueSizes, mixed.ValueSizes) ||
		got.Config.KeyMedian != mixed.KeyMedian || got.Config.KeyStddev != mixed.KeyStddev {
		t.Errorf("bench %q\ngives %+v, sizes %v, median %v, stddev %v\nwant  %+v, sizes %v, median %v, stddev %v", args,
			got.Config.Commands, got.Config.ValueSizes, got.Config.KeyMedian, got.Config.KeyStddev,
			mixed.Commands, mixed.ValueSizes, mixed.KeyMedian, mixed.KeyStddev)
	}

	// Over TLS, the files the configuration was read from.
	f, err := tlsconf.WriteFiles(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files := tlsconf.Options{Enabled: true, CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey, ServerName: "db.example", Insecure: true}
	want.TLS = &tls.Config{}
	if _, err := agents.BenchArgs(want, tlsconf.Options{}); err == nil {
		t.Error("BenchArgs with TLS and no files: no error")
	}
	got, args = agentBench(t, want, files)
	if got.tls != files {
		t.Errorf("bench %q: TLS settings %+v, want %+v", args, got.tls, files)
	}
}
