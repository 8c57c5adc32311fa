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

// TestParseReplyRESP3 parses every RESP3 type, each prefix of a reply
// incomplete rather than an error.
func TestParseReplyRESP3(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want Reply
		elem int64
	}{
		{"_\r\n", Reply{Type: TypeNull, Int: -1}, 0},
		{",3.14\r\n", Reply{Type: TypeDouble, Data: []byte("3.14")}, 0},
		{",-inf\r\n", Reply{Type: TypeDouble, Data: []byte("-inf")}, 0},
		{"#t\r\n", Reply{Type: TypeBool, Int: 1}, 0},
		{"#f\r\n", Reply{Type: TypeBool, Int: 0}, 0},
		{"(-3492890328409238509324\r\n", Reply{Type: TypeBigNumber, Data: []byte("-3492890328409238509324")}, 0},
		{"=15\r\ntxt:Some string\r\n", Reply{Type: TypeVerbatim, Data: []byte("txt:Some string"), Int: 15}, 0},
		{"!21\r\nSYNTAX invalid syntax\r\n", Reply{Type: TypeBlobError, Data: []byte("SYNTAX invalid syntax"), Int: 21}, 0},
		{"%2\r\n", Reply{Type: TypeMap, Int: 2}, 4},
		{"~3\r\n", Reply{Type: TypeSet, Int: 3}, 3},
		{"|1\r\n", Reply{Type: TypeAttribute, Int: 1}, 2},
		{">4\r\n", Reply{Type: TypePush, Int: 4}, 4},
		{"%0\r\n", Reply{Type: TypeMap}, 0},
	} {
		r, n, err := ParseReply([]byte(tc.src), 0)
		if err != nil || n != len(tc.src) {
			t.Fatalf("ParseReply(%q) = %d, %v", tc.src, n, err)
		}
		if r.Type != tc.want.Type || string(r.Data) != string(tc.want.Data) || r.Int != tc.want.Int {
			t.Errorf("ParseReply(%q) = %+v, want %+v", tc.src, r, tc.want)
		}
		if r.Elements() != tc.elem {
			t.Errorf("%q: Elements() = %d, want %d", tc.src, r.Elements(), tc.elem)
		}
		if r.IsNull() != (tc.want.Type == TypeNull) || r.IsError() != (tc.want.Type == TypeBlobError) {
			t.Errorf("%q: IsNull %v, IsError %v", tc.src, r.IsNull(), r.IsError())
		}
		for k := range n {
			if _, m, err := ParseReply([]byte(tc.src[:k]), 0); m != 0 || err != nil {
				t.Fatalf("%q prefix %d: n=%d err=%v", tc.src, k, m, err)
			}
		}
	}
	if got := VerbatimText(Reply{Type: TypeVerbatim, Data: []byte("txt:hello")}); string(got) != "hello" {
		t.Errorf("VerbatimText = %q", got)
	}
}

// TestSkipReplyRESP3 skips nested RESP3 aggregates whole: a map holding
// a set and an array, an attribute with the reply it annotates, and a
// push between two replies as a reply of its own.
func TestSkipReplyRESP3(t *testing.T) {
	for _, tc := range []struct{ reply, tail string }{
		{"%2\r\n+first\r\n~2\r\n#t\r\n,1.5\r\n$6\r\nsecond\r\n*2\r\n_\r\n%1\r\n(1\r\n=7\r\ntxt:abc\r\n", "+OK\r\n"},
		{"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:1\r\n:2\r\n", ":3\r\n"},
		{"*2\r\n|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n_\r\n", "_\r\n"},
		{">3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$5\r\nhello\r\n", "$5\r\nvalue\r\n"},
		{"!3\r\nERR\r\n", "-ERR x\r\n"},
	} {
		n, err := SkipReply([]byte(tc.reply+tc.tail), 0)
		if err != nil || n != len(tc.reply) {
			t.Errorf("SkipReply(%q) = %d, %v; want %d", tc.reply+tc.tail, n, err, len(tc.reply))
		}
		for k := range len(tc.reply) {
			if m, err := SkipReply([]byte(tc.reply[:k]), 0); m != 0 || err != nil {
				t.Fatalf("SkipReply of %q = %d, %v; want incomplete", tc.reply[:k], m, err)
			}
		}
	}
}

func TestParseReplyRESP3Errors(t *testing.T) {
	for _, src := range []string{
		"_x\r\n", "#x\r\n", "#tt\r\n", ",\r\n", "(\r\n", "(12a\r\n", "=3\r\ntxt\r\n", "=5\r\ntxt-a\r\n",
		"!-1\r\n", "%-1\r\n", "~x\r\n", "|-2\r\n", ">\r\n",
	} {
		if _, _, err := ParseReply([]byte(src), 0); !IsProtocolError(err) {
			t.Errorf("ParseReply(%q) err = %v, want a protocol error", src, err)
		}
	}
	if _, _, err := ParseReply([]byte("!11\r\nhello world\r\n"), 10); !IsProtocolError(err) {
		t.Errorf("blob error over maxBulk: err = %v", err)
	}
}
