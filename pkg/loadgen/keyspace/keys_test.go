package keyspace

import (
	"fmt"
	"math"
	"testing"
)

func TestAppendName(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		n, i   int64
		want   string
	}{
		{"k:", 1, 0, "k:0"},
		{"k:", 10, 9, "k:9"},
		{"k:", 11, 9, "k:09"},
		{"bench:key:", 100_000, 42, "bench:key:00042"},
		{"bench:key:", 1_000_000, 999_999, "bench:key:999999"},
		{"", 1_000_001, 7, "0000007"},
	} {
		s := Spec{Keyspace: tc.n}
		if got := string(s.AppendName(nil, tc.prefix, s.Key(tc.i))); got != tc.want {
			t.Errorf("keyspace %d: key %d named %q, want %q", tc.n, tc.i, got, tc.want)
		}
	}
}

// TestAppendDigits checks the two-digit writer against fmt's padding at
// every width, with values shorter than, as long as and longer than it
// (truncated on the left), after a prefix.
func TestAppendDigits(t *testing.T) {
	values := []uint64{0, 1, 9, 10, 42, 99, 100, 101, 999, 12345, 999_999, 1_000_000, math.MaxUint64}
	for w := range 21 {
		for _, v := range values {
			want := fmt.Sprintf("%020d", v)
			if len(want) > 20 { // MaxUint64 has 20 digits
				want = want[len(want)-20:]
			}
			want = "p:" + want[20-w:]
			if got := string(AppendDigits([]byte("p:"), v, w)); got != want {
				t.Errorf("AppendDigits(%d, %d) = %q, want %q", v, w, got, want)
			}
		}
	}
}

func TestPermIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 4, 5, 10, 17, 1000, 1 << 16, 1<<16 + 3, 99_991} {
		p := newPerm(n, 12345)
		seen := make([]bool, n)
		fixed := 0
		for i := range n {
			v := p.at(i)
			if v >= n || seen[v] {
				t.Fatalf("n=%d: at(%d) = %d: out of range or repeated", n, i, v)
			}
			seen[v] = true
			if v == i {
				fixed++
			}
		}
		if n >= 1000 && fixed > int(n/100) {
			t.Errorf("n=%d: %d fixed points: not a shuffled order", n, fixed)
		}
	}
}

func TestPermDependsOnSeed(t *testing.T) {
	a, b := newPerm(1000, 1), newPerm(1000, 2)
	same := 0
	for i := range uint64(1000) {
		if a.at(i) == b.at(i) {
			same++
		}
	}
	if same > 20 {
		t.Errorf("seeds 1 and 2 agree on %d of 1000 positions", same)
	}
}

func TestZipf(t *testing.T) {
	for _, s := range []float64{0.5, 0.99, 1, 1.5} {
		z := newZipf(1000, s)
		r := Rand(7)
		counts := make([]int, 1001)
		for range 100_000 {
			k := z.sample(&r)
			if k < 1 || k > 1000 {
				t.Fatalf("s=%g: rank %d out of [1, 1000]", s, k)
			}
			counts[k]++
		}
		// P(1)/P(10) = 10^s.
		ratio := float64(counts[1]) / float64(counts[10])
		if want := math.Pow(10, s); ratio < want*0.8 || ratio > want*1.25 {
			t.Errorf("s=%g: count(rank 1)/count(rank 10) = %.2f, want about %.2f", s, ratio, want)
		}
	}
}

// TestKeyGenStriping checks that sequential and permutation connections
// together write each key exactly once per pass.
func TestKeyGenStriping(t *testing.T) {
	for _, pattern := range []Pattern{Sequential, Permutation} {
		for _, conns := range []int{1, 3, 7} {
			cfg := Spec{Keyspace: 100, Pattern: pattern, Seed: 9}
			seen := map[uint64]int{}
			for c := range conns {
				g := NewGen(cfg, c, conns)
				for range 100 / conns {
					seen[g.Next()]++
				}
			}
			for k, n := range seen {
				if n != 1 {
					t.Fatalf("%s, %d connections: key %d chosen %d times", pattern, conns, k, n)
				}
			}
		}
	}
}

func TestKeyGenDeterministic(t *testing.T) {
	for _, pattern := range []Pattern{Random, Sequential, Permutation, Zipf} {
		cfg := Spec{Keyspace: 1000, Pattern: pattern, Zipf: DefaultZipf, Seed: 42}
		a, b := NewGen(cfg, 1, 2), NewGen(cfg, 1, 2)
		cfg.Seed = 43
		c := NewGen(cfg, 1, 2)
		differ := false
		for i := range 200 {
			x, y, z := a.Next(), b.Next(), c.Next()
			if x != y {
				t.Fatalf("%s: same seed differs at %d: %d != %d", pattern, i, x, y)
			}
			differ = differ || x != z
		}
		if !differ && pattern != Sequential {
			t.Errorf("%s: seeds 42 and 43 give the same sequence", pattern)
		}
	}
}
