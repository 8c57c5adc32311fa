// Package agents spreads one load over several load-generator processes,
// the agents, and merges what they report. Each agent runs one segment of
// the load (loadgen.Config.Segment) and prints its result as JSON (a
// loadgen.Result: the measurement with its whole histograms and window,
// and its settings); Merge merges the measurements (measure.Result.Merge:
// histograms added bucket by bucket, counters summed, per command and per
// node, throughput over the union of the windows) and checks that the
// agents were parts of one load that ran at once. RunLocal starts the
// agents as local processes of the kvbench binary; Job builds the
// Kubernetes Job that runs them in a cluster.
package agents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// MinOverlap is the share of the union of the agents' measured windows
// that their intersection must cover; below it Merge warns (ErrNoOverlap)
// that the agents did not load the server at the same time.
const MinOverlap = 0.9

// Errors wrapped by Merge's warnings and errors.
var (
	// ErrNoOverlap: the agents' windows overlap less than MinOverlap.
	ErrNoOverlap = errors.New("agents' windows overlap too little")
	// ErrSettingsDiffer: the agents ran with different settings.
	ErrSettingsDiffer = errors.New("agents' settings differ")
	// ErrMissing: fewer agents than expected reported.
	ErrMissing = errors.New("agents missing")
)

// Agent is one agent's result, as read from its JSON document.
type Agent struct {
	// Source is where it was read from, "file:line".
	Source string
	// Result is the document decoded; its Error says why the agent's
	// run failed, if it did.
	Result loadgen.Result
}

// Read reads a stream of JSON result documents (kvbench bench --output
// json, one after the other, as "kubectl logs" concatenates them) from r,
// named name in messages. Lines between documents that do not start one
// (a log line, an error message on stderr) are skipped, and each is
// returned as a note naming its line.
func Read(r io.Reader, name string) (agents []Agent, notes []error, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	line := 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		text := bytes.TrimSpace(data[off : off+end])
		if !bytes.HasPrefix(text, []byte("{")) {
			if len(text) > 0 {
				notes = append(notes, fmt.Errorf("%s:%d: skipped, not a JSON result: %.80s", name, line, text))
			}
			off += end + 1
			line++
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(data[off:]))
		var res loadgen.Result
		pos := fmt.Sprintf("%s:%d", name, line)
		if err := dec.Decode(&res); err != nil {
			return nil, notes, fmt.Errorf("%s: %w", pos, err)
		}
		if err := checkCounts(&res); err != nil {
			return nil, notes, fmt.Errorf("%s: %w", pos, err)
		}
		agents = append(agents, Agent{Source: pos, Result: res})
		n := int(dec.InputOffset())
		line += bytes.Count(data[off:off+n], []byte("\n"))
		off += n
		// The rest of the document's last line.
		if rest := bytes.IndexByte(data[off:], '\n'); rest >= 0 && len(bytes.TrimSpace(data[off:off+rest])) == 0 {
			off += rest + 1
			line++
		}
	}
	return agents, notes, nil
}

// checkCounts refuses a result whose counts are negative (measure's
// ErrBadCount): merging it into nothing checks every count Merge sums.
func checkCounts(res *loadgen.Result) error {
	var empty measure.Result
	own := res.Result
	return empty.Merge(&own)
}

// Merged is the merge of the agents' results.
type Merged struct {
	// Result is the whole load's: counters summed, histograms added,
	// Start the earliest start, End the latest end, Elapsed between them
	// and QPS the requests over Elapsed. Its Config is the agents'
	// (the first one's where they differ) as one run: no segment, the
	// threads summed. Its Warnings hold Merge's findings and then each
	// agent's warnings, prefixed with its segment.
	Result loadgen.Result
	// Agents are the agents merged, by segment.
	Agents []Agent
	// Overlap is the intersection of the agents' measured windows over
	// their union, 0 to 1.
	Overlap float64
}

