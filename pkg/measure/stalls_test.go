package measure

import (
	"testing"
	"time"
)

// window makes a result measured from start to end whose series has one
// point per 100 ms interval, with the given requests per interval (from
// the interval holding start).
func window(start, end time.Time, requests ...int64) *Result {
	const iv = 100 * time.Millisecond
	r := &Result{Start: start, End: end, Elapsed: end.Sub(start), Series: &Series{Interval: iv}}
	for i, n := range requests {
		r.Series.Points = append(r.Series.Points, Point{Start: start.Truncate(iv).Add(time.Duration(i) * iv), Requests: n})
	}
	return r
}

func TestStallsPartialEdges(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	start := t0.Add(78 * time.Millisecond) // the first interval is 22 ms of the window
	for _, c := range []struct {
		name     string
		end      time.Time
		requests []int64
		count    int
		at       time.Duration
		longest  time.Duration
	}{
		// A start-up interval whose connections had not yet answered: no stall.
		{"slow start", t0.Add(1000 * time.Millisecond), []int64{1, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 0, 0, 0},
		// A stall in full intervals is one, wherever it is.
		{"stall", t0.Add(1000 * time.Millisecond), []int64{220, 1000, 1000, 0, 0, 1000, 1000, 1000, 1000, 1000}, 1, 222 * time.Millisecond, 200 * time.Millisecond},
		// A stall that began in the partial first interval includes it.
		{"stall from the start", t0.Add(1000 * time.Millisecond), []int64{0, 0, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 1, 0, 222 * time.Millisecond},
		// A partial last interval continues a stall, but alone is none.
		{"stall to the end", t0.Add(1030 * time.Millisecond), []int64{220, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 0, 0, 0}, 1, 722 * time.Millisecond, 230 * time.Millisecond},
		{"short last interval", t0.Add(1030 * time.Millisecond), []int64{220, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1}, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := window(start, c.end, c.requests...)
			r.FindStalls(DefaultStallBelow, 0)
			st := r.Stalls
			if st == nil || st.Count != c.count {
				t.Fatalf("stalls %+v, want %d", st, c.count)
			}
			if c.count > 0 && (st.At[0] != c.at || st.Longest != c.longest) {
				t.Errorf("stall at %v lasting %v, want at %v lasting %v", st.At[0], st.Longest, c.at, c.longest)
			}
		})
	}
}
