package persistjob

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
)

// phaseOf builds a measured phase from start, one point per interval of
// iv with n requests at each latency (µs) of lat.
func phaseOf(start time.Time, iv time.Duration, n int64, lat []int64) *measure.Result {
	m := &measure.Result{Start: start, End: start.Add(time.Duration(len(lat)) * iv), Series: &measure.Series{Interval: iv}}
	for i, us := range lat {
		h := measure.NewIntervalHistogram()
		if err := h.RecordValues(us*1000, n); err != nil {
			panic(err)
		}
		m.Series.Points = append(m.Series.Points, measure.Point{Start: start.Add(time.Duration(i) * iv), Requests: n, Histogram: h})
	}
	return m
}

// TestFiguresOf: the series cut at a job's span: p99 and QPS before,
// during and after, and the recovery from the job's end to the first
// interval within 10% of p99 before; not recovered when it never comes
// back, or a job's end is not known.
func TestFiguresOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	iv := 100 * time.Millisecond
	lat := []int64{100, 100, 100, 100, 900, 900, 500, 300, 105, 100}
	m := phaseOf(t0, iv, 100, lat)
	job := Span{Start: t0.Add(420 * time.Millisecond), End: t0.Add(580 * time.Millisecond), Ended: true}
	f := figuresOf(m, []Span{job})
	near := func(x, want float64) bool { return x >= want && x <= want*1.01 } // 2 significant digits
	if !near(f.p99Before, 100) || !near(f.p99During, 900) || !near(f.p99After, 500) {
		t.Errorf("p99 %v / %v / %v, want 100 / 900 / 500", f.p99Before, f.p99During, f.p99After)
	}
	if f.qpsBefore != 1000 || f.qpsDuring != 1000 {
		t.Errorf("qps %v / %v", f.qpsBefore, f.qpsDuring)
	}
	// The job ended at 580 ms; the interval from 800 ms is the first
	// within 10% of 100 µs.
	if !f.recovered || f.recoveryS != 0.22 {
		t.Errorf("recovery %v (recovered %v), want 0.22 s", f.recoveryS, f.recovered)
	}
	// A stopped server: empty intervals after the job hold no latency.
	m.Series.Points = m.Series.Points[:7]
	if f := figuresOf(m, []Span{job}); f.recovered {
		t.Errorf("recovered %v s with no interval back", f.recoveryS)
	}
	job.Ended = false
	if f := figuresOf(phaseOf(t0, iv, 100, lat), []Span{job}); f.recovered {
		t.Error("recovered from a job whose end is not known")
	}
	var row results.Row
	SetColumns(&row, &Run{Job: "bgsave", Spans: []Span{job}, ForkUs: -1, Cow: -1}, m)
	if row.JobS != nil || row.ForkMs != nil || row.CowBytes != nil || row.RSSBeforeBytes != nil || row.P99RecoveryS != nil {
		t.Errorf("figures not known are filled: %+v", row)
	}
	if row.PersistJob != "bgsave" || row.P99BeforeUs == nil || !near(*row.P99BeforeUs, 100) {
		t.Errorf("row %q p99 before %v", row.PersistJob, derefOr(row.P99BeforeUs))
	}
}

// derefOr is *p, or nil for a nil p.
func derefOr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
