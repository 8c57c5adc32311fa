package status

import (
	"testing"
	"time"
)

// TestDuration: durations rounded for people, to the millisecond below a
// second, to a tenth below ten, to the second below an hour, then hours
// and minutes.
func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{40*time.Millisecond + 300*time.Microsecond, "40ms"},
		{999 * time.Millisecond, "999ms"},
		{1234 * time.Millisecond, "1.2s"},
		{45*time.Second + 400*time.Millisecond, "45s"},
		{200 * time.Second, "3m20s"},
		{time.Hour + 5*time.Minute + 20*time.Second, "1h05m"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %s, want %s", tt.d, got, tt.want)
		}
	}
}

// TestThousands: counts rounded to a whole number, with comma separators.
func TestThousands(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 999.4: "999", 999.5: "1,000", 1234567: "1,234,567"} {
		if got := Thousands(x); got != want {
			t.Errorf("Thousands(%v) = %s, want %s", x, got, want)
		}
	}
}
