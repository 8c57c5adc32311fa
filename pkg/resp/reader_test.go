package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses every request in src, reading it through a reader that
// returns at most chunk bytes per Read, and returns the arguments as strings.
func readAll(t testing.TB, src []byte, chunk int, lim Limits) ([][]string, error) {
	return readDetached(t, src, chunk, lim, 0)
}

// readDetached is readAll with arguments of detach bytes and more
// detached (none if 0); it checks that each detached argument is where
// Detached says and is still intact once everything is read.
func readDetached(t testing.TB, src []byte, chunk int, lim Limits, detach int) ([][]string, error) {
	t.Helper()
	var in io.Reader = bytes.NewReader(src)
	if chunk > 0 {
		in = &chunkReader{b: src, n: chunk}
	}
	rd := NewReader(in, lim)
	type kept struct {
		arg  []byte
		want string
	}
	var detached []kept
	var allocated [][]byte
	if detach > 0 {
		rd.Detach(detach, func(_ [][]byte, n int) []byte {
			b := make([]byte, n+2)
			allocated = append(allocated, b)
			return b
		})
		defer func() {
			for _, k := range detached {
				if string(k.arg) != k.want {
					t.Fatalf("a detached argument changed after later reads")
				}
			}
		}()
	}
	var out [][]string
	var consumed int64
	for {
		for {
			cmd, ok, err := rd.Next()
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			var args []string
			for _, a := range cmd.Args {
				args = append(args, string(a))
			}
			if got := rd.Offset(); got != consumed+int64(len(cmd.Raw)) && cmd.Raw != nil {
				t.Fatalf("Offset %d after a %d-byte request at %d", got, len(cmd.Raw), consumed)
			}
			if cmd.Detached > 0 {
				a := cmd.Args[cmd.Detached]
				if len(allocated) == 0 || len(a) > 0 && &a[0] != &allocated[len(allocated)-1][0] {
					t.Fatalf("argument %d is not in the last allocated memory", cmd.Detached)
				}
				detached = append(detached, kept{a, string(a)})
			}
			consumed = rd.Offset()
			if cmd.Raw != nil && !bytes.Equal(cmd.Raw, AppendCommand(nil, cmd.Args...)) {
				t.Fatalf("Raw %q does not re-encode args %q", cmd.Raw, args)
			}
			out = append(out, args)
		}
		if err := rd.Fill(); err != nil {
			if errors.Is(err, io.EOF) {
				if got := rd.Offset() + int64(rd.Buffered()); got != int64(len(src)) {
					t.Fatalf("%d bytes consumed or buffered at the end of %d", got, len(src))
				}
				return out, nil
			}
			return out, err
		}
	}
}

type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

func TestReaderMultibulk(t *testing.T) {
	var src []byte
	want := [][]string{
		{"SET", "key", "value"},
		{"GET", "key"},
		{"SET", "bin", "a\r\nb\x00c"},
		{"SET", "empty", ""},
		{"PING"},
	}
	for _, c := range want {
		src = AppendCommandString(src, c...)
	}
	src = append(src, "*0\r\n*-1\r\n"...) // empty requests are skipped
	for _, chunk := range []int{0, 1, 2, 3, 7, 64} {
		got, err := readAll(t, src, chunk, Limits{})
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if !equalArgs(got, want) {
			t.Fatalf("chunk %d: got %q, want %q", chunk, got, want)
		}
	}
}

func TestReaderLargeRequests(t *testing.T) {
	big := strings.Repeat("x", 300<<10) // larger than any buffer kept
	many := make([]string, 50000)       // more args than fit one buffer
	for i := range many {
		many[i] = "a"
	}
	many[0] = "MSET"
	want := [][]string{{"SET", "k", big}, many, {"GET", "k"}}
	var src []byte
	for _, c := range want {
		src = AppendCommandString(src, c...)
	}
	for _, chunk := range []int{0, 1000, 16 << 10} {
		got, err := readAll(t, src, chunk, Limits{})
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if !equalArgs(got, want) {
			t.Fatalf("chunk %d: requests differ", chunk)
		}
	}
}

// TestReaderDetach: large arguments read into memory of their own give the
// same requests as read through the buffer, in any chunks, and stay intact
// after later reads.
func TestReaderDetach(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	mid := strings.Repeat("y", 20<<10)
	want := [][]string{
		{"SET", "k", big},
		{"GET", "k"},
		{"MSET", "a", mid, "b", big, "c", "small"},
		{"SET", "k2", mid},
		{"PING"},
	}
	var src []byte
	for _, c := range want {
		src = AppendCommandString(src, c...)
	}
	for _, detach := range []int{1, 16 << 10, 1 << 20} {
		for _, chunk := range []int{0, 1, 1000, 16 << 10} {
			got, err := readDetached(t, src, chunk, Limits{}, detach)
			if err != nil {
				t.Fatalf("detach %d, chunk %d: %v", detach, chunk, err)
			}
			if !equalArgs(got, want) {
				t.Fatalf("detach %d, chunk %d: requests differ", detach, chunk)
			}
		}
	}
	// A detached argument's CRLF is checked as any other's.
	bad := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalueXX")
	if _, err := readDetached(t, bad, 4, Limits{}, 1); !IsProtocolError(err) {
		t.Fatalf("a detached argument without CRLF: %v, want a protocol error", err)
	}
}

