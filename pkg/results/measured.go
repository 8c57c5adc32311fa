package results

import (
	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/stats"
)

// Measured fills the row's measured columns from m, a measurement that
// ran to its end or the counts of one cut short: what was measured, its
// figures, counters and whole histogram. The columns that describe the
// attempt (target, settings, server, CPU) are the caller's.
func (r *Row) Measured(m *measure.Result) {
	r.Requests = m.Requests
	r.ElapsedS = m.Elapsed.Seconds()
	r.QPS, r.UsPerOp = m.QPS, m.UsPerOp
	r.setLatency(m.Latency, m.Histogram)
	r.Errors = m.ErrorCount()
	r.Conflicts, r.Misses, r.VerifyFailures = m.Conflicts, m.Misses, m.VerifyFailures
	r.Moved, r.Ask, r.Reconnects = m.Moved, m.Ask, m.Reconnects
	r.Shards = max(r.Shards, m.Shards)
}

// MeasuredCommand fills the row's measured columns from one command's
// share of a mix; its us/op is 1e6/QPS, the time per request the
// command's rate amounts to. The counters it does not have are zero.
func (r *Row) MeasuredCommand(c *measure.Command) {
	r.Requests, r.Errors, r.QPS, r.UsPerOp = c.Requests, c.Errors, c.QPS, 0
	if c.QPS > 0 {
		r.UsPerOp = stats.Round2(1e6 / c.QPS)
	}
	r.setLatency(c.Latency, c.Histogram)
	r.Conflicts, r.Misses, r.VerifyFailures, r.Moved, r.Ask, r.Reconnects = 0, 0, 0, 0, 0, 0
}

func (r *Row) setLatency(l measure.Latency, h *hdrhistogram.Histogram) {
	r.LatP50Us, r.LatP99Us, r.LatP999Us, r.LatMaxUs = l.P50, l.P99, l.P999, l.Max
	r.LatencyHist = ""
	if h != nil && h.TotalCount() > 0 {
		r.LatencyHist = measure.EncodeHistogram(h)
	}
}

// NodeRows are the rows of the nodes CSV for a measurement of a cluster:
// one per master, keyed as row is; none for a single server.
func NodeRows(row *Row, m *measure.Result) []NodeRow {
	var rows []NodeRow
	for _, n := range m.Nodes {
		rows = append(rows, NodeRow{
			RunID: row.RunID, Target: row.Target, Strategy: row.Strategy, Mode: row.Mode,
			Round: row.Round, Attempt: row.Attempt, Node: n.Addr, Slots: n.Slots,
			Requests: n.Requests, QPS: n.QPS, LatP50Us: n.Latency.P50, LatP99Us: n.Latency.P99,
			Moved: n.Moved, Ask: n.Ask,
		})
	}
	return rows
}
