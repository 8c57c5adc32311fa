package kvstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// zeroTailLog writes, in a new log directory, an incremental file of n SET
// records followed by zeros, as an always log is after a crash (the space
// filled ahead of its records), then edit's changes; it returns the
// directory, the file and where the records end.
func zeroTailLog(t *testing.T, n, zeros int, edit func(data []byte, end int) []byte) (dir, path string, end int) {
	t.Helper()
	dir = t.TempDir()
	var data []byte
	for i := range n {
		data = appendRecord(data, resp.Command{Args: [][]byte{[]byte("SET"), fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i)}})
	}
	end = len(data)
	data = append(data, make([]byte, zeros)...)
	if edit != nil {
		data = edit(data, end)
	}
	path = filepath.Join(dir, incrName(1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeManifest(osFS{}, dir, manifest{incrs: []int{1}}); err != nil {
		t.Fatal(err)
	}
	return dir, path, end
}

// TestZeroTail: the zeros after the records are no record. Alone they are
// unused space; something not zero among them is reported at its own
// offset, after so many zeros, from where the records end, whether it is
// a stray byte or records again after a hole, and even when it is too
// short to read as a request; Repair cuts where the records end and says
// how much of what it drops is zeros.
func TestZeroTail(t *testing.T) {
	const zeros = 1 << 20
	flip := func(at int) func([]byte, int) []byte {
		return func(b []byte, end int) []byte { b[end+at] = 0x01; return b }
	}
	tests := []struct {
		name    string
		edit    func([]byte, int) []byte
		at      int // offset of the damage after the records' end; -1: none
		msg     string
		dropped string
	}{
		{"zeros only", nil, -1, "", ""},
		{"a byte flipped far into the zeros", flip(zeros / 2), zeros / 2,
			fmt.Sprintf("non-zero data in the zero-filled space after the records (byte 0x01, after %d zero bytes from offset", zeros/2),
			fmt.Sprintf("dropping %d bytes: %d of them zeros filled ahead of the records (preallocated space, no data), 1 from the damage on", zeros, zeros-1)},
		{"a byte flipped near the records (too short for a request)", flip(100), 100,
			"non-zero data in the zero-filled space after the records (byte 0x01, after 100 zero bytes from offset",
			fmt.Sprintf("dropping %d bytes: %d of them zeros filled ahead of the records (preallocated space, no data), 1 from the damage on", zeros, zeros-1)},
		{"records again after a hole", func(b []byte, end int) []byte {
			rec := appendRecord(nil, resp.Command{Args: [][]byte{[]byte("SET"), []byte("late"), []byte("x")}})
			copy(b[end+4096:], rec)
			return b
		}, 4096, "a hole in the log: 4096 zero bytes from offset", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, path, end := zeroTailLog(t, 5, zeros, tt.edit)
			records, err := scanFile(path, resp.Limits{}.WithDefaults(), nil)
			if tt.at < 0 {
				if err != nil || records != 5 {
					t.Fatalf("%d records, %v; want the 5 and no error", records, err)
				}
				return
			}
			var le *LogError
			if !errors.As(err, &le) || records != 5 {
				t.Fatalf("%d records, %v; want 5 and a LogError", records, err)
			}
			if le.Offset != int64(end+tt.at) || le.Padding != int64(tt.at) || le.ValidEnd() != int64(end) || le.Truncated ||
				!strings.Contains(le.Msg, tt.msg) || !strings.Contains(le.Msg, fmt.Sprintf("from offset %d, where the valid records end", end)) {
				t.Fatalf("got %+v (%v); want the damage at %d after %d zeros from %d: %q", le, err, end+tt.at, tt.at, end, tt.msg)
			}
			// Start-up refuses it: it is damage, not a record cut short.
			if _, err := New(Config{Dir: dir, Persist: PersistAlways}); !errors.As(err, &le) {
				t.Fatalf("start-up: %v, want the LogError", err)
			}
			var question string
			var report bytes.Buffer
			if err := Repair(dir, resp.Limits{}, func(q string) bool { question = q; return true }, &report); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(question, fmt.Sprintf("Repair cuts the file at offset %d, where they end", end)) ||
				!strings.Contains(question, tt.dropped) || !strings.Contains(report.String(), "its 5 valid records kept") {
				t.Errorf("question:\n%s\nreport: %s\nwant %q", question, report.String(), tt.dropped)
			}
			if st, err := os.Stat(path); err != nil || st.Size() != int64(end) {
				t.Fatalf("after the repair: %v, size %d, want %d", err, st.Size(), end)
			}
			if n, err := scanFile(path, resp.Limits{}.WithDefaults(), nil); n != 5 || err != nil {
				t.Errorf("after the repair: %d records, %v", n, err)
			}
		})
	}
}