func TestReaderInline(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"PING\r\n", []string{"PING"}},
		{"set  k   v\n", []string{"set", "k", "v"}},
		{"\tGET\tk \r\n", []string{"GET", "k"}},
		{`SET k "a b"` + "\r\n", []string{"SET", "k", "a b"}},
		{`SET k "\x41\x4a\n\t\"\\"` + "\r\n", []string{"SET", "k", "AJ\n\t\"\\"}},
		{`SET k "\xZZ"` + "\r\n", []string{"SET", "k", "xZZ"}},
		{`SET k 'it\'s "raw" \n'` + "\r\n", []string{"SET", "k", `it's "raw" \n`}},
		{`SET k ""` + "\r\n", []string{"SET", "k", ""}},
		{`SET k foo"bar baz"` + "\r\n", []string{"SET", "k", "foobar baz"}},
	}
	for _, tt := range tests {
		got, err := readAll(t, []byte(tt.line), 0, Limits{})
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		if !equalArgs(got, [][]string{tt.want}) {
			t.Errorf("%q: got %q, want %q", tt.line, got, tt.want)
		}
	}
	// Blank lines are not requests.
	got, err := readAll(t, []byte("\r\n\n  \r\nPING\r\n"), 0, Limits{})
	if err != nil || !equalArgs(got, [][]string{{"PING"}}) {
		t.Fatalf("blank lines: got %q, %v", got, err)
	}
}

func TestReaderErrors(t *testing.T) {
	lim := Limits{MaxBulkLen: 1000, MaxInlineLen: 100, MaxArgs: 10, MaxQueryBuffer: 4000}
	bulk900 := "$900\r\n" + strings.Repeat("a", 900) + "\r\n"
	tests := []struct {
		name, src, want string
	}{
		{"unbalanced double", "SET k \"abc\r\n", "unbalanced quotes"},
		{"unbalanced single", "SET k 'abc\r\n", "unbalanced quotes"},
		{"quote then text", "SET k \"a\"b\r\n", "unbalanced quotes"},
		{"long inline", strings.Repeat("a", 101), "too big inline request"},
		{"long inline line", strings.Repeat("a", 150) + "\r\n", "too big inline request"},
		{"bad count", "*x\r\n", "invalid multibulk length"},
		{"too many args", "*11\r\n", "invalid multibulk length"},
		{"huge count", "*99999999999999999999\r\n", "invalid multibulk length"},
		{"long count", "*" + strings.Repeat("1", 200), "too big mbulk count string"},
		{"no dollar", "*1\r\n+PING\r\n", "expected '$', got '+'"},
		{"binary type", "*1\r\n\x01", `expected '$', got '\x01'`},
		{"negative bulk", "*1\r\n$-5\r\n", "invalid bulk length"},
		{"huge bulk", "*1\r\n$1001\r\n", "invalid bulk length"},
		{"bad bulk", "*1\r\n$1a\r\n", "invalid bulk length"},
		{"bulk no crlf", "*1\r\n$2\r\nabcd", "not terminated by CRLF"},
		{"count no cr", "*1\n", "not terminated by CRLF"},
		{"query buffer", "*2\r\n" + strings.Repeat(bulk900, 2) + "*5\r\n" + strings.Repeat(bulk900, 5), "query buffer limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(t, []byte(tt.src), 3, lim)
			if !IsProtocolError(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a protocol error containing %q", err, tt.want)
			}
		})
	}
}

