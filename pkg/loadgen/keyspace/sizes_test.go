package keyspace

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseValueSizes: sizes, ranges and weighted lists parse as
// memtier_benchmark writes them, and a bad entry is named.
func TestParseValueSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []SizeRange
		err  string
	}{
		{"32:60,1024:30,16384:10", []SizeRange{{32, 32, 60}, {1024, 1024, 30}, {16384, 16384, 10}}, ""},
		{"100-200:1, 7:2", []SizeRange{{100, 200, 1}, {7, 7, 2}}, ""},
		{"32", nil, `"32": want SIZE:WEIGHT`},
		{"32:0", nil, `"32:0": want SIZE:WEIGHT`},
		{"32:60,abc:30", nil, `"abc:30": size "abc"`},
		{"64-32:1", nil, `"64-32:1": size "64-32": want a range MIN-MAX`},
		{"1000000000:1", nil, `"1000000000:1": size "1000000000": want a size in bytes`},
	} {
		got, err := ParseValueSizes(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseValueSizes(FormatValueSizes(got)); !reflect.DeepEqual(back, got) {
			t.Errorf("%q: formatted %q parses to %v", tc.in, FormatValueSizes(got), back)
		}
	}
	for in, want := range map[string]int{"0": 0, "32": 32, "32-1024": 1024} {
		if size, _, err := ParseValueSize(in); err != nil || size != want {
			t.Errorf("ParseValueSize(%q) = %d, %v; want %d", in, size, err, want)
		}
	}
}

// FuzzParseValueSizes: the parser never panics, and every size a list it
// accepts gives a key is within one of its ranges.
func FuzzParseValueSizes(f *testing.F) {
	for _, s := range []string{"32:60,1024:30,16384:10", "1-5:3", "x", "1:", ":1", "-1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseValueSizes(s)
		if err != nil {
			return
		}
		if errs := SizeErrors(rs); len(errs) > 0 {
			return // weights too large together: Normalize refuses them
		}
		z := NewSizes(rs, 1)
		for i := range uint64(20) {
			n := z.Of(i)
			ok := false
			for _, r := range rs {
				ok = ok || n >= r.Min && n <= r.Max
			}
			if !ok {
				t.Fatalf("%q: key %d gets size %d, in no range", s, i, n)
			}
		}
	})
}
