package kvstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// savedBase fills a server with keys of every engine, a Redis hash and a
// value larger than a block, SAVEs, and returns the data directory and the
// base file's path.
func savedBase(t *testing.T, keys int) (dir, path string) {
	dir = t.TempDir()
	srv := startPersistent(t, dir, PersistNo)
	rdb := newClient(t, srv)
	c := ctx(t)
	pipe := rdb.Pipeline()
	for i := range keys {
		pipe.Set(c, fmt.Sprintf("key:%06d", i), fmt.Sprintf("value-%032d", i), 0)
	}
	pipe.Do(c, "HSET", "h:engine", "hv")
	pipe.Do(c, "RSET", "r:tree", "rv")
	for i := range 100 {
		pipe.HSet(c, "h:redis", fmt.Sprint("f", i), i)
	}
	pipe.Set(c, "big", strings.Repeat("b", baseBlock+1000), 0)
	if _, err := pipe.Exec(c); err != nil {
		t.Fatal(err)
	}
	must(rdb.Do(c, "SAVE").Result())(t, "SAVE")
	srv.Close()
	m, _, err := readManifest(dir)
	if err != nil || m.base == 0 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	return dir, filepath.Join(dir, baseName(m.base))
}

// blockOffsets lists where a compact base's blocks start, and its trailer.
func blockOffsets(t *testing.T, data []byte) []int64 {
	var offs []int64
	off := int64(len(baseMagic))
	for {
		offs = append(offs, off)
		n := int64(binary.LittleEndian.Uint32(data[off:]))
		if n == 0 {
			return offs
		}
		off += blockHeader + n
	}
}

func TestCompactBase(t *testing.T) {
	dir, path := savedBase(t, 20_000)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), baseMagic) || !strings.HasSuffix(string(data), "END\n") {
		t.Fatalf("base file starts %q, ends %q", data[:16], data[len(data)-8:])
	}
	if n := len(blockOffsets(t, data)); n < 4 {
		t.Fatalf("%d blocks: the test wants several", n-1)
	}
	rdb := newClient(t, startPersistent(t, dir, PersistNo))
	c := ctx(t)
	if n := rdb.DBSize(c).Val(); n != 20_000+4 {
		t.Fatalf("DBSIZE %d after loading the base, want %d", n, 20_000+4)
	}
	for _, i := range []int{0, 9_999, 19_999} {
		if got, want := rdb.Get(c, fmt.Sprintf("key:%06d", i)).Val(), fmt.Sprintf("value-%032d", i); got != want {
			t.Fatalf("key %d = %q, want %q", i, got, want)
		}
	}
	if got := rdb.Do(c, "HGET", "h:engine").Val(); got != "hv" {
		t.Errorf("HGET h:engine = %v", got)
	}
	if got := rdb.Do(c, "RGET", "r:tree").Val(); got != "rv" {
		t.Errorf("RGET r:tree = %v", got)
	}
	if got := rdb.HLen(c, "h:redis").Val(); got != 100 {
		t.Errorf("HLEN h:redis = %d", got)
	}
	if got := rdb.StrLen(c, "big").Val(); got != baseBlock+1000 {
		t.Errorf("STRLEN big = %d", got)
	}
}

