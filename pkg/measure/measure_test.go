package measure

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func hist(values ...int64) *hdrhistogram.Histogram {
	h := NewHistogram()
	for _, v := range values {
		_ = h.RecordValue(v)
	}
	return h
}

// TestCountsAddEveryField: Add sums every counter, so that a new field of
// Counts needs nothing else to be merged.
func TestCountsAddEveryField(t *testing.T) {
	var a, b Counts
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		va.Field(i).SetInt(int64(i + 1))
		vb.Field(i).SetInt(int64(100 * (i + 1)))
	}
	a.Add(&b)
	for i := range va.NumField() {
		if got, want := va.Field(i).Int(), int64(101*(i+1)); got != want {
			t.Errorf("%s = %d after Add, want %d", va.Type().Field(i).Name, got, want)
		}
	}
}

func TestMergeAndFinish(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	a := Result{
		Counts: Counts{Requests: 100, Sent: 100, Sets: 100, Reconnects: 1}, Errors: map[string]int64{"ERR": 1},
		Start: t0, End: t0.Add(time.Second), Elapsed: time.Second,
		Histogram: hist(1000, 2000),
		Commands:  []Command{{Name: "SET", Args: "SET __key__ __data__", Requests: 100, Histogram: hist(1000)}},
		Nodes:     []Node{{Addr: "127.0.0.1:1", Role: "master", Slots: 10, Requests: 100, Moved: 2, Histogram: hist(1000)}},
		Warnings:  []error{errors.New("a")},
	}
	b := Result{
		Counts: Counts{Requests: 300, Sent: 300, Sets: 300, Reconnects: 2}, Errors: map[string]int64{"ERR": 2, "WRONGTYPE": 1},
		Start: t0.Add(500 * time.Millisecond), End: t0.Add(2 * time.Second), Elapsed: 1500 * time.Millisecond,
		Histogram: hist(3000),
		Commands:  []Command{{Name: "SET", Args: "SET __key__ __data__", Requests: 300, Errors: 3, Histogram: hist(3000)}},
		Nodes: []Node{
			{Addr: "127.0.0.1:2", Role: "master", Slots: 5, Requests: 200, Histogram: hist(3000)},
			{Addr: "127.0.0.1:1", Role: "master", Slots: 10, Requests: 100, Ask: 1, Histogram: hist(3000)},
		},
	}
	var m Result
	for _, r := range []*Result{&a, &b} {
		if err := m.Merge(r); err != nil {
			t.Fatal(err)
		}
	}
	m.Finish()
	if m.Requests != 400 || m.Reconnects != 3 || m.Errors["ERR"] != 3 || m.Errors["WRONGTYPE"] != 1 {
		t.Errorf("counts %+v errors %v", m.Counts, m.Errors)
	}
	if !m.Start.Equal(t0) || !m.End.Equal(t0.Add(2*time.Second)) || m.Elapsed != 2*time.Second {
		t.Errorf("window %v to %v (%v), want the union", m.Start, m.End, m.Elapsed)
	}
	if m.QPS != 200 || m.UsPerOp != 5000 {
		t.Errorf("QPS %v, us/op %v; want 200, 5000", m.QPS, m.UsPerOp)
	}
	if m.Histogram.TotalCount() != 3 || m.Latency.Max != 3 {
		t.Errorf("histogram count %d, max %v µs", m.Histogram.TotalCount(), m.Latency.Max)
	}
	if len(m.Commands) != 1 || m.Commands[0].Requests != 400 || m.Commands[0].Errors != 3 || m.Commands[0].QPS != 200 {
		t.Errorf("commands %+v", m.Commands)
	}
	if len(m.Nodes) != 2 || m.Nodes[0].Addr != "127.0.0.1:1" || m.Nodes[0].Requests != 200 || m.Nodes[0].Moved != 2 || m.Nodes[0].Ask != 1 {
		t.Errorf("nodes %+v", m.Nodes)
	}
	if len(m.Warnings) != 1 {
		t.Errorf("warnings %v", m.Warnings)
	}
}

