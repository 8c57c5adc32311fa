package kvstore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// LogError is a damaged operation log: the file, the offset of the
// damage, and why. Nothing after it is replayed.
type LogError struct {
	File string
	// Offset is where the damage is: the first record that cannot be
	// trusted, or the first non-zero byte in the zeros that follow the
	// records (Padding); -1 when it is the file as a whole (missing).
	Offset int64
	Msg    string
	// Padding counts the zero bytes between the last valid record and
	// Offset: space filled ahead of the records (see preallocChunk), no
	// data. The valid records end at Offset - Padding, where Repair cuts.
	Padding   int64
	Truncated bool // the file ends inside the record
	// Fix says what "kvbench serve --repair" does about it, when that is
	// not cutting the log at Offset; NoRepair says it can do nothing (Msg
	// says what to do).
	Fix      string
	NoRepair bool
}

// ValidEnd is where the valid records end: the offset Repair cuts at.
func (e *LogError) ValidEnd() int64 { return e.Offset - e.Padding }

func (e *LogError) Error() string {
	if e.Offset < 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s: offset %d: %s", e.File, e.Offset, e.Msg)
}

// scanLog reads the records of one log file, checks each one's checksum
// and hands it to fn (which may be nil). It stops at the first record that
// is malformed, fails its checksum or is refused by fn, with a *LogError.
// A file that ends inside a record gives a LogError with Truncated set,
// unless what follows the cut holds a record with a valid checksum: then a
// length was damaged and the parse went astray, which is corruption.
func scanLog(path string, lim resp.Limits, fn recordFunc) (records int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	end, err := dataEnd(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	rd := resp.NewReader(io.LimitReader(f, end), lim)
	bad := func(off int64, format string, args ...any) error {
		return &LogError{File: path, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	// next returns the next request, reading as needed; ok is false at
	// the end.
	next := func() (cmd resp.Command, ok bool, err error) {
		for {
			cmd, ok, err := rd.Next()
			if err != nil || ok {
				return cmd, ok, err
			}
			if err := rd.Fill(); err != nil {
				if errors.Is(err, io.EOF) {
					return resp.Command{}, false, nil
				}
				return resp.Command{}, false, err
			}
		}
	}
	// notRecord explains bytes at start that are no record: zeros (the
	// space filled ahead of the records) with damage after them, or else
	// the given error.
	notRecord := func(start int64, otherwise error) error {
		if zerr := zerosAt(f, path, start, end); zerr != nil {
			return zerr
		}
		return otherwise
	}
	for {
		start := rd.Offset()
		cmd, ok, err := next()
		if err != nil {
			if resp.IsProtocolError(err) {
				return records, notRecord(start, bad(start, "malformed record: %v", err))
			}
			return records, fmt.Errorf("%s: %w", path, err)
		}
		if !ok {
			if rd.Buffered() > 0 {
				return records, notRecord(start, truncatedAt(f, path, start, end))
			}
			return records, nil
		}
		if cmd.Raw == nil {
			return records, notRecord(start, bad(start, "a command record must be in RESP, found an inline line"))
		}
		// The checksum line follows, exactly "#xxxxxxxx\r\n". Reading more
		// of the file reuses the buffer: copy the command first (once per
		// buffer).
		sumAt := rd.Offset()
		for cloned := false; len(rd.Peek()) < checksumLineLen; cloned = true {
			if !cloned {
				cmd = cloneCommand(cmd)
			}
			if err := rd.Fill(); errors.Is(err, io.EOF) {
				return records, truncatedAt(f, path, start, end)
			} else if err != nil {
				return records, fmt.Errorf("%s: %w", path, err)
			}
		}
		want, ok := parseChecksumLine(rd.Peek()[:checksumLineLen])
		if !ok {
			return records, bad(sumAt, "missing or malformed checksum line after the record at offset %d", start)
		}
		rd.Discard(checksumLineLen)
		if got := crc32.Checksum(cmd.Raw, castagnoli); got != want {
			return records, bad(start, "checksum mismatch (record %08x, stored %08x)", got, want)
		}
		if fn != nil {
			if err := fn(cmd, start); err != nil {
				at, err := refusedAt(err, start)
				return records, bad(at, "%v", err)
			}
		}
		records++
	}
}

// truncatedAt classifies a file whose records end (at end) inside the
// record at off: a cut (a crash during a write), or damage if a record with
// a valid checksum follows.
func truncatedAt(f *os.File, path string, off, end int64) error {
	rest := make([]byte, end-off)
	if _, err := f.ReadAt(rest, off); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if holdsValidRecordEnd(rest) {
		return &LogError{File: path, Offset: off, Msg: "malformed record: a length does not match the data that follows"}
	}
	return &LogError{File: path, Offset: off, Truncated: true, Msg: fmt.Sprintf("the file ends inside a record (%d bytes)", end-off)}
}

// zerosAt explains a file whose bytes at off, where a record should
// start, are zeros: a record never starts with a zero byte, so these are
// the space filled ahead of the records (preallocChunk), and the records
// end at off. Since end is past the last non-zero byte, something that is
// not zero follows them: the damage, at the first non-zero byte. nil when
// the byte at off is not zero.
func zerosAt(f *os.File, path string, off, end int64) error {
	buf := make([]byte, 64<<10)
	at := off
	for at < end {
		b := buf[:min(int64(len(buf)), end-at)]
		if _, err := f.ReadAt(b, at); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		i := 0
		for i < len(b) && b[i] == 0 {
			i++
		}
		if at += int64(i); i < len(b) {
			break
		}
	}
	if at == off || at >= end {
		return nil
	}
	zeros := at - off
	// Records again after the zeros are a hole; anything else is damage
	// in the zeros (a flipped byte, a write that went astray).
	rest := make([]byte, min(end-at, 1<<20))
	if _, err := f.ReadAt(rest, at); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	msg := fmt.Sprintf("non-zero data in the zero-filled space after the records (byte 0x%02x, after %d zero bytes from offset %d, where the valid records end)",
		rest[0], zeros, off)
	if rest[0] == '*' && holdsValidRecordEnd(rest) {
		msg = fmt.Sprintf("a hole in the log: %d zero bytes from offset %d, where the valid records end, then records again", zeros, off)
	}
	return &LogError{File: path, Offset: at, Padding: zeros, Msg: msg}
}

// dataEnd is where a log file's records end: its size, less a run of zero
// bytes at the end (space filled ahead of the records; see preallocChunk).
func dataEnd(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := st.Size()
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := min(int64(len(buf)), end)
		b := buf[:n]
		if _, err := f.ReadAt(b, end-n); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0 {
				return end - n + int64(i) + 1, nil
			}
		}
		end -= n
	}
	return 0, nil
}

// fileDataEnd is dataEnd by path.
func fileDataEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return dataEnd(f)
}

