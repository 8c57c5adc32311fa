package kvstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// manifest names the files of the log, oldest first: an optional base and
// the incremental files written since. Its format is Redis 7's, with one
// key of its own on incremental files, which Redis's loader ignores:
//
//	file appendonly.aof.2.base.aof seq 2 type b
//	file appendonly.aof.2.incr.aof seq 2 type i synced 1048576
//
// synced is how many bytes of records the file held, fsynced, when the
// manifest was written: a file whose records end before that lost records
// that had reached the disk (it was cut short or overwritten), which is
// damage, where a file that ends inside a record after it was cut by a
// crash. The log writes it as its fsyncs complete (at most once a second,
// see aofLog.saveSynced), at a rewrite's switch of files and at a clean
// stop. A manifest without it (written by an earlier version) is read as
// before: every record that ends the file may be a torn one.
type manifest struct {
	base   int           // sequence number of the base file, 0 for none
	incrs  []int         // sequence numbers of the incremental files, oldest first
	synced map[int]int64 // by sequence number: bytes known fsynced; absent for none
}

func baseName(seq int) string { return filePrefix + strconv.Itoa(seq) + ".base.aof" }
func incrName(seq int) string { return filePrefix + strconv.Itoa(seq) + ".incr.aof" }

// files lists the manifest's files in replay order.
func (m manifest) files() []string {
	var names []string
	if m.base > 0 {
		names = append(names, baseName(m.base))
	}
	for _, s := range m.incrs {
		names = append(names, incrName(s))
	}
	return names
}

func (m manifest) lastIncr() int { return m.incrs[len(m.incrs)-1] }

// syncedOf is how many bytes of the file named name are known fsynced, 0
// when the manifest does not say.
func (m manifest) syncedOf(name string) int64 {
	for _, s := range m.incrs {
		if incrName(s) == name {
			return m.synced[s]
		}
	}
	return 0
}

// withSynced returns m saying that the incremental file seq holds n bytes
// fsynced (m itself is not changed: manifests are shared).
func (m manifest) withSynced(seq int, n int64) manifest {
	synced := make(map[int]int64, len(m.incrs))
	for _, s := range m.incrs {
		if v, ok := m.synced[s]; ok {
			synced[s] = v
		}
	}
	if n > 0 {
		synced[seq] = n
	} else {
		delete(synced, seq)
	}
	m.incrs = slices.Clone(m.incrs)
	m.synced = synced
	return m
}

func (m manifest) encode() []byte {
	var b bytes.Buffer
	if m.base > 0 {
		fmt.Fprintf(&b, "file %s seq %d type b\n", baseName(m.base), m.base)
	}
	for _, s := range m.incrs {
		fmt.Fprintf(&b, "file %s seq %d type i", incrName(s), s)
		if n, ok := m.synced[s]; ok {
			fmt.Fprintf(&b, " synced %d", n)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readManifest reads dir's manifest; ok is false when there is none.
func readManifest(dir string) (m manifest, ok bool, err error) {
	path := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return manifest{}, false, nil
	}
	if err != nil {
		return manifest{}, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("%s:%d: %s: %q", path, line, why, sc.Text()) }
		if len(f) != 6 && len(f) != 8 || f[0] != "file" || f[2] != "seq" || f[4] != "type" || len(f) == 8 && f[6] != "synced" {
			return manifest{}, false, bad("want \"file NAME seq N type b|i [synced BYTES]\"")
		}
		seq, err := strconv.Atoi(f[3])
		if err != nil || seq <= 0 {
			return manifest{}, false, bad("bad sequence number")
		}
		switch {
		case f[5] == "b" && f[1] == baseName(seq) && m.base == 0 && len(m.incrs) == 0:
			m.base = seq
		case f[5] == "i" && f[1] == incrName(seq) && (len(m.incrs) == 0 || seq > m.lastIncr()):
			m.incrs = append(m.incrs, seq)
			if len(f) == 8 {
				n, err := strconv.ParseInt(f[7], 10, 64)
				if err != nil || n < 0 {
					return manifest{}, false, bad("bad synced size")
				}
				if m.synced == nil {
					m.synced = make(map[int]int64)
				}
				m.synced[seq] = n
			}
		default:
			return manifest{}, false, bad("unexpected file")
		}
	}
	if len(m.incrs) == 0 {
		return manifest{}, false, fmt.Errorf("%s: no incremental file", path)
	}
	return m, true, nil
}

// writeManifest replaces dir's manifest atomically.
func writeManifest(fsys logFS, dir string, m manifest) error {
	return writeFileAtomic(fsys, dir, manifestName, m.encode())
}
