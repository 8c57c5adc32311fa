package runner

import (
	"context"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// sumMeter adds up what an attempt's meter was given.
type sumMeter struct {
	mu                  sync.Mutex
	intervals, requests int64
	done                []int64 // each Done's requests
}

func (m *sumMeter) Interval(p measure.Point) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.intervals++
	m.requests += p.Requests
}

func (m *sumMeter) Done(r *measure.Result) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = append(m.done, r.Requests)
}

// TestRunMeter: Options.Meter gets each attempt's target, strategy and
// mode, sees its measured phase by interval (not the prefill), and the
// intervals add up to the attempt's row.
func TestRunMeter(t *testing.T) {
	o := runOptions(t)
	o.Targets, o.Strategies, o.Modes = []string{"kvstore"}, []string{"nopersist"}, []string{"set", "get"}
	o.SetCmd, o.GetCmd, o.Rounds = "SET", "GET", 1
	var mu sync.Mutex
	meters := map[[3]string]*sumMeter{}
	o.Meter = func(target, strategy, what string, cfg loadgen.Config) AttemptMeter {
		mu.Lock()
		defer mu.Unlock()
		m := &sumMeter{}
		if cfg.Mode != loadgen.Mode(what) {
			t.Errorf("%s: the load's mode is %s", what, cfg.Mode)
		}
		meters[[3]string{target, strategy, what}] = m
		return m
	}
	res, _, _, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkClean(t, o)
	rows := readDetail(t, res)
	if len(rows) != 2 || len(meters) != 2 {
		t.Fatalf("%d rows, %d meters (%v), want 2 of each", len(rows), len(meters), meters)
	}
	for _, r := range rows {
		m := meters[[3]string{r.Target, r.Strategy, r.Mode}]
		if m == nil {
			t.Errorf("no meter for %s/%s/%s", r.Target, r.Strategy, r.Mode)
			continue
		}
		if m.intervals == 0 || m.requests != r.Requests || len(m.done) != 1 || m.done[0] != r.Requests {
			t.Errorf("%s: %d intervals holding %d requests, Done %v; the row %d requests", r.Mode, m.intervals, m.requests, m.done, r.Requests)
		}
	}
}
