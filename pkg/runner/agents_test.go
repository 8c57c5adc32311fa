package runner

import (
	"context"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestAgentsRun: with Agents 2 each measurement runs in two agent
// processes of the kvbench binary, and its row is their merge: the exact
// request count, a histogram of every request, the verified reads of the
// prefilled keyspace, the agents' CPU, and the agents column.
func TestAgentsRun(t *testing.T) {
	testutil.RequireRedisServer(t)
	o := runOptions(t)
	o.Targets, o.Strategies, o.Rounds, o.Retries = []string{"redis"}, []string{"none"}, 1, 0
	o.Modes, o.Threads, o.Connections, o.Agents = []string{"set", "get", "mixed"}, 1, 3, 2
	res, _, stderr, err := runQuiet(t, context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	rows := readDetail(t, res)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows {
		h, err := hdrhistogram.Decode([]byte(r.LatencyHist))
		if r.Status != results.StatusOK || r.Agents != 2 || r.Requests != o.Requests || err != nil || h.TotalCount() != o.Requests ||
			r.ClientCPUS <= 0 || r.Misses != 0 || r.VerifyFailures != 0 {
			t.Errorf("%s: status %s, %d agents, %d requests, histogram %v, client CPU %v s, %d misses, %d wrong; want ok, 2, %d, every request",
				r.Mode, r.Status, r.Agents, r.Requests, err, r.ClientCPUS, r.Misses, r.VerifyFailures, o.Requests)
		}
	}
}
