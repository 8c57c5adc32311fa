package kvstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/kvbench/kvbench/pkg/resp"
)

// A rewrite writes the dataset as a compact base file rather than as RESP
// records, as Redis 7 writes an RDB preamble (aof-use-rdb-preamble yes). A
// 16-byte key with a 32-byte value takes 51 bytes where its RESP record
// and checksum line took 86, and writing it is a copy, less than half the
// time a key of writing its record (BenchmarkWriteBase). The incremental
// files stay RESP; a base written as RESP records by an earlier version
// still loads (scanFile tells the two apart by the magic).
//
//	file    = magic block* trailer
//	magic   = "KVBASE 1\n"
//	block   = length:u32le crc:u32le payload   length > 0, crc = CRC-32C(payload)
//	payload = entry+
//	entry   = 'S' arg arg      SET key value
//	        | 'H' arg arg      HSET key value (the hash engine)
//	        | 'R' arg arg      RSET key value
//	        | 'F' arg arg arg  HSET key field value (a Redis hash)
//	arg     = length:uvarint bytes
//	trailer = 0:u32le count:u64le crc:u32le "END\n"   crc = CRC-32C of the 12 bytes before it
//
// A base is written whole and renamed into place, never cut short by a
// crash: any damage, a missing trailer included, refuses the start. Its
// last byte is not zero, so dataEnd takes none of it for preallocation.
const baseMagic = "KVBASE 1\n"

// baseBlock is the payload size a block is cut at (an entry larger than
// that has a block to itself).
const baseBlock = 256 << 10

// baseKinds maps an entry's kind to the command that replays it and its
// argument count.
var baseKinds = [256]struct {
	cmd  []byte
	args int
}{
	'S': {[]byte("SET"), 2},
	'H': {[]byte("HSET"), 2},
	'R': {[]byte("RSET"), 2},
	'F': {[]byte("HSET"), 3},
}

// baseWriter writes a compact base file.
type baseWriter struct {
	w     io.Writer
	buf   []byte // the block being filled, after room for its header
	count uint64
	err   error
}

const blockHeader = 8

func newBaseWriter(w io.Writer) *baseWriter {
	b := &baseWriter{w: w, buf: make([]byte, blockHeader, blockHeader+baseBlock+4<<10)}
	_, b.err = io.WriteString(w, baseMagic)
	return b
}

// add appends an entry of kind with its arguments (two, or three for 'F';
// field is nil otherwise).
func (b *baseWriter) add(kind byte, key, field, val []byte) {
	b.buf = append(b.buf, kind)
	b.buf = appendArg(b.buf, key)
	if kind == 'F' {
		b.buf = appendArg(b.buf, field)
	}
	b.buf = appendArg(b.buf, val)
	b.count++
	if len(b.buf) >= blockHeader+baseBlock {
		b.flush()
	}
}

func appendArg(dst, a []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(a))), a...)
}

// flush writes the block filled so far.
func (b *baseWriter) flush() {
	n := len(b.buf) - blockHeader
	if n == 0 || b.err != nil {
		b.buf = b.buf[:blockHeader]
		return
	}
	if n > math.MaxUint32 {
		b.err = fmt.Errorf("an entry of %d bytes is too large for a base file", n)
		return
	}
	binary.LittleEndian.PutUint32(b.buf, uint32(n))
	binary.LittleEndian.PutUint32(b.buf[4:], crc32.Checksum(b.buf[blockHeader:], castagnoli))
	_, b.err = b.w.Write(b.buf)
	b.buf = b.buf[:blockHeader]
}

// close writes the last block and the trailer.
func (b *baseWriter) close() error {
	b.flush()
	if b.err != nil {
		return b.err
	}
	_, err := b.w.Write(baseTrailer(b.count))
	return err
}

func baseTrailer(count uint64) []byte {
	t := make([]byte, 12, 20)
	binary.LittleEndian.PutUint64(t[4:], count)
	t = binary.LittleEndian.AppendUint32(t, crc32.Checksum(t, castagnoli))
	return append(t, "END\n"...)
}

// isCompactBase reports whether the file at path starts as a compact base.
func isCompactBase(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(baseMagic))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return string(head[:n]) == baseMagic, nil
}

