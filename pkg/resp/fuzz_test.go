package resp

import (
	"bytes"
	"slices"
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

// FuzzInline checks SplitInline against its inverse, QuoteInline: any
// arguments quoted split back into the same arguments.
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
		// Round trip: the line as one argument, and arg in the middle.
		want := []string{"X", string(line), string(arg), "Y"}
		q := QuoteInline(want)
		argv, err = SplitInline(nil, []byte(q))
		got := make([]string, len(argv))
		for i, a := range argv {
			got[i] = string(a)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%q quoted as %s split into %q, %v", want, q, got, err)
		}
	})
}
