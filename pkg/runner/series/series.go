// Package series is an attempt's measured phase per interval ("kvbench
// run --interval"): its rows of the series CSV (Rows), its stalls for the
// detail row (Stalls), and the server's persistence events polled once
// per interval beside it (Poll).
package series

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
	"github.com/kvbench/kvbench/pkg/target"
)

// Stalls is the stall columns of m: how many stalls, and the longest in
// ms; nil when no series was recorded.
func Stalls(m *measure.Result) (count *int64, longestMs *float64) {
	if m.Stalls == nil {
		return nil, nil
	}
	n := int64(m.Stalls.Count)
	ms := float64(m.Stalls.Longest) / float64(time.Millisecond)
	return &n, &ms
}

// seriesCommand is the command the series rows of a mode name: the one
// it sends, or the whole mix for the mixed mode and workloads.
func seriesCommand(cfg loadgen.Config) string {
	if len(cfg.Commands) == 0 {
		switch cfg.Mode {
		case loadgen.ModeSet:
			return cfg.SetCmd
		case loadgen.ModeGet:
			return cfg.GetCmd
		}
	}
	return results.CommandTotal
}

// Rows are the series CSV's rows of an attempt (row its detail row, which
// keys them) whose measurement m ran with cfg: per interval of the
// measured phase, empty ones too, a row of the whole, one per command of a
// mix and one per master of a cluster, each with the events ev saw in its
// interval (ev may be nil).
func Rows(row results.Row, cfg loadgen.Config, m *measure.Result, ev *Events) []results.SeriesRow {
	s := m.Series
	if s == nil || s.Interval <= 0 || m.Start.IsZero() {
		return nil
	}
	iv := int64(s.Interval)
	key := func(t time.Time) int64 { return floorDiv(t.UnixNano(), iv) }
	// The intervals: those of the measured window, and any point outside
	// it (a reply counted just past its end), so that they add up.
	byKey := make(map[int64]*measure.Point)
	var keys []int64
	for i := range s.Points {
		k := key(s.Points[i].Start)
		byKey[k] = &s.Points[i]
		keys = append(keys, k)
	}
	if m.End.After(m.Start) {
		for k := key(m.Start); k*iv < m.End.UnixNano(); k++ {
			if byKey[k] == nil {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)

	base := results.SeriesRow{
		RunID: row.RunID, Target: row.Target, Strategy: row.Strategy, Mode: row.Mode,
		Round: row.Round, Attempt: row.Attempt, Workload: row.Workload,
	}
	whole := seriesCommand(cfg)
	var cmds []string
	for _, c := range cfg.Commands {
		cmds = append(cmds, c.Name)
	}
	var out []results.SeriesRow
	for _, k := range keys {
		p := byKey[k]
		if p == nil {
			p = &measure.Point{Start: time.Unix(0, k*iv)}
		}
		off, length := s.Span(p, m.Start, m.End)
		b := base
		b.TS = off.Round(time.Microsecond).Seconds()
		b.Events = ev.at(k)
		add := func(cmd, node string, requests, errs int64, h *hdrhistogram.Histogram) {
			sr := b
			sr.Command, sr.Node, sr.Requests, sr.Errors = cmd, node, requests, errs
			if length > 0 {
				sr.QPS = ptr(stats.Round2(measure.PerSecond(requests, length)))
			}
			if h != nil && h.TotalCount() > 0 {
				l := measure.Summarize(h)
				sr.P50Us, sr.P99Us, sr.P999Us, sr.MaxUs = ptr(l.P50), ptr(l.P99), ptr(l.P999), ptr(l.Max)
				if cmd == whole && node == "" {
					sr.LatencyHist = measure.EncodeHistogram(h)
				}
			}
			out = append(out, sr)
		}
		if len(cmds) > 1 {
			for _, name := range cmds {
				part := findPart(p.Commands, name)
				add(name, "", part.Requests, part.Errors, part.Histogram)
			}
		}
		add(whole, "", p.Requests, p.Errors, p.Histogram)
		for _, n := range p.Nodes {
			add(whole, n.Name, n.Requests, n.Errors, n.Histogram)
		}
	}
	return out
}

// findPart is the part of ps named name; an empty one when there is none.
func findPart(ps []measure.PointPart, name string) measure.PointPart {
	if i := slices.IndexFunc(ps, func(p measure.PointPart) bool { return p.Name == name }); i >= 0 {
		return ps[i]
	}
	return measure.PointPart{Name: name}
}

func ptr[T any](v T) *T { return &v }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Events are what a server did per interval of an attempt, from its INFO
// persistence polled once per interval (Poll).
type Events struct {
	interval time.Duration
	mu       sync.Mutex
	events   map[int64][]string // by interval index since the Unix epoch
	err      error              // why polling stopped, if it did
	stop     context.CancelFunc
	done     chan struct{}
}

// at is the events cell of interval k.
func (l *Events) at(k int64) string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events[k], results.EventSep)
}

// Mark records event e in every interval that [from, to] meets (the
// persistence job's span). Nothing on nil Events.
func (l *Events) Mark(from, to time.Time, e string) {
	if l == nil || to.Before(from) {
		return
	}
	iv := int64(l.interval)
	for k := floorDiv(from.UnixNano(), iv); k*iv <= to.UnixNano(); k++ {
		l.mark(k, e)
	}
}

// mark records event e in interval k, once.
func (l *Events) mark(k int64, e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.events[k], e) {
		l.events[k] = append(l.events[k], e)
	}
}

// Poll polls the INFO persistence of every master of info once per
// interval, in the middle of each interval of the wall clock, until
// Finish is called, over one control connection per master. An interval
// is marked EventAOFRewrite or EventRDBSave when a poll in it found the
// rewrite or save in progress, EventDelayedFsync when aof_delayed_fsync
// grew since the poll before. Nil when interval is not positive.
func Poll(ctx context.Context, info target.Info, password string, interval time.Duration) *Events {
	if interval <= 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Events{interval: interval, events: make(map[int64][]string), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		if err := l.poll(ctx, info.Masters(), info.Control(password)); err != nil && ctx.Err() == nil {
			l.err = err
		}
	}()
	return l
}

// Finish stops the polling and returns why it stopped early, if it did.
func (l *Events) Finish() error {
	if l == nil {
		return nil
	}
	l.stop()
	<-l.done
	return l.err
}

func (l *Events) poll(ctx context.Context, addrs []string, o control.Options) error {
	var conns []*control.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, a := range addrs {
		c, err := control.Dial(ctx, a, o)
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		conns = append(conns, c)
	}
	iv := int64(l.interval)
	delayed := make([]int64, len(conns))
	for i := range delayed {
		delayed[i] = -1
	}
	for {
		now := time.Now().UnixNano()
		k := floorDiv(now, iv)
		next := k*iv + iv/2
		if next <= now {
			next += iv
			k++
		}
		t := time.NewTimer(time.Duration(next - now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		for i, c := range conns {
			m, err := c.Info(ctx, "persistence")
			if err != nil {
				return fmt.Errorf("%s: INFO persistence: %w", c.Addr(), err)
			}
			if m["aof_rewrite_in_progress"] == "1" {
				l.mark(k, results.EventAOFRewrite)
			}
			if m["rdb_bgsave_in_progress"] == "1" {
				l.mark(k, results.EventRDBSave)
			}
			if d, err := strconv.ParseInt(m["aof_delayed_fsync"], 10, 64); err == nil {
				if delayed[i] >= 0 && d > delayed[i] {
					l.mark(k, results.EventDelayedFsync)
				}
				delayed[i] = d
			}
		}
	}
}
