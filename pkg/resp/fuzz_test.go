package resp

import (
	"bytes"
	"testing"
)

// FuzzReader feeds arbitrary bytes, in arbitrary chunks, to the request
// reader: it must never panic, and every multibulk request it returns must
// re-encode to exactly the bytes it was read from.
func FuzzReader(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), uint8(3))
	f.Add([]byte("PING\r\nSET k \"a b\\x41\"\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, src []byte, chunk uint8) {
		lim := Limits{MaxBulkLen: 1 << 10, MaxInlineLen: 256, MaxArgs: 64, MaxQueryBuffer: 4 << 10}
		got, err := readAll(t, src, int(chunk)+1, lim)
		if err != nil && !IsProtocolError(err) {
			t.Fatalf("non-protocol error %v", err)
		}
		// The same input read whole gives the same requests.
		whole, err2 := readAll(t, src, 0, lim)
		if (err == nil) != (err2 == nil) || !equalArgs(got, whole) {
			t.Fatalf("chunked read %q (%v) differs from whole read %q (%v)", got, err, whole, err2)
		}
		// And with arguments of 4 bytes and more detached.
		det, err3 := readDetached(t, src, int(chunk)+1, lim, 4)
		if (err == nil) != (err3 == nil) || !equalArgs(got, det) {
			t.Fatalf("detached read %q (%v) differs from chunked read %q (%v)", det, err3, got, err)
		}
	})
}

// FuzzInline checks SplitInline against its inverse: arguments quoted the
// way redis-cli quotes them split back into the same arguments.
func FuzzInline(f *testing.F) {
	f.Add([]byte("SET k \"a\\x00b\""), []byte("v a l"))
	f.Add([]byte("'unbalanced"), []byte(""))
	f.Fuzz(func(t *testing.T, line, arg []byte) {
		// Arbitrary lines: no panic, arguments never longer than the line.
		argv, err := SplitInline(nil, bytes.Clone(line))
		if err != nil && !IsProtocolError(err) {
			t.Fatalf("non-protocol error %v", err)
		}
		total := 0
		for _, a := range argv {
			total += len(a)
		}
		if total > len(line) {
			t.Fatalf("arguments longer than the line")
		}
		// Round trip of a quoted argument.
		q := append([]byte("X "), quote(arg)...)
		argv, err = SplitInline(nil, q)
		if err != nil || len(argv) != 2 || !bytes.Equal(argv[1], arg) {
			t.Fatalf("quoted %q split into %q, %v", arg, argv, err)
		}
	})
}

// quote is redis-cli's sdscatrepr.
func quote(b []byte) []byte {
	out := []byte{'"'}
	for _, c := range b {
		switch c {
		case '\\', '"':
			out = append(out, '\\', c)
		case '\n':
			out = append(out, `\n`...)
		case '\r':
			out = append(out, `\r`...)
		case '\t':
			out = append(out, `\t`...)
		case '\a':
			out = append(out, `\a`...)
		case '\b':
			out = append(out, `\b`...)
		default:
			if c < 0x20 || c >= 0x7f {
				const hex = "0123456789abcdef"
				out = append(out, '\\', 'x', hex[c>>4], hex[c&15])
			} else {
				out = append(out, c)
			}
		}
	}
	return append(out, '"')
}
