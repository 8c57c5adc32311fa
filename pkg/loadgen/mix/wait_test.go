package mix

import (
	"slices"
	"testing"
)

// TestWaitDue: Waits WAITs per Writes writes, spread evenly over each
// Writes writes.
func TestWaitDue(t *testing.T) {
	for _, c := range []struct {
		waits, writes int
		want          []int64 // the writes a WAIT follows, of the first 20
	}{
		{1, 10, []int64{10, 20}},
		{3, 10, []int64{4, 7, 10, 14, 17, 20}},
		{1, 1, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
	} {
		w := Wait{Waits: c.waits, Writes: c.writes}
		var got []int64
		for n := int64(1); n <= 20; n++ {
			if w.Due(n) {
				got = append(got, n)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%d:%d: after writes %v, want %v", c.waits, c.writes, got, c.want)
		}
	}
	if got := ModeCommands("mixed", "SET", "GET", 30); len(got) != 2 || got[0].Ratio != 30 || got[1].Ratio != 70 || got[1].Args[0] != "GET" {
		t.Errorf("mixed 30%%: %+v", got)
	}
	if got := ModeCommands("set", "RSET", "RGET", 50); len(got) != 1 || got[0].String() != "RSET __key__ __data__" {
		t.Errorf("set: %+v", got)
	}
}