func TestFinishEmpty(t *testing.T) {
	var r Result
	r.Finish()
	if r.QPS != 0 || r.UsPerOp != 0 || r.Measured() || r.Histogram == nil || r.Errors == nil {
		t.Errorf("empty result finished as %+v", r)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 123)
	r := Result{
		Counts: Counts{Requests: 10, Sent: 10, Gets: 10, Misses: 1, Reconnects: 4}, Errors: map[string]int64{"ERR": 1},
		Shards: 3, Start: t0, End: t0.Add(time.Second), Elapsed: time.Second,
		Histogram: hist(1500, 2500), SendLag: hist(10),
		Commands: []Command{{Name: "GET", Args: "GET __key__", Requests: 10, Histogram: hist(1500)}},
		Nodes:    []Node{{Addr: "127.0.0.1:7000", Role: "master", Slots: 16384, Requests: 10, Histogram: hist(2500)}},
		Warnings: []error{errors.New("behind schedule")},
	}
	r.Finish()
	b, err := Encode(&r, Field{"seed", 42})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reconnects":4`, `"qps":10`, `"latency_us":{`, `"send_lag_us":{`, `"seed":42`, `"latency_histogram":"HIST`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	var got Result
	var seed int64
	if err := Decode(b, &got, []Field{{"seed", &seed}}); err != nil {
		t.Fatal(err)
	}
	if seed != 42 || got.Counts != r.Counts || got.Shards != 3 || got.Elapsed != time.Second ||
		!got.Start.Equal(t0) || got.QPS != r.QPS || got.Latency != r.Latency || got.SendLagLatency != r.SendLagLatency ||
		got.Histogram.TotalCount() != 2 || got.Commands[0].Histogram.TotalCount() != 1 || got.Nodes[0].Latency != r.Nodes[0].Latency ||
		len(got.Warnings) != 1 {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	// The same through encoding/json, as a field of a larger document.
	var via Result
	b2, _ := json.Marshal(r)
	if err := json.Unmarshal(b2, &via); err != nil || via.Counts != r.Counts {
		t.Errorf("json.Marshal round trip: %v %+v", err, via.Counts)
	}
}

// TestDecodeOldAgent: an agent's document written before the counters
// the measurement has now still decodes, and its figures are derived as
// it reported them.
func TestDecodeOldAgent(t *testing.T) {
	b, err := os.ReadFile("../../testdata/agents/agent-0.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	var settings json.RawMessage
	var seed int64
	if err := Decode(b, &r, []Field{{"settings", &settings}, {"seed", &seed}}); err != nil {
		t.Fatal(err)
	}
	if r.Requests != 343696 || r.Sets+r.Gets != r.Requests || r.Reconnects != 0 || seed != 42 || len(settings) == 0 {
		t.Errorf("decoded %+v, seed %d", r.Counts, seed)
	}
	if r.UsPerOp != 2.91 || r.Latency.P99 != 201.86 || int(r.QPS) != 343683 {
		t.Errorf("figures %v us/op, p99 %v, QPS %v; want those the agent reported", r.UsPerOp, r.Latency.P99, r.QPS)
	}
}

func TestDecodeErrors(t *testing.T) {
	good, _ := Encode(&Result{Histogram: hist(1)})
	wide := hdrhistogram.New(1, 1<<62, 5)
	wideEnc, _ := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	for _, tc := range []struct{ name, doc, want string }{
		{"not an object", `[1]`, "cannot unmarshal"},
		{"null", `null`, "not a JSON object"},
		{"unknown field", strings.Replace(string(good), `"requests"`, `"requestz"`, 1), `unknown field "requestz"`},
		{"bad histogram", strings.Replace(string(good), `"latency_histogram":"`, `"latency_histogram":"xx`, 1), "latency_histogram"},
		{"wide histogram", strings.Replace(string(good), `"latency_histogram":"`, `"latency_histogram":"`+string(wideEnc)+`@`, 1), "latency_histogram"},
		{"wide histogram alone", `{"latency_histogram":"` + string(wideEnc) + `"}`, "at most"},
		{"bad command", `{"commands":[{"command":"GET","nope":1}]}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			err := Decode([]byte(tc.doc), &r, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzDecode: no document, however hostile, makes Decode panic or
// allocate a histogram wider than the measurements'. (Encoding is left
// out: zlib's compression under the fuzzer's instrumentation runs at a
// few inputs a second.)
func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/agents/agent-1.json"); err == nil {
		f.Add(b)
	}
	r := Result{Histogram: hist(1, 2, 3), Commands: []Command{{Name: "GET", Histogram: hist(5)}}, Nodes: []Node{{Addr: "a:1"}}}
	r.Finish()
	good, _ := Encode(&r, Field{"seed", 1})
	f.Add(good)
	f.Add([]byte(`{"latency_histogram":"HISTFAAAAB"}`))
	f.Add([]byte(`{"requests":-1,"elapsed_s":-1e308}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Result
		var seed int64
		if err := Decode(b, &r, []Field{{"seed", &seed}}); err != nil {
			return
		}
		if h := r.Histogram; h.HighestTrackableValue() > HistMax || h.SignificantFigures() > HistDigits {
			t.Fatalf("accepted a histogram of %d at %d digits", h.HighestTrackableValue(), h.SignificantFigures())
		}
	})
}

// TestSeriesMergeAndJSON: series merge point by point (by start), parts by
// name, and survive the JSON form, which gives each point its place in
// the window and its QPS.
func TestSeriesMergeAndJSON(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	pt := func(at time.Duration, n int64, lat ...int64) Point {
		p := Point{Start: t0.Add(at), Requests: n, Histogram: NewIntervalHistogram()}
		for _, v := range lat {
			_ = p.Histogram.RecordValue(v)
		}
		p.Commands = []PointPart{{Name: "GET", Requests: n, Histogram: NewIntervalHistogram()}}
		return p
	}
	a := Result{Start: t0.Add(500 * time.Millisecond), End: t0.Add(2500 * time.Millisecond), Elapsed: 2 * time.Second,
		Counts: Counts{Requests: 30}, Histogram: hist(1),
		Series: &Series{Interval: time.Second, Points: []Point{pt(0, 10, 1000), pt(time.Second, 10), pt(2*time.Second, 10)}}}
	b := Result{Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Elapsed: time.Second,
		Counts: Counts{Requests: 5}, Histogram: hist(1),
		Series: &Series{Interval: time.Second, Points: []Point{pt(time.Second, 5, 3000)}}}
	var m Result
	for _, r := range []*Result{&a, &b} {
		if err := m.Merge(r); err != nil {
			t.Fatal(err)
		}
	}
	m.Finish()
	if len(m.Series.Points) != 3 || m.Series.Points[1].Requests != 15 || m.Series.Points[1].Commands[0].Requests != 15 ||
		m.Series.Points[1].Histogram.TotalCount() != 1 {
		t.Fatalf("merged series %+v", m.Series.Points)
	}
	b2, err := Encode(&m)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Series []struct {
			TS       float64 `json:"t_s"`
			LengthS  float64 `json:"length_s"`
			QPS      float64 `json:"qps"`
			Requests int64   `json:"requests"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b2, &j); err != nil {
		t.Fatal(err)
	}
	// The window is [0.5 s, 2.5 s]: the first point's half is in it.
	if len(j.Series) != 3 || j.Series[0].TS != 0 || j.Series[0].LengthS != 0.5 || j.Series[0].QPS != 20 || j.Series[1].TS != 0.5 || j.Series[1].QPS != 15 {
		t.Errorf("JSON series %+v", j.Series)
	}
	var back Result
	if err := Decode(b2, &back, nil); err != nil {
		t.Fatal(err)
	}
	if back.Series == nil || len(back.Series.Points) != 3 || back.Series.Interval != time.Second || back.Series.Points[1].Requests != 15 ||
		back.Series.Points[1].Commands[0].Name != "GET" {
		t.Errorf("decoded series %+v", back.Series)
	}
	if err := (&Series{Interval: time.Second}).Merge(&Series{Interval: time.Minute}); err == nil {
		t.Error("series of other intervals merged")
	}
}
