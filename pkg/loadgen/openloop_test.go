package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/link"
)

// TestOpenLoopSendLag checks that an open-loop run records every
// request's send lag, reports it in text and JSON, and keeps its schedule
// in aggregate, through each of the worker's wait paths.
func TestOpenLoopSendLag(t *testing.T) {
	tg := redisTarget(t)
	for _, tc := range []struct {
		name                   string
		raw, noPwait2, noStamp bool
	}{
		{"epoll_pwait2", true, false, false},
		{"epoll_pwait2 through the scheduler", false, false, false},
		{"millisecond fallback", true, true, false},
		{"woken by each reply", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link.Raw = tc.raw
			link.NoPwait2.Store(tc.noPwait2)
			stampReceives = !tc.noStamp
			defer func() { link.Raw = true; link.NoPwait2.Store(false); stampReceives = true }()

			// Two connections at 1000/s each for 0.5 s: 500 intended
			// send times each before the deadline, none after it.
			res := run(t, tg, fill(Config{Mode: ModeGet, Load: Load{Rate: 2000, Duration: 500 * time.Millisecond, Connections: 2, Pipeline: 1}}))
			lag := res.SendLag
			if lag == nil {
				t.Fatal("no send lag histogram in an open-loop result")
			}
			if lag.TotalCount() != res.Sent || res.Sent != res.Requests {
				t.Errorf("%d send lags for %d sent, %d replies: want one per request", lag.TotalCount(), res.Sent, res.Requests)
			}
			// A request is dropped only when it is still unsent at the
			// deadline: never more than 1000, and on a machine too loaded
			// to keep up (its send lag says so), fewer; half is a bound
			// the tests' machines keep even with packages running beside.
			if res.Requests > 1000 || res.Requests < 500 {
				t.Errorf("%d requests at 2000/s for 0.5 s, want 500 to 1000 (send lag %+v)", res.Requests, res.SendLag)
			}
			// Latency runs from the same intended time to a later event.
			l, s := res.Latency, res.SendLagLatency
			if s.Max <= 0 || s.P50 > s.P99 || s.P99 > s.Max || l.P50 < s.P50 || l.Max < s.Max {
				t.Errorf("send lag %+v, latency %+v: want ordered percentiles, each latency above its send lag", s, l)
			}

			var js bytes.Buffer
			if err := json.NewEncoder(&js).Encode(res); err != nil {
				t.Fatal(err)
			}
			var j struct {
				SendLag map[string]float64 `json:"send_lag_us"`
			}
			if err := json.Unmarshal(js.Bytes(), &j); err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]float64{"p50": s.P50, "p90": s.P90, "p99": s.P99, "p999": s.P999, "max": s.Max} {
				if got, ok := j.SendLag[k]; !ok || got != want {
					t.Errorf("JSON send_lag_us.%s = %v (present %v), want %v", k, got, ok, want)
				}
			}
		})
	}

	// A closed loop sends each request when it is built: no send lag.
	res := run(t, tg, fill(Config{Mode: ModeGet, Load: Load{Requests: 200, Pipeline: 4}}))
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(res); err != nil {
		t.Fatal(err)
	}
	if res.SendLag != nil || strings.Contains(js.String(), "send_lag_us") {
		t.Errorf("closed loop reports a send lag:\n%s", js.String())
	}
}

// TestOpenLoopBehindSchedule provokes a client that cannot keep its
// schedule: one connection at pipeline 1 asked for a million writes per
// second, against a server that holds writes for 100 ms (CLIENT PAUSE).
func TestOpenLoopBehindSchedule(t *testing.T) {
	tg := redisTarget(t)
	ctx := context.Background()
	if err := tg.client.Do(ctx, "CLIENT", "PAUSE", "100", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	res := run(t, tg, fill(Config{Mode: ModeSet, Load: Load{Rate: 1e6, Requests: 500, Pipeline: 1}}))
	if res.Requests != 500 || res.SendLag.TotalCount() != 500 {
		t.Fatalf("%d requests, %d send lags: want 500 each", res.Requests, res.SendLag.TotalCount())
	}
	// All 500 were due in the first 0.5 ms; the last left after the
	// pause and 499 round trips.
	if res.SendLagLatency.Max < float64(MaxSendLag.Microseconds()) {
		t.Errorf("send lag %+v: want the last request over %v late", res.SendLag, MaxSendLag)
	}
	var warned error
	for _, w := range res.Warnings {
		if errors.Is(w, ErrBehindSchedule) {
			warned = w
		}
	}
	if warned == nil {
		t.Fatalf("warnings %v: want one wrapping ErrBehindSchedule (send lag %+v)", res.Warnings, res.SendLag)
	}
	var js bytes.Buffer
	if err := json.NewEncoder(&js).Encode(res); err != nil {
		t.Fatal(err)
	}
	var j Result
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Warnings) == 0 || j.Warnings[len(j.Warnings)-1].Error() != warned.Error() || j.SendLag == nil || j.SendLagLatency.Max != res.SendLagLatency.Max {
		t.Errorf("JSON warnings %q, send lag %+v: want the warning and the lag", j.Warnings, j.SendLagLatency)
	}
}

// TestOpenLoopSendsDueTogether: the requests that come due while a
// connection waits leave together, in one write, each with its send lag
// counted from its own intended time. The server holds writes (CLIENT
// PAUSE) while the whole schedule comes due, so that every batch after
// the first is as large as the pipeline's free slots, whatever the
// machine's speed.
func TestOpenLoopSendsDueTogether(t *testing.T) {
	tg := redisTarget(t)
	ctx := context.Background()
	const requests, pipeline = 320, 16
	cfg, err := fill(Config{Addr: tg.addr, Mode: ModeSet, Load: Load{Rate: 1e5, Requests: requests, Pipeline: pipeline, Connections: 1}}).Normalize()
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRunner(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if err := tg.client.Do(ctx, "CLIENT", "PAUSE", "100", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	res, err := r.phase(ctx, "run", requests, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != requests || res.SendLag.TotalCount() != requests {
		t.Fatalf("%d replies, %d send lags: want %d each", res.Requests, res.SendLag.TotalCount(), requests)
	}
	// The schedule spans 3.2 ms and the pause 100 ms: a request that left
	// after the pause waited for it, and its lag says so.
	if res.SendLagLatency.Max < 50_000 {
		t.Errorf("send lag %+v: want the last requests about 100 ms late", res.SendLagLatency)
	}
	batches := r.conns[0].batches
	if batches == 0 || batches > requests/4 {
		t.Errorf("%d requests in %d writes: want the due requests sent together (at most %d writes)", requests, batches, requests/4)
	}
	t.Logf("%d requests in %d writes; send lag %+v", requests, batches, res.SendLagLatency)
}