// scanFile reads one file of the log, a compact base or RESP records,
// handing each command to fn (which may be nil); see scanLog and scanBase.
func scanFile(path string, lim resp.Limits, fn recordFunc) (int64, error) {
	compact, err := isCompactBase(path)
	if err != nil {
		return 0, err
	}
	if compact {
		return scanBase(path, lim, fn)
	}
	return scanLog(path, lim, fn)
}

// scanBase reads a compact base, checking every block's checksum and the
// trailer's count, and hands each entry to fn as the command that replays
// it. Any damage stops it with a *LogError at the offset of the block
// that holds it; entries counts the entries of the blocks before, where
// Repair cuts.
func scanBase(path string, lim resp.Limits, fn recordFunc) (entries int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	rd := bufio.NewReaderSize(f, 1<<20)
	if _, err := rd.Discard(len(baseMagic)); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	off := int64(len(baseMagic))
	var (
		hdr     [blockHeader]byte
		payload []byte
		args    [4][]byte
	)
	for {
		bad := func(format string, a ...any) error {
			return &LogError{File: path, Offset: off, Msg: fmt.Sprintf(format, a...)}
		}
		if size-off < blockHeader {
			return entries, bad("the base file ends without its trailer")
		}
		if _, err := io.ReadFull(rd, hdr[:]); err != nil {
			return entries, fmt.Errorf("%s: %w", path, err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[:]))
		if n == 0 {
			return entries, checkTrailer(rd, hdr, entries, size-off, bad)
		}
		if n > size-off-blockHeader {
			return entries, bad("a block of %d bytes runs past the end of the file", n)
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(rd, payload); err != nil {
			return entries, fmt.Errorf("%s: %w", path, err)
		}
		if got, want := crc32.Checksum(payload, castagnoli), binary.LittleEndian.Uint32(hdr[4:]); got != want {
			return entries, bad("checksum mismatch (block %08x, stored %08x)", got, want)
		}
		var inBlock int64
		for p := payload; len(p) > 0; inBlock++ {
			at := off + blockHeader + int64(len(payload)-len(p))
			kind := baseKinds[p[0]]
			if kind.cmd == nil {
				return entries, bad("unknown entry kind %q at offset %d", p[0], at)
			}
			p = p[1:]
			cmd := resp.Command{Args: args[:1+kind.args]}
			cmd.Args[0] = kind.cmd
			for i := 1; i <= kind.args; i++ {
				l, w := binary.Uvarint(p)
				if w <= 0 || l > uint64(len(p)-w) {
					return entries, bad("the entry at offset %d runs past the end of its block", at)
				}
				if lim.MaxBulkLen > 0 && l > uint64(lim.MaxBulkLen) {
					return entries, bad("the entry at offset %d has an argument of %d bytes, over proto-max-bulk-len", at, l)
				}
				cmd.Args[i] = p[w : w+int(l)]
				p = p[w+int(l):]
			}
			if fn != nil {
				if err := fn(cmd, at); err != nil {
					at, err := refusedAt(err, at)
					return entries, bad("the entry at offset %d: %v", at, err)
				}
			}
		}
		entries += inBlock
		off += blockHeader + n
	}
}

// checkTrailer reads the rest of the trailer, whose first four bytes (a
// zero length) and next four are in hdr, and checks it: the count of
// entries read, and nothing after it. left is the bytes of the file from
// the trailer on.
func checkTrailer(rd io.Reader, hdr [blockHeader]byte, entries, left int64, bad func(string, ...any) error) error {
	const trailerLen = 20
	if left != trailerLen {
		return bad("a trailer of %d bytes, want %d: data after it, or cut short", left, trailerLen)
	}
	t := make([]byte, trailerLen)
	copy(t, hdr[:])
	if _, err := io.ReadFull(rd, t[blockHeader:]); err != nil {
		return bad("reading the trailer: %v", err)
	}
	count := binary.LittleEndian.Uint64(t[4:12])
	if !bytes.Equal(t, baseTrailer(count)) {
		return bad("malformed trailer")
	}
	if count != uint64(entries) {
		return bad("the trailer counts %d entries, the blocks hold %d", count, entries)
	}
	return nil
}