// Merge merges the agents' results. want, when positive, is the number
// of agents expected: the segment count they must have run with, and an
// error wrapping ErrMissing names the segments absent. A segment that
// reports twice is an error too. Windows that overlap less than
// MinOverlap and settings that differ are warnings in the Result.
func Merge(agents []Agent, want int) (Merged, error) {
	if len(agents) == 0 {
		return Merged{}, errors.New("no agent results")
	}
	agents = slices.Clone(agents)
	sort.SliceStable(agents, func(a, b int) bool {
		return agents[a].Result.Config.Segment < agents[b].Result.Config.Segment
	})
	segs := agents[0].Result.Config.Segments
	bySeg := map[int]string{}
	for _, a := range agents {
		c := a.Result.Config
		if c.Segments != segs {
			return Merged{}, fmt.Errorf("%s: segment %d/%d, but %s ran as segment %d/%d: not parts of one load",
				a.Source, c.Segment, c.Segments, agents[0].Source, agents[0].Result.Config.Segment, segs)
		}
		if prev, dup := bySeg[c.Segment]; dup && segs > 1 {
			return Merged{}, fmt.Errorf("segment %d/%d reported twice: %s and %s", c.Segment, segs, prev, a.Source)
		}
		bySeg[c.Segment] = a.Source
	}
	if want > 0 {
		if segs != want && segs > 1 {
			return Merged{}, fmt.Errorf("the agents ran as segments of %d, not of %d", segs, want)
		}
		var missing []string
		for i := range want {
			if _, ok := bySeg[i]; !ok {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		if len(missing) > 0 || (segs <= 1 && len(agents) != want) {
			if len(missing) == 0 {
				return Merged{}, fmt.Errorf("%w: %d results of whole runs, want %d agents", ErrMissing, len(agents), want)
			}
			return Merged{}, fmt.Errorf("%w: %d of %d reported; no result from segment %s", ErrMissing, len(agents), want, strings.Join(missing, ", "))
		}
	}

	m := Merged{Agents: agents}
	r := &m.Result
	r.Config = agents[0].Result.Config
	r.Config.Segment, r.Config.Segments, r.Config.Threads = 0, 1, 0
	var warnings []error
	for _, a := range agents {
		x := a.Result
		r.Config.Threads += x.Config.Threads
		own := x.Result
		own.Warnings = nil // kept below, named by agent
		if err := r.Result.Merge(&own); err != nil {
			return Merged{}, fmt.Errorf("%s: %w", a.Source, err)
		}
		if x.Error != "" {
			warnings = append(warnings, fmt.Errorf("agent %s (%s) failed: %s", segName(x.Config), a.Source, x.Error))
		}
	}
	r.Finish()
	if r.Series != nil {
		r.FindStalls(r.Config.StallBelow, r.Config.StallLatency)
	}
	if r.SendLag != nil {
		if w := loadgen.BehindSchedule(r.SendLagLatency); w != nil {
			warnings = append(warnings, w)
		}
	}

	m.Overlap = overlap(agents)
	if len(agents) > 1 && m.Overlap < MinOverlap {
		starts, ends := spread(agents)
		hint := "start them together with --start-at"
		if ends > starts {
			hint = "with --requests each ends when its share is done: --duration gives them one window"
		}
		warnings = append(warnings, fmt.Errorf("%w: they share %.0f%% of the time from the first start to the last end (want %.0f%%), "+
			"their starts %v apart, their ends %v: the QPS understates what they did at once; %s",
			ErrNoOverlap, 100*m.Overlap, 100*MinOverlap, starts.Round(time.Millisecond), ends.Round(time.Millisecond), hint))
	}
	if diff := settingsDiff(agents); len(diff) > 0 {
		warnings = append(warnings, fmt.Errorf("%w: %s", ErrSettingsDiffer, strings.Join(diff, "; ")))
	}
	for _, a := range agents {
		for _, w := range a.Result.Warnings {
			warnings = append(warnings, fmt.Errorf("agent %s: %w", segName(a.Result.Config), w))
		}
	}
	r.Warnings = warnings
	return m, nil
}

// overlap is the intersection of the agents' windows over their union.
func overlap(agents []Agent) float64 {
	lo, hi := agents[0].Result.Start, agents[0].Result.End // the intersection
	ulo, uhi := lo, hi                                     // the union
	for _, a := range agents[1:] {
		s, e := a.Result.Start, a.Result.End
		if s.After(lo) {
			lo = s
		}
		if e.Before(hi) {
			hi = e
		}
		if s.Before(ulo) {
			ulo = s
		}
		if e.After(uhi) {
			uhi = e
		}
	}
	union := uhi.Sub(ulo)
	if union <= 0 {
		return 1
	}
	return max(0, float64(hi.Sub(lo))/float64(union))
}

// spread returns how far apart the agents' starts and their ends are.
func spread(agents []Agent) (starts, ends time.Duration) {
	s0, s1 := agents[0].Result.Start, agents[0].Result.Start
	e0, e1 := agents[0].Result.End, agents[0].Result.End
	for _, a := range agents[1:] {
		r := a.Result
		if r.Start.Before(s0) {
			s0 = r.Start
		}
		if r.Start.After(s1) {
			s1 = r.Start
		}
		if r.End.Before(e0) {
			e0 = r.End
		}
		if r.End.After(e1) {
			e1 = r.End
		}
	}
	return s1.Sub(s0), e1.Sub(e0)
}

// settingsDiff lists the settings in which an agent differs from the
// first: "value_size: 32 (segment 0) vs 64 (segment 1)". The segment and
// the thread count (one per CPU of each agent) may differ.
func settingsDiff(agents []Agent) []string {
	norm := func(a Agent) map[string]any {
		s := a.Result.Config
		s.Segment, s.Threads = 0, 0
		b, _ := json.Marshal(s)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["seed"] = s.Seed
		return m
	}
	base := norm(agents[0])
	var diff []string
	seen := map[string]bool{}
	for _, a := range agents[1:] {
		m := norm(a)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if fmt.Sprint(m[k]) != fmt.Sprint(base[k]) && !seen[k] {
				seen[k] = true
				diff = append(diff, fmt.Sprintf("%s: %v (segment %d) vs %v (segment %d)",
					k, base[k], agents[0].Result.Config.Segment, m[k], a.Result.Config.Segment))
			}
		}
	}
	return diff
}

func segName(c loadgen.Config) string { return fmt.Sprintf("%d/%d", c.Segment, c.Segments) }

// AgentSummary is one agent's line in the JSON form of a Merged.
type AgentSummary struct {
	Source      string          `json:"source"`
	Segment     int             `json:"segment"`
	Segments    int             `json:"segments"`
	Requests    int64           `json:"requests"`
	QPS         float64         `json:"qps"`
	LatencyUs   measure.Latency `json:"latency_us"`
	StartUnixNs int64           `json:"start_unix_ns"`
	EndUnixNs   int64           `json:"end_unix_ns"`
	Threads     int             `json:"threads"`
	Error       string          `json:"error,omitempty"`
}

// MarshalJSON encodes m as "kvbench merge --output json" prints it: the
// whole load's result as "kvbench bench --output json" writes one, then
// "overlap" and "agents", one AgentSummary each.
func (m Merged) MarshalJSON() ([]byte, error) {
	var sums []AgentSummary
	for _, a := range m.Agents {
		x := a.Result
		s := AgentSummary{
			Source: a.Source, Segment: x.Config.Segment, Segments: x.Config.Segments,
			Requests: x.Requests, QPS: x.QPS, LatencyUs: x.Latency,
			Threads: x.Config.Threads, Error: x.Error,
		}
		if !x.Start.IsZero() {
			s.StartUnixNs, s.EndUnixNs = x.Start.UnixNano(), x.End.UnixNano()
		}
		sums = append(sums, s)
	}
	r := m.Result
	extra := []measure.Field{{Name: "seed", Value: r.Config.Seed}, {Name: "settings", Value: r.Config}}
	if r.Error != "" {
		extra = append(extra, measure.Field{Name: "error", Value: r.Error})
	}
	extra = append(extra, measure.Field{Name: "overlap", Value: m.Overlap}, measure.Field{Name: "agents", Value: sums})
	return measure.Encode(&r.Result, extra...)
}

// WriteJSON writes m as one indented JSON object.
func WriteJSON(w io.Writer, m Merged) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// WriteText writes the whole load's result as "kvbench bench" does, then
// one line per agent: its segment, requests, QPS, p99 and its window
// relative to the earliest start.
func WriteText(w io.Writer, m Merged) error {
	bw := bufio.NewWriter(w)
	if err := output.WriteText(bw, m.Result); err != nil {
		return err
	}
	fmt.Fprintf(bw, "agents: %d, windows overlapping %.1f%%\n", len(m.Agents), 100*m.Overlap)
	for _, a := range m.Agents {
		x := a.Result
		rel := func(t time.Time) float64 { return t.Sub(m.Result.Start).Seconds() }
		fmt.Fprintf(bw, "agent %s: %d requests, QPS %.2f, p99 %.2f us, window +%.3f s to +%.3f s, %d threads (%s)\n",
			segName(x.Config), x.Requests, x.QPS, x.Latency.P99, rel(x.Start), rel(x.End), x.Config.Threads, a.Source)
	}
	return bw.Flush()
}
