package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/kvstore"
	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/loadgen"
)

// startKvstore starts the embedded kvstore on a free port of 127.0.0.1
// and returns its host and port.
func startKvstore(t *testing.T) (string, int) {
	t.Helper()
	s, err := kvstore.Start(kvstore.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(s.Addr())
	p, _ := strconv.Atoi(port)
	return host, p
}

// options are the defaults with the server at host:port, a small load,
// and given naming the options set as a command line would.
func options(host string, port int, given ...string) Options {
	o := DefaultOptions()
	o.Host, o.Port = host, port
	o.Requests, o.Keyspace, o.Connections, o.Threads, o.Pipeline = 3000, 500, 2, 1, 16
	o.Given = map[string]bool{"host": true, "port": true, "requests": true, "keyspace": true, "connections": true, "threads": true, "pipeline": true}
	for _, g := range given {
		o.Given[g] = true
	}
	return o
}

// TestRunPrefillAndGet: the library behind "kvbench bench" prefills a
// kvstore and reads every key back, verified, reporting JSON on w and
// returning the prefill and the run.
func TestRunPrefillAndGet(t *testing.T) {
	host, port := startKvstore(t)
	o := options(host, port, "mode", "verify-get", "output", "prefill")
	o.Mode, o.VerifyGet, o.Output, o.Prefill = loadgen.ModeGet, true, output.FormatJSON, true
	var out, log bytes.Buffer
	o.Log = &log
	res, err := Run(context.Background(), o, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Prefill == nil || res.Prefill.Sets != 500 || !res.Measured || res.Run == nil || res.Run.Gets != 3000 || res.Run.Misses != 0 || res.Run.VerifyFailures != 0 {
		t.Fatalf("result %+v", res)
	}
	var doc struct {
		Requests int64 `json:"requests"`
		Settings struct {
			Mode     string `json:"mode"`
			Keyspace int64  `json:"keyspace"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Requests != 3000 || doc.Settings.Mode != "get" || doc.Settings.Keyspace != 500 {
		t.Errorf("report %+v, %v:\n%s", doc, err, out.String())
	}
	if !strings.Contains(log.String(), "prefill: keys 0 to 499 written") {
		t.Errorf("log %q: want the prefill's keys", log.String())
	}
}

// TestRunTestsAndRamp: redis-benchmark's tests and a connection ramp run
// through the same call, each writing its own report.
func TestRunTestsAndRamp(t *testing.T) {
	host, port := startKvstore(t)
	o := options(host, port, "tests", "quiet")
	o.Tests, o.Quiet = "set,get", true
	var out bytes.Buffer
	res, err := Run(context.Background(), o, &out)
	if err != nil || len(res.Tests) != 2 || res.Tests[0].Result.Requests != 3000 || strings.Count(out.String(), "requests per second") != 2 {
		t.Fatalf("tests: %v, %+v\n%s", err, res.Tests, out.String())
	}

	o = options(host, port, "mode", "connections-start", "connections-step", "step-duration", "output")
	delete(o.Given, "requests")
	o.Mode, o.Connections, o.ConnectionsStart, o.ConnectionsStep, o.StepDuration, o.Output = loadgen.ModeGet, 2, 1, 1, 200e6, output.FormatCSV
	out.Reset()
	res, err = Run(context.Background(), o, &out)
	if err != nil || res.Curve == nil || len(res.Curve.Ramp) != 2 || res.Curve.Ramp[1].Connections != 2 || strings.Count(out.String(), "\n") != 3 {
		t.Fatalf("ramp: %v, %+v\n%s", err, res.Curve, out.String())
	}
}

// TestValidate: every error of the options names the flag at fault and
// is a usage error (ErrOptions); Validate completes the Config.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Port = 0 }, "--port 0: want a TCP port from 1 to 65535"},
		{func(o *Options) { o.Pipeline, o.Given["pipeline"] = 0, true }, "--pipeline 0: want 1 to 1048576"},
		{func(o *Options) { o.URI, o.Given["uri"], o.Given["host"] = "redis://x", true, true }, "--uri and --host cannot be used together"},
		{func(o *Options) { o.WarmupSpec = "soon" }, `--warmup "soon"`},
		{func(o *Options) { o.Rates, o.Given["rates"] = "50%", true; o.Output = output.FormatCSV }, "--output csv: --rates/--slo print text or json"},
		{func(o *Options) { o.SegmentSpec = "3/3" }, "--segment"},
		{func(o *Options) { o.LoadJSON, o.Given = "{}", map[string]bool{"load-json": true, "pipeline": true} }, "--load-json and --pipeline cannot be used together"},
		{func(o *Options) { o.LoadJSON, o.Given = `{"addr": 1}`, map[string]bool{"load-json": true} }, "--load-json (inline)"},
		{func(o *Options) { o.ReplayLoops, o.Given["replay-loops"] = 2, true }, "--replay-loops needs --replay"},
		{func(o *Options) { o.ProfilePID = 2147483646 }, "--profile-pid 2147483646: no process"},
	} {
		o := options("127.0.0.1", 6379)
		tc.set(&o)
		err := o.Validate()
		if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want a usage error naming %q", err, tc.want)
		}
	}
	o := options("127.0.0.1", 7000, "warmup", "value-size")
	o.WarmupSpec, o.ValueSizeSpec = "250", "0"
	if err := o.Validate(); err != nil || o.Config.Addr != "127.0.0.1:7000" || o.Config.WarmupRequests != 250 || o.Config.ValueSize != 0 {
		t.Errorf("Validate: %v, config %+v", err, o.Config)
	}
}

// TestLoadJSON: an agent given the load as JSON runs that load; the
// flags of the load cannot go with it, the agent's own can.
func TestLoadJSON(t *testing.T) {
	host, port := startKvstore(t)
	c := loadgen.DefaultConfig()
	c.Addr, c.Mode, c.Requests, c.Keyspace, c.Connections, c.Threads, c.Seed, c.KeyPrefix = net.JoinHostPort(host, strconv.Itoa(port)), loadgen.ModeSet, 800, 800, 2, 1, 5, "agent:"
	doc, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.LoadJSON, o.SegmentSpec, o.Output = "-", "1/2", output.FormatJSON
	o.Given = map[string]bool{"load-json": true, "segment": true, "output": true}
	o.Stdin = bytes.NewReader(doc)
	var out bytes.Buffer
	res, err := Run(context.Background(), o, &out)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Run.Config
	if res.Run.Sets != 400 || got.Segment != 1 || got.Segments != 2 || got.Seed != 5 || got.KeyPrefix != "agent:" || got.Keyspace != 800 {
		t.Errorf("agent 1/2 of %s: %d sets, config %+v", doc, res.Run.Sets, got)
	}
}

// ExampleRun measures a server with the load of "kvbench bench --mode
// get --prefill --verify-get --requests 100000".
func ExampleRun() {
	o := DefaultOptions()
	o.Host, o.Port = "127.0.0.1", 6379
	o.Mode, o.Prefill, o.VerifyGet, o.Requests = loadgen.ModeGet, true, true, 100_000
	o.Given = map[string]bool{"mode": true, "requests": true}
	var report bytes.Buffer
	res, err := Run(context.Background(), o, &report)
	if err == nil {
		_ = res.Run.QPS // also in the report
	}
}