// holdsValidRecordEnd reports whether some prefix of b ends with the
// checksum line of the bytes before it.
func holdsValidRecordEnd(b []byte) bool {
	var crc uint32
	for i := 0; i+11 <= len(b); i++ {
		if i >= 2 && b[i] == '#' && b[i-2] == '\r' && b[i-1] == '\n' && b[i+9] == '\r' && b[i+10] == '\n' {
			if want, ok := parseHex8(b[i+1 : i+9]); ok && want == crc {
				return true
			}
		}
		crc = crc32.Update(crc, castagnoli, b[i:i+1])
	}
	return false
}

// checksumLineLen is the length of "#xxxxxxxx\r\n".
const checksumLineLen = 11

func parseChecksumLine(b []byte) (uint32, bool) {
	if b[0] != '#' || b[9] != '\r' || b[10] != '\n' {
		return 0, false
	}
	return parseHex8(b[1:9])
}

func parseHex8(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint32(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, len(b) == 8
}

func cloneCommand(cmd resp.Command) resp.Command {
	args := make([][]byte, len(cmd.Args))
	for i, a := range cmd.Args {
		args[i] = bytes.Clone(a)
	}
	return resp.Command{Args: args, Raw: bytes.Clone(cmd.Raw)}
}

// openAOF opens the data directory, replays the log into the database and
// leaves the newest incremental file open for appending. A damaged log is
// refused with a *LogError, except a last record cut short by a crash,
// which is cut off. Nothing the log cannot read is changed: log files
// without a manifest, or a manifest naming a file that is missing, refuse
// the start too.
func (s *Server) openAOF() error {
	dir := s.cfg.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := checkWritable(dir); err != nil {
		return fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	a := newAOFLog(dir, s.cfg.Persist, s.cfg.fs, s.log)
	man, ok, err := readManifest(dir)
	if err != nil {
		return err
	}
	if !ok {
		if err := checkNoLogFiles(dir); err != nil {
			return err
		}
		man = manifest{incrs: []int{1}}
		f, err := openNewLogFile(a.fs, a.path(incrName(1)))
		if err == nil {
			err = f.Close()
		}
		if err == nil {
			err = writeManifest(a.fs, dir, man)
		}
		if err != nil {
			return fmt.Errorf("creating the log: %w", err)
		}
	}
	began := time.Now()
	if err := s.replay(a, man); err != nil {
		return err
	}
	a.loadTime = time.Since(began)
	a.loadedKeys = s.db.size()
	last := a.path(incrName(man.lastIncr()))
	f, err := a.fs.OpenFile(last, os.O_WRONLY)
	if err != nil {
		return fmt.Errorf("opening the log: %w", err)
	}
	st, err := os.Stat(last)
	if err == nil {
		a.fsize, err = fileDataEnd(last)
	}
	if err != nil {
		f.Close()
		return err
	}
	a.f, a.alloc, a.man = f, st.Size(), man
	a.seq, a.fsynced = man.lastIncr(), man.synced[man.lastIncr()]
	s.aof = a
	s.log.Info("operation log loaded", "dir", dir, "records", a.loadedRecords, "bytes", a.loadedBytes, "keys", a.loadedKeys,
		"took", a.loadTime.Round(time.Millisecond), "fsync", a.policy)
	return nil
}

// openNewLogFile creates a log file that no manifest names yet. A file of
// that name is reused only if it is empty (left by a step that failed
// before a manifest named it): one that holds anything is not the log's
// to overwrite.
func openNewLogFile(fsys logFS, name string) (logFile, error) {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if !errors.Is(err, fs.ErrExist) {
		return f, err
	}
	st, serr := os.Stat(name)
	if serr != nil {
		return nil, serr
	}
	if st.Size() > 0 {
		return nil, fmt.Errorf("%s already exists and holds %d bytes, though no manifest names it: refusing to overwrite it", name, st.Size())
	}
	return fsys.OpenFile(name, os.O_WRONLY)
}

// logFileInfo is a file of the log found in its directory.
type logFileInfo struct {
	name string
	seq  int
	base bool
	size int64
}

// logFilesIn lists the files of dir named as the log's base and
// incremental files are, by sequence number.
func logFilesIn(dir string) ([]logFileInfo, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var found []logFileInfo
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), filePrefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		num, kind, ok := strings.Cut(rest, ".")
		seq, err := strconv.Atoi(num)
		if !ok || err != nil || seq <= 0 || (kind != "base.aof" && kind != "incr.aof") || strconv.Itoa(seq) != num {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		found = append(found, logFileInfo{name: e.Name(), seq: seq, base: kind == "base.aof", size: info.Size()})
	}
	slices.SortFunc(found, func(x, y logFileInfo) int {
		return cmp.Or(cmp.Compare(x.seq, y.seq), cmp.Compare(b2i(!x.base), b2i(!y.base)))
	})
	return found, nil
}

// checkNoLogFiles refuses a directory without a manifest that holds log
// files with data: a manifest lost or deleted, which a new log would
// destroy the files of.
func checkNoLogFiles(dir string) error {
	found, err := logFilesIn(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	var names []string
	for _, f := range found {
		if f.size > 0 {
			names = append(names, fmt.Sprintf("%s (%d bytes)", f.name, f.size))
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &LogError{File: filepath.Join(dir, manifestName), Offset: -1,
		Msg: "missing, but the directory holds log files that it would name: " + strings.Join(names, ", ") +
			"; nothing was changed (a new log would have replaced them)",
		Fix: "rebuild the manifest from the files found (the newest base and the incremental files after it)"}
}

// missingFiles refuses a manifest that names files that are not there.
func missingFiles(dir string, man manifest) error {
	var missing []string
	for _, name := range man.files() {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, name)
		} else if err != nil {
			return fmt.Errorf("log file named by the manifest: %w", err)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	le := &LogError{File: filepath.Join(dir, missing[0]), Offset: -1,
		Msg: fmt.Sprintf("missing: the manifest names %s, and the log cannot be replayed without %s; nothing was changed",
			strings.Join(missing, ", "), map[bool]string{true: "it", false: "them"}[len(missing) == 1]),
		Fix: "drop the missing file and the files after it from the manifest (their records follow the gap)"}
	if man.base > 0 && missing[0] == baseName(man.base) {
		le.Msg += "; the base holds the dataset as of the last rewrite and the incremental files only the changes since: restore it from a backup"
		le.Fix, le.NoRepair = "", true
	}
	return le
}

// checkFile scans one file of the log (scanFile) and checks it against the
// bytes the manifest says were fsynced: a crash cuts a file only after
// those, so records that end before them were cut off or overwritten
// later, which is damage, not a torn tail.
func checkFile(path string, lim resp.Limits, synced int64, fn recordFunc) (int64, error) {
	n, err := scanFile(path, lim, fn)
	if synced == 0 {
		return n, err
	}
	var end int64
	var le *LogError
	switch {
	case err == nil:
		var derr error
		if end, derr = fileDataEnd(path); derr != nil {
			return n, derr
		}
	case errors.As(err, &le) && le.Truncated:
		end = le.ValidEnd()
	default:
		return n, err
	}
	if end >= synced {
		return n, err
	}
	return n, &LogError{File: path, Offset: end, Msg: fmt.Sprintf(
		"the records end here, but the manifest says %d bytes of them had reached the disk (synced %d): %d bytes of records are missing; a crash cuts only what was not yet fsynced, so the file was cut short or overwritten",
		synced, synced, synced-end)}
}

// replay executes every record of the manifest's files, in order.
func (s *Server) replay(a *aofLog, man manifest) error {
	if err := missingFiles(a.dir, man); err != nil {
		return err
	}
	b := newReplayBatch(s)
	defer func() { b.c.batch = nil }()
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	names := man.files()
	sizes := make([]int64, len(names))
	last := 0 // the last file holding records: a crash may have cut its last one
	for i, name := range names {
		size, err := fileDataEnd(a.path(name))
		if err != nil {
			return fmt.Errorf("log file named by the manifest: %w", err)
		}
		if sizes[i] = size; size > 0 {
			last = i
		}
		b.logBytes += size
	}
	for i, name := range names {
		path, size := a.path(name), sizes[i]
		n, err := checkFile(path, s.limits(), man.syncedOf(name), b.add)
		var le *LogError
		cut := errors.As(err, &le) && le.Truncated
		if err == nil || cut {
			// The records read before the end or the cut, still in the batch.
			if ferr := b.flush(); ferr != nil {
				at, ferr := refusedAt(ferr, 0)
				err, cut = &LogError{File: path, Offset: at, Msg: ferr.Error()}, false
			}
		}
		a.loadedRecords += n
		if cut && i == last {
			// A crash during a write: cut the partial record off, and the
			// zeros filled ahead of it.
			st, serr := os.Stat(path)
			if serr != nil {
				return serr
			}
			if terr := os.Truncate(path, le.ValidEnd()); terr != nil {
				return fmt.Errorf("cutting the partial last record off %s: %w", path, terr)
			}
			a.truncated = size - le.Offset
			s.log.Warn("the log's last record was cut short (a crash during a write?); dropped it",
				"file", path, "offset", le.Offset, "bytes_dropped", a.truncated, "zeros_dropped", st.Size()-size)
			err = nil
			size = le.Offset
		}
		if err != nil {
			return err
		}
		a.loadedBytes += size
		if name == baseName(man.base) {
			a.baseSize = size
		} else {
			a.incrSize += size
		}
	}
	return nil
}

// recordFunc takes a record a scan read at offset off; the bytes of cmd
// are the scan's and change after it returns. An error refuses the
// record, or with a *refusal an earlier one.
type recordFunc func(cmd resp.Command, off int64) error

// A refusal is a record the database refused, at the offset where it
// starts.
type refusal struct {
	off int64
	err error
}

func (r *refusal) Error() string { return r.err.Error() }

// refusedAt returns where err says the refused record is, or at when it
// does not, and the reason.
func refusedAt(err error, at int64) (int64, error) {
	var r *refusal
	if errors.As(err, &r) {
		return r.off, r.err
	}
	return at, err
}

// replayBatch executes log records in batches, as a connection executes
// a pipeline: a batch's keys are prefetched together (conn.prefetch) so
// that the cache misses of its lookups overlap, where one record at a
// time would wait for each in turn (BenchmarkReplay measures it). A
// record's bytes are the scan's, reused as it reads on: add copies them
// into buf, which never grows while a batch holds slices of it.
type replayBatch struct {
	c    *conn
	offs []int64
	buf  []byte
	args [][]byte
	name []byte   // the last command name looked up: a log repeats it
	cmd  *command // its command

	logBytes int64 // the size of the log's files
	reserved bool  // the first full batch has reserved room for the keys
}

// Records go in batches of up to replayBatchLen, with up to
// replayBatchBytes of arguments; a larger record is executed alone,
// without copying it.
const (
	replayBatchLen   = 64
	replayBatchBytes = 64 << 10
	replayBatchArgs  = 4 * replayBatchLen
)

func newReplayBatch(s *Server) *replayBatch {
	c := &conn{s: s, authed: true, replaying: true}
	c.info.Store(&clientInfo{name: "aof-replay"})
	return &replayBatch{
		c:    c,
		buf:  make([]byte, 0, replayBatchBytes),
		args: make([][]byte, 0, replayBatchArgs),
	}
}

func (b *replayBatch) add(cmd resp.Command, off int64) error {
	size := 0
	for _, a := range cmd.Args {
		size += len(a)
	}
	full := len(b.c.batch) == replayBatchLen ||
		len(b.buf)+size > cap(b.buf) || len(b.args)+len(cmd.Args) > cap(b.args)
	if full {
		if err := b.flush(); err != nil {
			return err
		}
	}
	if !bytes.Equal(cmd.Args[0], b.name) {
		b.name, b.cmd = append(b.name[:0], cmd.Args[0]...), lookup(cmd.Args[0])
	}
	if size > cap(b.buf) || len(cmd.Args) > cap(b.args) {
		if err := b.c.replay(cmd.Args, b.cmd); err != nil {
			return &refusal{off, err}
		}
		return nil
	}
	start := len(b.args)
	for _, a := range cmd.Args {
		n := len(b.buf)
		b.buf = append(b.buf, a...)
		b.args = append(b.args, b.buf[n:len(b.buf):len(b.buf)])
	}
	args := b.args[start:len(b.args):len(b.args)]
	b.c.batch = append(b.c.batch, call{req: resp.Command{Args: args}, cmd: b.cmd})
	b.offs = append(b.offs, off)
	return nil
}

// flush executes the records waiting. The caller holds the database's
// lock.
func (b *replayBatch) flush() error {
	c := b.c
	defer func() {
		c.batch, b.offs = c.batch[:0], b.offs[:0]
		b.buf, b.args = b.buf[:0], b.args[:0]
	}()
	if !b.reserved && len(c.batch) == replayBatchLen {
		b.reserve()
	}
	if len(c.batch) >= prefetchMin {
		c.prefetch()
	}
	for i := range c.batch {
		if err := c.replay(c.batch[i].req.Args, c.batch[i].cmd); err != nil {
			return &refusal{b.offs[i], err}
		}
	}
	return nil
}

// reserve makes room in the table of the batch's first record for the
// keys the log may create, as many as it has records, which it estimates
// from the size of its files and of this batch's records. Overwrites make
// it too many: the index then has the size a log of distinct keys would
// give it, and its keys, spread over all of it, touch most of its pages.
// The automatic rewrite bounds that (past its minimum size, an
// incremental file grows to the base's size, by default, before the log
// is rewritten into one record a key), and so does maxReserve.
func (b *replayBatch) reserve() {
	b.reserved = true
	first := &b.c.batch[0]
	span := b.offs[len(b.offs)-1] - b.offs[0]
	if first.cmd == nil || first.cmd.keys == nil || span <= 0 {
		return
	}
	perRecord := span / int64(len(b.offs)-1)
	t, ok := first.cmd.keys(b.c.s.db, first.req.Args).(interface{ reserve(n int) })
	if ok {
		t.reserve(int(min(b.logBytes/perRecord, maxReserve)))
	}
}

// maxReserve bounds the keys a replay reserves room for.
const maxReserve = 16 << 20

// replay executes one record, args, whose command (looked up by name) is
// def. A record that is not a known write command, or that the database
// refuses, means the log does not describe this dataset: it is reported,
// never skipped.
func (c *conn) replay(args [][]byte, def *command) error {
	if def == nil || def.flags&flagWrite == 0 {
		return fmt.Errorf("%q is not a write command", truncate(args[0], 64))
	}
	if !def.arityOK(len(args)) {
		return fmt.Errorf("wrong number of arguments for %q", def.name)
	}
	c.out = c.out[:0]
	def.fn(c, args)
	if len(c.out) > 0 && c.out[0] == resp.TypeError {
		return fmt.Errorf("%s answered %q", def.name, bytes.TrimRight(c.out[1:], "\r\n"))
	}
	return nil
}

func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".kvbench-write-test-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(filepath.Clean(name))
}
