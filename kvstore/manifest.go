package kvstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// manifest names the files of the log, oldest first: an optional base and
// the incremental files written since. Its format is Redis 7's:
//
//	file appendonly.aof.2.base.aof seq 2 type b
//	file appendonly.aof.2.incr.aof seq 2 type i
type manifest struct {
	base  int   // sequence number of the base file, 0 for none
	incrs []int // sequence numbers of the incremental files, oldest first
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

func (m manifest) encode() []byte {
	var b bytes.Buffer
	if m.base > 0 {
		fmt.Fprintf(&b, "file %s seq %d type b\n", baseName(m.base), m.base)
	}
	for _, s := range m.incrs {
		fmt.Fprintf(&b, "file %s seq %d type i\n", incrName(s), s)
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
		if len(f) != 6 || f[0] != "file" || f[2] != "seq" || f[4] != "type" {
			return manifest{}, false, bad("want \"file NAME seq N type b|i\"")
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
		default:
			return manifest{}, false, bad("unexpected file")
		}
	}
	if len(m.incrs) == 0 {
		return manifest{}, false, fmt.Errorf("%s: no incremental file", path)
	}
	return m, true, nil
}

// writeManifest replaces dir's manifest atomically: a temporary file,
// fsync, rename, fsync of the directory.
func writeManifest(dir string, m manifest) error {
	return writeFileAtomic(dir, manifestName, m.encode())
}

func writeFileAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "temp-"+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
