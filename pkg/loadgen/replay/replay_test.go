package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// args decodes command i of c back into its arguments, checking that
// it is one RESP array of bulk strings and nothing more.
func args(t *testing.T, c *Capture, i int) []string {
	t.Helper()
	out, err := decode(c.Command(i))
	if err != nil {
		t.Fatalf("command %d %q: %v", i, c.Command(i), err)
	}
	return out
}

func decode(b []byte) ([]string, error) {
	r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil || n == 0 || r.Type != resp.TypeArray || r.Int < 1 {
		return nil, fmt.Errorf("not an array: %v", err)
	}
	b = b[n:]
	var out []string
	for range r.Int {
		e, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if err != nil || n == 0 || e.Type != resp.TypeBulk || e.IsNull() {
			return nil, fmt.Errorf("element %d not a bulk string: %v", len(out), err)
		}
		out = append(out, string(e.Data))
		b = b[n:]
	}
	if len(b) > 0 {
		return nil, fmt.Errorf("%d bytes after the array", len(b))
	}
	return out, nil
}

func parse(t *testing.T, text string) *Capture {
	t.Helper()
	c, err := Parse(strings.NewReader(text), "cap.txt")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseMonitorQuoting(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"plain", `"SET" "key:1" "value"`, []string{"SET", "key:1", "value"}},
		{"quote", `"SET" "k" "say \"hi\""`, []string{"SET", "k", `say "hi"`}},
		{"backslash", `"SET" "k" "a\\b"`, []string{"SET", "k", `a\b`}},
		{"newline", `"SET" "k" "a\nb"`, []string{"SET", "k", "a\nb"}},
		{"carriage return", `"SET" "k" "a\rb"`, []string{"SET", "k", "a\rb"}},
		{"tab", `"SET" "k" "a\tb"`, []string{"SET", "k", "a\tb"}},
		{"bell and backspace", `"SET" "k" "\a\b"`, []string{"SET", "k", "\a\b"}},
		{"hex", `"SET" "k" "\x00\xff\x7F"`, []string{"SET", "k", "\x00\xff\x7f"}},
		{"spaces", `"SET" "k" "a b  c"`, []string{"SET", "k", "a b  c"}},
		{"empty argument", `"SET" "k" ""`, []string{"SET", "k", ""}},
		{"one word", `"PING"`, []string{"PING"}},
		{"lower case", `"set" "k" "v"`, []string{"set", "k", "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parse(t, "OK\n1733412345.123456 [0 127.0.0.1:50312] "+tc.line+"\n")
			if c.Format != Monitor || c.Len() != 1 || c.Unparsable != 0 {
				t.Fatalf("format %s, %d commands, %d unparsable (%v)", c.Format, c.Len(), c.Unparsable, c.Errors)
			}
			if got := args(t, c, 0); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if c.Names[c.Name(0)] != strings.ToUpper(tc.want[0]) {
				t.Fatalf("name %q", c.Names[c.Name(0)])
			}
		})
	}
}

