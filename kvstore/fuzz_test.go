package kvstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// FuzzScanLog feeds arbitrary bytes to the log reader: it never panics,
// every record it accepts carries a valid checksum (re-encoding it gives
// the same bytes), and an error is always a *LogError with an offset
// inside the file.
func FuzzScanLog(f *testing.F) {
	good := appendRecord(nil, resp.Command{Args: [][]byte{[]byte("SET"), []byte("k"), []byte("v")}})
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:len(good)-3]...))
	f.Add([]byte("*1\r\n$4\r\nPING\r\n#00000000\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lim := resp.Limits{MaxBulkLen: 1 << 16}
		var pos int64
		_, err := scanLog(path, lim, func(cmd resp.Command, _ int64) error {
			rec := appendRecord(nil, cmd)
			if string(data[pos:pos+int64(len(rec))]) != string(rec) {
				t.Fatalf("accepted record at %d does not re-encode to its bytes", pos)
			}
			pos += int64(len(rec))
			return nil
		})
		if err == nil {
			return
		}
		var le *LogError
		if !errors.As(err, &le) {
			t.Fatalf("error %v is not a LogError", err)
		}
		if le.Offset < 0 || le.Offset > int64(len(data)) {
			t.Fatalf("offset %d outside a %d-byte file", le.Offset, len(data))
		}
	})
}