// Damage anywhere in a compact base refuses the start, naming the file and
// the offset of the block that holds it; repair cuts the base there and
// closes it with a trailer, and the server starts with the blocks before.
func TestCompactBaseDamage(t *testing.T) {
	src, path := savedBase(t, 20_000)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offs := blockOffsets(t, data)
	trailer := offs[len(offs)-1]
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		at     int64 // the offset the error names
		msg    string
	}{
		{"flipped byte", func(b []byte) []byte { b[offs[2]+100] ^= 1; return b }, offs[2], "checksum mismatch"},
		{"flipped length", func(b []byte) []byte { b[offs[1]+1] ^= 0x40; return b }, offs[1], ""},
		{"no trailer", func(b []byte) []byte { return b[:trailer] }, trailer, "without its trailer"},
		{"cut trailer", func(b []byte) []byte { return b[:len(b)-1] }, trailer, "trailer"},
		{"data after", func(b []byte) []byte { return append(b, '*') }, trailer, "trailer"},
		{"wrong count", func(b []byte) []byte {
			t := baseTrailer(12345)
			return append(b[:trailer], t...)
		}, trailer, "counts 12345 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			p := filepath.Join(dir, filepath.Base(path))
			os.WriteFile(p, tc.damage(append([]byte(nil), data...)), 0o644)
			_, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
			var le *LogError
			if !errors.As(err, &le) || le.Truncated || le.Offset != tc.at || le.File != p || !strings.Contains(le.Msg, tc.msg) {
				t.Fatalf("err = %v, want a LogError of %s at offset %d saying %q", err, p, tc.at, tc.msg)
			}
			var question string
			if err := Repair(dir, resp.Limits{}, func(q string) bool { question = q; return true }, io.Discard); err != nil {
				t.Fatalf("repair: %v", err)
			}
			if !strings.Contains(question, fmt.Sprintf("offset %d", tc.at)) {
				t.Fatalf("repair question %q", question)
			}
			keys := make(map[string]bool)
			_, err = scanBase(p, resp.Limits{}, func(cmd resp.Command, _ int64) error {
				keys[string(cmd.Args[1])] = true
				return nil
			})
			kept := int64(len(keys))
			if err != nil {
				t.Fatalf("the repaired base does not scan: %v", err)
			}
			srv, err := Start(Config{Addr: "127.0.0.1:0", Persist: PersistNo, Dir: dir})
			if err != nil {
				t.Fatalf("start after repair: %v", err)
			}
			defer srv.Close()
			rdb := newClient(t, srv)
			if n := rdb.DBSize(ctx(t)).Val(); n != kept || n == 0 {
				t.Fatalf("after repair: %d keys, the base keeps %d", n, kept)
			}
			if got := rdb.Get(ctx(t), "key:000000").Val(); got != fmt.Sprintf("value-%032d", 0) {
				t.Fatalf("key:000000 = %q after repair", got)
			}
		})
	}
}

// A base written as RESP records, as earlier versions did, still loads.
func TestRESPBaseLoads(t *testing.T) {
	dir := t.TempDir()
	var base []byte
	for _, args := range [][]string{{"SET", "s", "1"}, {"RSET", "r", "2"}, {"HSET", "h", "f", "3"}} {
		var cmd resp.Command
		for _, a := range args {
			cmd.Args = append(cmd.Args, []byte(a))
		}
		base = appendRecord(base, cmd)
	}
	must(0, os.WriteFile(filepath.Join(dir, baseName(1)), base, 0o644))(t, "base")
	must(0, os.WriteFile(filepath.Join(dir, incrName(1)), nil, 0o644))(t, "incr")
	must(0, writeManifest(osFS{}, dir, manifest{base: 1, incrs: []int{1}}))(t, "manifest")
	rdb := newClient(t, startPersistent(t, dir, PersistNo))
	c := ctx(t)
	if rdb.Get(c, "s").Val() != "1" || rdb.Do(c, "RGET", "r").Val() != "2" || rdb.HGet(c, "h", "f").Val() != "3" {
		t.Fatal("the RESP base did not load")
	}
}

// FuzzScanBase feeds arbitrary bytes after the magic to the base reader: it
// never panics, a file it accepts hands over as many entries as its
// trailer counts, and an error is a *LogError with an offset inside the
// file.
func FuzzScanBase(f *testing.F) {
	var good strings.Builder
	w := newBaseWriter(&good)
	w.add('S', []byte("k"), nil, []byte("v"))
	w.flush()
	w.add('F', []byte("h"), []byte("f"), []byte("v"))
	w.close()
	f.Add([]byte(good.String()[len(baseMagic):]))
	f.Add([]byte(good.String()[len(baseMagic) : good.Len()-3]))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append([]byte(baseMagic), body...)
		path := filepath.Join(t.TempDir(), "base")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var handed int64
		n, err := scanBase(path, resp.Limits{MaxBulkLen: 1 << 16}, func(cmd resp.Command, _ int64) error {
			if name := string(cmd.Args[0]); len(cmd.Args) != 3 && len(cmd.Args) != 4 || name != "SET" && name != "HSET" && name != "RSET" {
				t.Fatalf("entry %q", cmd.Args)
			}
			handed++
			return nil
		})
		if err == nil {
			if count := binary.LittleEndian.Uint64(data[len(data)-16:]); n != handed || uint64(n) != count {
				t.Fatalf("accepted: %d entries counted, %d handed over, trailer says %d", n, handed, count)
			}
			return
		}
		var le *LogError
		if !errors.As(err, &le) {
			t.Fatalf("error %v is not a LogError", err)
		}
		if le.Offset < int64(len(baseMagic)) || le.Offset > int64(len(data)) {
			t.Fatalf("offset %d outside the %d-byte file's blocks", le.Offset, len(data))
		}
	})
}