func TestParseInlineQuoting(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string
	}{
		{"words", `SET key:1 value`, []string{"SET", "key:1", "value"}},
		{"extra spaces", `  SET   k  v  `, []string{"SET", "k", "v"}},
		{"double quotes", `SET k "a b"`, []string{"SET", "k", "a b"}},
		{"escapes", `SET k "\"\\\n\r\t\x41"`, []string{"SET", "k", "\"\\\n\r\tA"}},
		{"single quotes literal", `SET k 'a\nb "c"'`, []string{"SET", "k", `a\nb "c"`}},
		{"single quote escape", `SET k 'it\'s'`, []string{"SET", "k", "it's"}},
		{"empty quoted", `SET k ""`, []string{"SET", "k", ""}},
		{"crlf", "SET k v\r", []string{"SET", "k", "v"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parse(t, tc.line+"\n")
			if c.Format != Inline || c.Len() != 1 || c.Unparsable != 0 {
				t.Fatalf("format %s, %d commands, %d unparsable (%v)", c.Format, c.Len(), c.Unparsable, c.Errors)
			}
			if got := args(t, c, 0); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseMonitorClientsAndTimes(t *testing.T) {
	c := parse(t, `OK
1733412345.100000 [0 127.0.0.1:50312] "SET" "a" "1"
1733412345.250000 [0 unix:/tmp/redis.sock] "GET" "a"
1733412345.300000 [0 lua] "SET" "b" "2"
1733412345.400000 [3 [::1]:6000] "INCR" "n"
1733412345.500000 [0 127.0.0.1:50999] "subscribe" "ch"
1733412346.1 [0 127.0.0.1:50312] "DEL" "a"
`)
	if c.Lines != 7 || c.Commands != 4 || c.Skipped != 2 || c.Unparsable != 0 {
		t.Fatalf("stats %+v", c.Stats)
	}
	if want := []string{"127.0.0.1:50312", "unix:/tmp/redis.sock", "[::1]:6000"}; !slices.Equal(c.Clients, want) || c.Stats.Clients != 3 {
		t.Fatalf("clients %q, want %q", c.Clients, want)
	}
	wantAt := []time.Duration{0, 150 * time.Millisecond, 300 * time.Millisecond, time.Second}
	for i, w := range wantAt {
		if c.At(i) != w {
			t.Errorf("command %d at %v, want %v", i, c.At(i), w)
		}
	}
	if c.Span() != time.Second || !c.Timed() {
		t.Fatalf("span %v", c.Span())
	}
	if want := []string{"SET", "GET", "INCR", "DEL"}; !slices.Equal(c.Names, want) {
		t.Fatalf("names %q", c.Names)
	}
	// Client 0 (SET, DEL) and client 2 (INCR) share stream 0 of 2.
	got := c.Assign(2)
	if !slices.Equal(got[0], []uint32{0, 2, 3}) || !slices.Equal(got[1], []uint32{1}) {
		t.Fatalf("assign %v", got)
	}
}

func TestParseInlineAssign(t *testing.T) {
	c := parse(t, "SET a 1\nGET a\nINCR n\n\nDEL a\n")
	if c.Timed() || c.Clients != nil || c.Span() != 0 {
		t.Fatalf("inline capture with times or clients: %+v", c.Stats)
	}
	got := c.Assign(3)
	if !slices.Equal(got[0], []uint32{0, 3}) || !slices.Equal(got[1], []uint32{1}) || !slices.Equal(got[2], []uint32{2}) {
		t.Fatalf("assign %v", got)
	}
}

func TestParseBadLines(t *testing.T) {
	c := parse(t, `OK
1733412345.100000 [0 127.0.0.1:1] "SET" "a" "1"
1733412345.100000 [0 127.0.0.1:1] "SET" "a
garbage
1733412345.100000 [x 127.0.0.1:1] "GET" "a"
1733412345.100000 [0 127.0.0.1:1]
1733412345.100000 [0 127.0.0.1:1] "GET" "a"

1733412345.100000 [0 127.0.0.1:1 "GET" "a"
1733412345.100000 [0 127.0.0.1:1] "a"b
`)
	if c.Lines != 10 || c.Commands != 2 || c.Unparsable != 6 || c.Skipped != 0 {
		t.Fatalf("stats %+v", c.Stats)
	}
	want := []string{
		"cap.txt:3: unbalanced quotes",
		"cap.txt:4: not a MONITOR line",
		"cap.txt:5: no database number after [",
		"cap.txt:6: no command after the client",
		"cap.txt:9: no ] after the client",
	}
	if len(c.Errors) != MaxReported {
		t.Fatalf("%d errors, want %d: %v", len(c.Errors), MaxReported, c.Errors)
	}
	for i, w := range want {
		if !strings.HasPrefix(c.Errors[i].Error(), w) {
			t.Errorf("error %d: %q, want it to start %q", i, c.Errors[i], w)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, text := range []string{"", "OK\n", "\n\n", "1733412345.1 [0 lua] \"SET\" \"a\" \"1\"\n", "\"unbalanced\n"} {
		_, err := Parse(strings.NewReader(text), "e.txt")
		if !errors.Is(err, ErrEmpty) || !strings.HasPrefix(err.Error(), "e.txt: ") {
			t.Errorf("%q: %v, want ErrEmpty naming the file", text, err)
		}
	}
}

func TestParseLongLine(t *testing.T) {
	value := strings.Repeat("v", 3<<20) // longer than the reader's buffer
	c := parse(t, "SET k "+value+"\nGET k")
	if c.Len() != 2 || args(t, c, 0)[2] != value || args(t, c, 1)[1] != "k" {
		t.Fatalf("%d commands", c.Len())
	}
}

func TestParseManyNames(t *testing.T) {
	var b strings.Builder
	for i := range MaxNames + 10 {
		b.WriteString("CMD" + strings.Repeat("X", i) + "\n")
	}
	c := parse(t, b.String())
	if len(c.Names) != MaxNames || c.Names[MaxNames-1] != OtherName || c.Name(c.Len()-1) != MaxNames-1 {
		t.Fatalf("%d names, the last %q", len(c.Names), c.Names[len(c.Names)-1])
	}
}

func TestParseMillionCommandsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a large capture")
	}
	var b strings.Builder
	for i := range 1_000_000 {
		b.WriteString(`1733412345.123456 [0 127.0.0.1:5031`)
		b.WriteByte(byte('0' + i%10))
		b.WriteString(`] "SET" "key:000012345678" "xxx"` + "\n")
	}
	text := b.String()
	c := parse(t, text)
	// One buffer plus a few slices of a few bytes per command: the
	// encoding (47 bytes a command here) and ends, names, clients and
	// times (8+1+4+8), well under the file's size twice over.
	perCmd := (cap(c.buf) + 8*cap(c.ends) + cap(c.name) + 4*cap(c.client) + 8*cap(c.at)) / c.Len()
	if c.Len() != 1_000_000 || len(c.Clients) != 10 || perCmd > 2*len(text)/c.Len() {
		t.Fatalf("%d commands, %d clients, %d bytes a command", c.Len(), len(c.Clients), perCmd)
	}
}

// BenchmarkParse reads a MONITOR capture of SETs and GETs of 50 clients,
// as redis-benchmark -t set,get would leave: the cost per line of
// loading a capture before a replay.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	for i := range 100_000 {
		cmd := `"GET" "key:000000012345"`
		if i%2 == 0 {
			cmd = `"SET" "key:000000012345" "xxx"`
		}
		fmt.Fprintf(&sb, "1733412345.%06d [0 127.0.0.1:%d] %s\n", i, 40000+i%50, cmd)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(strings.NewReader(text), "b.txt"); err != nil {
			b.Fatal(err)
		}
	}
}
