package measure

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestParsePercentiles(t *testing.T) {
	got, err := ParsePercentiles("99.9, 50,99,99.99,50")
	if want := []float64{50, 99, 99.9, 99.99}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParsePercentiles = %v, %v; want %v", got, err, want)
	}
	for _, s := range []string{"", "0", "101", "-1", "x", "50,,99", "NaN"} {
		if _, err := ParsePercentiles(s); err == nil || !strings.Contains(err.Error(), "want a number above 0 and at most 100") {
			t.Errorf("ParsePercentiles(%q) = %v, want an error", s, err)
		}
	}
	for _, p := range []float64{50, 99, 99.9, 99.99, 100, 12.5} {
		k := PercentileKey(p)
		if back, err := ParsePercentileKey(k); err != nil || back != p {
			t.Errorf("ParsePercentileKey(%q) = %v, %v; want %v", k, back, err, p)
		}
	}
	if k := PercentileKey(99.99); k != "p99.99" {
		t.Errorf("PercentileKey(99.99) = %q", k)
	}
}

// TestPercentilesJSON: chosen percentiles appear as "percentiles_us"
// of the whole and of each command, derived from the histograms, beside
// the fixed latency_us; they decode back into the list asked for, and
// survive a merge.
func TestPercentilesJSON(t *testing.T) {
	vals := make([]int64, 0, 10000)
	for i := range int64(10000) {
		vals = append(vals, 1000*(i+1))
	}
	r := Result{
		Counts: Counts{Requests: 10000, Sent: 10000}, Elapsed: 1e9,
		Histogram: hist(vals...),
		Commands:  []Command{{Name: "SET", Args: "SET __key__ __data__", Requests: 10000, Histogram: hist(vals...)}},
	}
	r.Percentiles = []float64{50, 99, 99.9, 99.99}
	r.Finish()
	b, err := Encode(&r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Latency     map[string]float64 `json:"latency_us"`
		Percentiles map[string]float64 `json:"percentiles_us"`
		Commands    []struct {
			Percentiles map[string]float64 `json:"percentiles_us"`
		} `json:"commands"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Percentiles {
		k := PercentileKey(p)
		want := Micros(r.Histogram.ValueAtQuantile(p))
		if doc.Percentiles[k] != want || doc.Commands[0].Percentiles[k] != want {
			t.Errorf("%s: %v and command's %v, want %v", k, doc.Percentiles[k], doc.Commands[0].Percentiles[k], want)
		}
	}
	if len(doc.Percentiles) != 4 || doc.Percentiles["p99.99"] <= doc.Percentiles["p99.9"] {
		t.Errorf("percentiles_us %v", doc.Percentiles)
	}
	if doc.Latency["p999"] != r.Latency.P999 {
		t.Errorf("latency_us changed: %v", doc.Latency)
	}
	var got Result
	if err := Decode(b, &got, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Percentiles, r.Percentiles) || !slices.Equal(got.Commands[0].Percentiles, r.Percentiles) {
		t.Errorf("decoded percentiles %v, command's %v", got.Percentiles, got.Commands[0].Percentiles)
	}
	var merged Result
	if err := merged.Merge(&got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(merged.Percentiles, r.Percentiles) {
		t.Errorf("merged percentiles %v", merged.Percentiles)
	}
	// Without percentiles asked for, no key; an empty histogram has none.
	plain := r
	plain.Percentiles = nil
	if b, _ := Encode(&plain); strings.Contains(string(b), "percentiles_us") {
		t.Errorf("percentiles_us without percentiles: %s", b)
	}
	if m := PercentilesOf(NewHistogram(), r.Percentiles); m != nil {
		t.Errorf("percentiles of an empty histogram: %v", m)
	}
	if err := Decode([]byte(`{"percentiles_us":{"q50":1}}`), &got, nil); err == nil || !strings.Contains(err.Error(), `percentile "q50"`) {
		t.Errorf("bad key: %v", err)
	}
}
