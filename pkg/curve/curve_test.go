package curve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/resp"
)

func TestParseRates(t *testing.T) {
	got, err := ParseRates("20000, 25%,50.5%,100%")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rate{{20000, false}, {0.25, true}, {0.505, true}, {1, true}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := got[1].Resolve(80000); r != 20000 || got[1].String() != "25%" {
		t.Errorf("25%% of 80000 = %g (%s)", r, got[1])
	}
	for _, bad := range []string{"0", "-5", "120%", "", "1,,2", "abc", "5%%", "NaN", "Inf", "0%"} {
		if _, err := ParseRates(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseRates(%q) = %v: want a syntax error", bad, err)
		}
	}
}

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("p99<1ms, p99.9<5ms,max<20ms,P50<200us")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "p99<1ms,p999<5ms,max<20ms,p50<200µs" {
		t.Errorf("String() = %q", got)
	}
	ok := measure.Latency{P50: 150, P99: 900, P999: 4000, Max: 19000}
	if !s.Met(ok) {
		t.Errorf("%v not met by %+v", s, ok)
	}
	for _, l := range []measure.Latency{{P50: 150, P99: 1000, P999: 4000, Max: 19000}, {P50: 150, P99: 900, P999: 4000, Max: 25000}} {
		if s.Met(l) {
			t.Errorf("%v met by %+v", s, l)
		}
	}
	for _, bad := range []string{"p99<", "p99", "p98<1ms", "p99<-1ms", "p99<1", "<1ms", "p99<1ms,", "p99>1ms"} {
		if _, err := ParseSLO(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseSLO(%q) = %v: want a syntax error", bad, err)
		}
	}
}

// queue is a model of a server of capacity cap requests per second: its
// p99 grows as 1/(1 - load), as a queue's does.
func queue(capacity, base float64) Measure {
	return func(_ context.Context, rate float64) (loadgen.Result, error) {
		var r loadgen.Result
		if rate == 0 {
			r.QPS, r.Latency = capacity, measure.Latency{P50: base, P99: 10 * base}
			return r, nil
		}
		load := rate / capacity
		p99 := base / math.Max(1-load, 1e-3)
		r.QPS = math.Min(rate, capacity)
		r.Latency = measure.Latency{P50: base, P99: p99, P999: 2 * p99, Max: 3 * p99}
		return r, nil
	}
}

// TestSearchModel: against a model whose capacity at the objective is
// known, the search brackets it within its precision in a few steps, and
// reports an objective met nowhere as not found, never as 0 req/s.
func TestSearchModel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		capacity, base float64
		slo            string
	}{
		{100_000, 50, "p99<1ms"},  // p99 = 50/(1-x) < 1000 below x = 0.95
		{100_000, 200, "p99<1ms"}, // below x = 0.8
		{20_000, 100, "p99<500us"},
	} {
		slo, _ := ParseSLO(tc.slo)
		limit := float64(slo[0].Limit.Microseconds())
		want := tc.capacity * (1 - tc.base/limit)
		c, err := Search(ctx, slo, tc.capacity, queue(tc.capacity, tc.base), SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Steps) > 8 || c.QPS > want || c.QPS < 0.9*want || (c.Hi-c.Lo)/c.Hi > DefaultPrecision {
			t.Errorf("%+v: capacity %.0f in %d steps, bracket [%.0f, %.0f]; want %.0f within 10%% in at most 8",
				tc, c.QPS, len(c.Steps), c.Lo, c.Hi, want)
		}
		for _, s := range c.Steps {
			if s.Met != (s.Rate < want) {
				t.Errorf("step at %.0f met %v; the capacity is %.0f", s.Rate, s.Met, want)
			}
		}
	}
	slo, _ := ParseSLO("p99<10us")
	c, err := Search(ctx, slo, 100_000, queue(100_000, 50), SearchOptions{MaxSteps: 5})
	if err != nil || c.QPS != 0 || len(c.Steps) != 5 || len(c.Warnings) == 0 || c.JSON().QPS != nil {
		t.Errorf("an objective met nowhere: %+v, %v", c, err)
	}
}

