package output

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// TestJSONMatchesText runs once and checks that the JSON report parses
// and carries the same figures as the text report.
func TestJSONMatchesText(t *testing.T) {
	r := testutil.StartRedis(t)
	var text, js bytes.Buffer
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.Requests, cfg.Keyspace, cfg.Seed, cfg.VerifyGet, cfg.Connections, cfg.Threads = r.Addr, loadgen.ModeMixed, 3000, 500, 1234, true, 2, 1
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var j loadgen.Result
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, js.Bytes())
	}
	fields := map[string]string{}
	sc := bufio.NewScanner(&text)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok {
			fields[k] = v
		}
	}
	num := func(k string) float64 {
		f, err := strconv.ParseFloat(strings.Fields(fields[k])[0], 64)
		if err != nil {
			t.Fatalf("text field %q = %q: %v", k, fields[k], err)
		}
		return f
	}
	for _, c := range []struct {
		field string
		json  float64
		tol   float64
	}{
		{"requests", float64(j.Requests), 0},
		{"sets", float64(j.Sets), 0},
		{"gets", float64(j.Gets), 0},
		{"seed", float64(j.Config.Seed), 0},
		{"QPS", j.QPS, 0.01},
		{"avg", j.UsPerOp, 0},
		{"elapsed", j.Elapsed.Seconds(), 0.0005},
		{"conflicts", float64(j.Conflicts), 0},
		{"misses", float64(j.Misses), 0},
		{"verify failures", float64(j.VerifyFailures), 0},
	} {
		if got := num(c.field); got < c.json-c.tol || got > c.json+c.tol {
			t.Errorf("text %s = %v, JSON %v", c.field, got, c.json)
		}
	}
	lat := strings.Fields(fields["latency us"])
	want := []float64{j.Latency.P50, j.Latency.P90, j.Latency.P99, j.Latency.P999, j.Latency.Max}
	for i, w := range want {
		if got, _ := strconv.ParseFloat(lat[2*i+1], 64); got != w {
			t.Errorf("text latency %s = %v, JSON %v", lat[2*i], got, w)
		}
	}
	if j.Requests != 3000 || j.Config.Seed != 1234 || j.Config.Mode != loadgen.ModeMixed || j.Config.KeyPattern != "random" || j.Errors == nil {
		t.Errorf("JSON %+v", j)
	}
}

// TestWriteText: what the text report prints of a run's parts: each
// node's line, the send lag of an open loop, every warning, and the
// per-command table.
func TestWriteText(t *testing.T) {
	res := loadgen.Result{Config: loadgen.DefaultConfig()}
	res.Config.Rate = 1000
	res.Counts = measure.Counts{Requests: 10, Sent: 12, Gets: 10, Reconnects: 1}
	res.Errors = map[string]int64{loadgen.ErrorReconnect: 2}
	res.Elapsed = time.Second
	h := measure.NewHistogram()
	_ = h.RecordValue(1500)
	res.Histogram, res.SendLag = h, h
	res.Nodes = []measure.Node{{Addr: "127.0.0.1:7000", Role: "master", Slots: 16384, Requests: 10, Histogram: h}}
	res.Commands = []measure.Command{{Name: "GET", Args: "GET __key__", Requests: 10, Histogram: h}}
	res.Warnings = []error{errors.New("something to say")}
	res.Finish()
	var text strings.Builder
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nload: 1 connections on ", "open loop at 1000 req/s\n",
		"\nnode 127.0.0.1:7000 (master, 16384 slots): 10 requests, QPS 10.00,",
		"\nsend lag us: p50 1.50 ", "us/op (the schedule: 1e6 / the rate kept; mean latency 1.50 us)\n",
		"\nGET ", "\nwarning: something to say\n", "\nerrors: reconnect=2", "\nreconnects: 1\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestWriteTextReplicas: a single server's run with replicas names them
// on the target line and prints each node's line with its role and no
// slots; a node that got no request has no figures.
func TestWriteTextReplicas(t *testing.T) {
	res := loadgen.Result{Config: loadgen.DefaultConfig()}
	res.Config.Replicas = []string{"127.0.0.1:7001", "127.0.0.1:7002"}
	res.Counts = measure.Counts{Requests: 10, Sent: 10, Sets: 10}
	res.Elapsed = time.Second
	h := measure.NewHistogram()
	_ = h.RecordValue(1500)
	res.Histogram = h
	res.Nodes = []measure.Node{
		{Addr: "127.0.0.1:6379", Role: "master", Requests: 10, Histogram: h},
		{Addr: "127.0.0.1:7001", Role: "replica", Histogram: measure.NewHistogram()},
	}
	res.Finish()
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"target: 127.0.0.1:6379, reads from replicas 127.0.0.1:7001,127.0.0.1:7002\n",
		"\nnode 127.0.0.1:6379 (master): 10 requests, QPS 10.00, latency us p50 1.50  p99 1.50  max 1.50\n",
		"\nnode 127.0.0.1:7001 (replica): 0 requests\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWriteLive: the live line counts a run's requests and, once a
// cluster's slot has moved under it, the redirects it followed.
func TestWriteLive(t *testing.T) {
	var b strings.Builder
	WriteLive(&b, loadgen.Progress{Phase: "run", Done: 500, Total: 1000, Elapsed: time.Second})
	if got := b.String(); !strings.Contains(got, "run: 500/1000 (50%) requests, 1.0 s, 500 req/s") || strings.Contains(got, "redirects") {
		t.Errorf("live line %q", got)
	}
	b.Reset()
	WriteLive(&b, loadgen.Progress{Phase: "run", Done: 500, Elapsed: time.Second, Moved: 3, Ask: 1})
	if got := b.String(); !strings.Contains(got, "; redirects: 3 MOVED, 1 ASK") {
		t.Errorf("live line %q: want the redirects", got)
	}
}
