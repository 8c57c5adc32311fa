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

// FuzzReply feeds arbitrary bytes to the reply parsers, which read every
// reply an attached server sends: they never panic, never claim more
// bytes than they were given, and agree with each other: SkipReply's
// length is the header ParseReply reads plus its elements', each skipped
// in turn, and any prefix of a complete reply is incomplete, not an error.
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR unknown\r\n", ":-42\r\n", "$5\r\nhello\r\n", "$-1\r\n", "*-1\r\n",
		"*2\r\n$3\r\nfoo\r\n*1\r\n:1\r\n", "*3\r\n*0\r\n+a\r\n$0\r\n\r\n", "$9999999999999\r\n", "*99999999999999\r\n",
		// RESP3 (HELLO 3).
		"_\r\n", ",3.14\r\n", ",-inf\r\n", "#t\r\n", "#f\r\n", "(3492890328409238509324\r\n",
		"=15\r\ntxt:Some string\r\n", "!21\r\nSYNTAX invalid syntax\r\n",
		"%2\r\n+first\r\n:1\r\n+second\r\n%1\r\n_\r\n~2\r\n#t\r\n,1.5\r\n",
		"~3\r\n+a\r\n*2\r\n_\r\n$1\r\nb\r\n%0\r\n",
		"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:2039123\r\n:9543892\r\n",
		">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n+OK\r\n",
		"%99999999999999\r\n", "|0\r\n|0\r\n_\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := ParseReply(b, 1<<10)
		if err != nil && !IsProtocolError(err) || n < 0 || n > len(b) {
			t.Fatalf("ParseReply(%q) = %+v, %d, %v", b, r, n, err)
		}
		total, err := SkipReply(b, 1<<10)
		if err != nil && !IsProtocolError(err) || total < 0 || total > len(b) {
			t.Fatalf("SkipReply(%q) = %d, %v", b, total, err)
		}
		if total == 0 {
			return
		}
		// Walk the same reply element by element.
		pos, want := 0, 1
		for want > 0 {
			r, n, err := ParseReply(b[pos:], 1<<10)
			if err != nil || n == 0 {
				t.Fatalf("SkipReply took %d bytes of %q, but element at %d: %d, %v", total, b, pos, n, err)
			}
			pos, want = pos+n, want-1
			want += int(r.Elements())
			if r.Type == TypeAttribute {
				want++ // the reply it annotates
			}
		}
		if pos != total {
			t.Fatalf("SkipReply(%q) = %d, the elements end at %d", b, total, pos)
		}
		for cut := range total {
			if m, err := SkipReply(b[:cut], 1<<10); m != 0 || err != nil {
				t.Fatalf("SkipReply of a %d-byte prefix of %q = %d, %v; want incomplete", cut, b[:total], m, err)
			}
		}
	})
}