// slowServer is a RESP server of known capacity: its requests, over all
// its connections, are served one after the other, each taking cost of a
// virtual clock (a request is answered at the later of its arrival and
// the previous one's end, plus cost), so that its capacity is 1/cost
// whatever else the machine runs; each is answered +OK.
func slowServer(t *testing.T, cost time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var free time.Time // when the server is next free
	var conns sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				r := resp.NewReader(c, resp.Limits{})
				w := bufio.NewWriter(c)
				for {
					_, ok, err := r.Next()
					if err != nil {
						return
					}
					if !ok { // all that arrived is answered: send, then read
						if w.Flush() != nil || r.Fill() != nil {
							return
						}
						continue
					}
					mu.Lock()
					now := time.Now()
					if free.Before(now) {
						free = now
					}
					free = free.Add(cost)
					due := free
					mu.Unlock()
					time.Sleep(time.Until(due))
					w.WriteString("+OK\r\n")
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestCurveOnSlowServer: against a server of known capacity, a sweep's
// points well below it are held within 5% of their rates, and the search
// brackets a capacity at or below the closed-loop peak in at most 8 steps.
func TestCurveOnSlowServer(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a dozen open-loop phases")
	}
	addr := slowServer(t, 50*time.Microsecond) // 20,000 requests per second at most
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.SetCmd = addr, loadgen.ModeSet, "SET"
	cfg.Connections, cfg.Threads, cfg.Pipeline, cfg.Requests, cfg.Keyspace = 16, 1, 4, 4000, 4000
	cfg.Interval = 0
	ctx := context.Background()
	var span time.Duration
	m := func(ctx context.Context, rate float64) (loadgen.Result, error) {
		c := cfg
		c.Rate = rate
		if rate > 0 {
			c.Requests = PhaseRequests(c.Requests, rate, span)
		}
		return loadgen.Run(ctx, c)
	}
	peak, err := Peak(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	span = 200 * time.Millisecond
	t.Logf("closed-loop peak %.0f req/s", peak.QPS)
	if peak.QPS > 21_000 {
		t.Fatalf("peak %.0f req/s above the server's capacity", peak.QPS)
	}
	rates, _ := ParseRates("25%,50%")
	points, err := Sweep(ctx, rates, peak.QPS, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if got := p.Result.QPS; math.Abs(got-p.Rate) > HeldWithin*p.Rate || !p.Held {
			t.Errorf("at %.0f req/s: %.0f req/s measured, held %v", p.Rate, got, p.Held)
		}
	}
	slo, _ := ParseSLO("p99<20ms")
	c, err := Search(ctx, slo, peak.QPS, m, SearchOptions{MaxSteps: 8})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range c.Steps {
		steps = append(steps, fmt.Sprintf("%.0f/s p99 %.0f us", s.Rate, s.Result.Latency.P99))
	}
	t.Logf("capacity %.0f in %d steps [%.0f, %.0f]: %s", c.QPS, len(c.Steps), c.Lo, c.Hi, strings.Join(steps, "; "))
	if c.QPS <= 0 || c.QPS > peak.QPS || len(c.Steps) > 8 {
		t.Errorf("capacity %.0f in %d steps, peak %.0f", c.QPS, len(c.Steps), peak.QPS)
	}
	for _, s := range c.Steps {
		if s.Met != slo.Met(s.Result.Latency) {
			t.Errorf("step at %.0f: met %v for %+v", s.Rate, s.Met, s.Result.Latency)
		}
	}
}

// TestRampCounts: the staircase climbs by its step and ends at its cap,
// also when the steps do not land on it; a bad staircase is refused.
func TestRampCounts(t *testing.T) {
	for _, tc := range []struct {
		r    Ramp
		want []int
	}{
		{Ramp{1, 2, 5}, []int{1, 3, 5}},
		{Ramp{1, 4, 10}, []int{1, 5, 9, 10}},
		{Ramp{10, 10, 30}, []int{10, 20, 30}},
		{Ramp{5, 1, 5}, []int{5}},
		{Ramp{3, 100, 4}, []int{3, 4}},
	} {
		if got := tc.r.Counts(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%+v: %v; want %v", tc.r, got, tc.want)
		}
	}
	for _, r := range []Ramp{{0, 1, 5}, {1, 0, 5}, {6, 1, 5}} {
		if err := r.Validate(); err == nil || r.Counts() != nil {
			t.Errorf("%+v: error %v, counts %v; want refused", r, err, r.Counts())
		}
		if _, err := r.Sweep(context.Background(), nil); err == nil {
			t.Errorf("%+v: swept", r)
		}
	}
}

// TestRampSweep: against a real server, one point per step with the
// step's connections, in a closed loop (no rate, kept and held); the
// sweep stops at the first failing step and returns the steps before it.
func TestRampSweep(t *testing.T) {
	addr := slowServer(t, 0)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.SetCmd = addr, loadgen.ModeSet, "SET"
	cfg.Threads, cfg.Pipeline, cfg.Requests, cfg.Keyspace, cfg.Interval = 1, 4, 2000, 2000, 0
	var dialled []int
	m := func(ctx context.Context, n int) (loadgen.Result, error) {
		c := cfg
		c.Connections = n
		dialled = append(dialled, n)
		if n == 3 {
			return loadgen.Result{}, errors.New("refused")
		}
		return loadgen.Run(ctx, c)
	}
	points, err := Ramp{Start: 1, Step: 1, Max: 4}.Sweep(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), "3 connections: refused") {
		t.Errorf("error %v; want the third step's", err)
	}
	if len(points) != 2 || fmt.Sprint(dialled) != "[1 2 3]" {
		t.Fatalf("%d points after steps %v; want 2 after [1 2 3]", len(points), dialled)
	}
	for i, p := range points {
		j := p.JSON(false)
		if p.Connections != i+1 || p.Result.Config.Connections != i+1 || p.Rate != 0 || p.Result.Requests != 2000 ||
			j.Connections != i+1 || j.Rate != 0 || j.SendLagP99Us != nil || j.Kept != nil || j.Held != nil {
			t.Errorf("step %d: %+v, json %+v", i, p, j)
		}
	}
}
