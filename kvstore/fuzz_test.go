package kvstore

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// FuzzManifest feeds arbitrary bytes to the manifest reader: it never
// panics, and a manifest it accepts is written back to bytes that read as
// the same manifest (files, and how much of each was fsynced).
func FuzzManifest(f *testing.F) {
	f.Add([]byte("file appendonly.aof.1.incr.aof seq 1 type i\n"))
	f.Add([]byte("file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i synced 4096\n"))
	f.Add([]byte("file appendonly.aof.3.incr.aof seq 3 type i synced -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, manifestName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, ok, err := readManifest(dir)
		if err != nil || !ok {
			return
		}
		if err := writeManifest(osFS{}, dir, m); err != nil {
			t.Fatal(err)
		}
		again, ok, err := readManifest(dir)
		if err != nil || !ok || again.base != m.base || !slices.Equal(again.incrs, m.incrs) || !maps.Equal(again.synced, m.synced) {
			t.Fatalf("%q read as %+v, written and read again as %+v, %v", data, m, again, err)
		}
	})
}
