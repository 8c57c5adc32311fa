package resp

import (
	"strings"
	"testing"
)

func TestParseReply(t *testing.T) {
	var b []byte
	b = AppendOK(b)
	b = AppendError(b, "ERR bad\r\nthing")
	b = AppendInt(b, -42)
	b = AppendBulk(b, []byte("hello\r\n"))
	b = AppendNull(b)
	b = AppendArray(b, 2)
	b = AppendBulkString(b, "a")
	b = AppendInt(b, 7)
	b = AppendNullArray(b)
	want := []Reply{
		{Type: TypeSimple, Data: []byte("OK")},
		{Type: TypeError, Data: []byte("ERR bad  thing")},
		{Type: TypeInt, Int: -42},
		{Type: TypeBulk, Data: []byte("hello\r\n"), Int: 7},
		{Type: TypeBulk, Int: -1},
		{Type: TypeArray, Int: 2},
		{Type: TypeBulk, Data: []byte("a"), Int: 1},
		{Type: TypeInt, Int: 7},
		{Type: TypeArray, Int: -1},
	}
	for i, w := range want {
		// Every prefix of the remaining input is incomplete, not an error.
		r, n, err := ParseReply(b, 0)
		if err != nil || n == 0 {
			t.Fatalf("reply %d: n=%d err=%v", i, n, err)
		}
		for k := range n {
			if _, m, err := ParseReply(b[:k], 0); m != 0 || err != nil {
				t.Fatalf("reply %d prefix %d: n=%d err=%v", i, k, m, err)
			}
		}
		if r.Type != w.Type || string(r.Data) != string(w.Data) || r.Int != w.Int || (w.Data == nil) != (r.Data == nil) {
			t.Fatalf("reply %d: got %+v, want %+v", i, r, w)
		}
		if r.IsNull() != (w.Int == -1) {
			t.Fatalf("reply %d: IsNull=%v", i, r.IsNull())
		}
		b = b[n:]
	}
}

func TestSkipReply(t *testing.T) {
	b := AppendArray(nil, 2)
	b = AppendArray(b, 2)
	b = AppendBulkString(b, "x")
	b = AppendInt(b, 1)
	b = AppendBulkString(b, "y")
	tail := AppendOK(nil)
	n, err := SkipReply(append(b, tail...), 0)
	if err != nil || n != len(b) {
		t.Fatalf("SkipReply = %d, %v; want %d", n, err, len(b))
	}
	if n, err := SkipReply(b[:len(b)-1], 0); n != 0 || err != nil {
		t.Fatalf("SkipReply of a partial reply = %d, %v", n, err)
	}
}

func TestParseReplyErrors(t *testing.T) {
	for _, src := range []string{"?x\r\n", ":abc\r\n", "$-2\r\n", "$5\r\nabcdefg", "*x\r\n", "+OK\n", strings.Repeat("+", DefaultMaxInlineLen+1)} {
		if _, _, err := ParseReply([]byte(src), 0); !IsProtocolError(err) {
			t.Errorf("ParseReply(%.20q) err = %v, want a protocol error", src, err)
		}
	}
	if _, _, err := ParseReply([]byte("$11\r\nhello world\r\n"), 10); !IsProtocolError(err) {
		t.Errorf("bulk over maxBulk: err = %v", err)
	}
}