// Before authentication a request may declare UnauthMaxArgs arguments of
// UnauthMaxBulkLen bytes at most; the limits go once lifted.
func TestReaderUnauthenticated(t *testing.T) {
	at16K := "*1\r\n$16384\r\n" + strings.Repeat("a", 16384) + "\r\n"
	over16K := "*1\r\n$16385\r\n" + strings.Repeat("a", 16385) + "\r\n"
	ten := "*10\r\n" + strings.Repeat("$1\r\na\r\n", 10)
	eleven := "*11\r\n" + strings.Repeat("$1\r\na\r\n", 11)
	for _, tt := range []struct{ src, want string }{
		{at16K, ""}, {ten, ""},
		{over16K, "Protocol error: unauthenticated bulk length"},
		{"*1\r\n$400000000\r\n", "Protocol error: unauthenticated bulk length"},
		{eleven, "Protocol error: unauthenticated multibulk length"},
	} {
		rd := NewReader(strings.NewReader(tt.src), Limits{})
		rd.Unauthenticated(true)
		var err error
		for err == nil {
			if _, ok, nerr := rd.Next(); nerr != nil || ok {
				err = nerr
				break
			}
			err = rd.Fill()
		}
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want || !IsProtocolError(err)) {
			t.Errorf("%.20q: err = %v, want %q", tt.src, err, tt.want)
		}
	}
	rd := NewReader(strings.NewReader(over16K+eleven), Limits{})
	rd.Unauthenticated(true)
	rd.Unauthenticated(false)
	for n := 0; n < 2; {
		cmd, ok, err := rd.Next()
		switch {
		case err != nil:
			t.Fatalf("after the limits are lifted: %v", err)
		case ok:
			if len(cmd.Args) != []int{1, 11}[n] {
				t.Fatalf("request %d has %d arguments", n, len(cmd.Args))
			}
			n++
		default:
			if err := rd.Fill(); err != nil {
				t.Fatalf("after the limits are lifted: %v", err)
			}
		}
	}
}

// Admit is asked, once per request, before a large request whose bytes
// are still arriving is held; its error fails the request.
func TestReaderAdmit(t *testing.T) {
	src := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + strings.Repeat("v", 100000) + "\r\n*1\r\n$4\r\nPING\r\n"
	var asked []int64
	rd := NewReader(&chunkReader{b: []byte(src), n: 4096}, Limits{})
	rd.Admit(64<<10, func(n int64) error { asked = append(asked, n); return nil })
	var names []string
	for len(names) < 2 {
		cmd, ok, err := rd.Next()
		switch {
		case err != nil:
			t.Fatal(err)
		case ok:
			names = append(names, string(cmd.Args[0]))
		default:
			if err := rd.Fill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(asked) != 1 || asked[0] != int64(len(src)-len("*1\r\n$4\r\nPING\r\n")) {
		t.Fatalf("admit asked for %v, want once for the SET's %d bytes", asked, len(src)-14)
	}
	refused := errors.New("no room")
	rd = NewReader(strings.NewReader("*2\r\n$3\r\nSET\r\n$500000000\r\nabc"), Limits{})
	rd.Admit(64<<10, func(int64) error { return refused })
	for {
		_, _, err := rd.Next()
		if err != nil {
			if !errors.Is(err, refused) {
				t.Fatalf("err = %v, want admit's", err)
			}
			break
		}
		if err := rd.Fill(); err != nil {
			t.Fatalf("the refused request was read on: %v", err)
		}
	}
}

// A declared length is never allocated: a header promising 500 MiB with
// a few bytes behind it leaves the buffer at its minimum size.
func TestReaderDoesNotTrustDeclaredLengths(t *testing.T) {
	rd := NewReader(strings.NewReader("*1000000\r\n$500000000\r\nabc"), Limits{})
	for range 3 {
		if err := rd.Fill(); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if _, ok, err := rd.Next(); ok || err != nil {
			t.Fatalf("Next on a partial request: ok=%v err=%v", ok, err)
		}
	}
	if cap(rd.buf) > minBufSize || cap(rd.argv) > 0 {
		t.Fatalf("buffer %d bytes, %d args allocated for a partial request", cap(rd.buf), cap(rd.argv))
	}
}

func TestReaderReadErrors(t *testing.T) {
	// A read error comes after the complete requests buffered before it.
	src := AppendCommandString(nil, "PING")
	rd := NewReader(iotest.DataErrReader(bytes.NewReader(src)), Limits{})
	if err := rd.Fill(); err != nil {
		t.Fatal(err)
	}
	if cmd, ok, err := rd.Next(); !ok || err != nil || string(cmd.Args[0]) != "PING" {
		t.Fatalf("got %q %v %v", cmd.Args, ok, err)
	}
	if err := rd.Fill(); !errors.Is(err, io.EOF) {
		t.Fatalf("Fill after the data: %v, want EOF", err)
	}
}

func equalArgs(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func BenchmarkReaderPipeline(b *testing.B) {
	var batch []byte
	for i := range 128 {
		batch = AppendCommandString(batch, "SET", "key:"+strings.Repeat("0", 10)+string(rune('a'+i%26)), strings.Repeat("v", 32))
	}
	src := &repeatReader{b: batch}
	rd := NewReader(src, Limits{})
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := rd.Fill(); err != nil {
			b.Fatal(err)
		}
		for {
			_, ok, err := rd.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/cmd")
}

// repeatReader returns b on every Read, as a client sending the same batch.
type repeatReader struct{ b []byte }

func (r *repeatReader) Read(p []byte) (int, error) { return copy(p, r.b), nil }
