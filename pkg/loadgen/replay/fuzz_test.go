package replay

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/resp"
)

// FuzzParse feeds arbitrary bytes to the capture parser: no input may
// panic; every line is counted once; every command is one RESP array of
// bulk strings named by its first argument; every unparsable line named
// carries the file and a line of it; Assign deals every command once; and
// the commands written back as a MONITOR capture parse into the same
// bytes. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte("OK\n1733412345.123456 [0 127.0.0.1:50312] \"SET\" \"key:1\" \"a \\\"b\\\" \\x00\\n\"\n1733412345.2 [0 lua] \"GET\" \"k\"\n"))
	f.Add([]byte("SET k 'single \\' quoted' \"double \\t\"\nGET k\n\nbad \"quote\n"))
	f.Add([]byte("1733412345.1 [0 unix:/tmp/r.sock] \"PING\"\r\n1733412345.0 [0 [::1]:1] \"a\"b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data), "f.txt")
		if err != nil {
			if !errors.Is(err, ErrEmpty) || !strings.HasPrefix(err.Error(), "f.txt: ") {
				t.Fatalf("error %v: want ErrEmpty naming the file", err)
			}
			return
		}
		if c.Commands+c.Skipped+c.Unparsable > c.Lines || int64(c.Len()) != c.Commands || c.Lines > int64(bytes.Count(data, []byte("\n"))+1) {
			t.Fatalf("stats %+v for %d commands, %d bytes", c.Stats, c.Len(), len(data))
		}
		for _, e := range c.Errors {
			if e.File != "f.txt" || e.Line < 1 || e.Line > c.Lines || e.Reason == "" {
				t.Fatalf("error without its position: %+v", e)
			}
		}
		var monitor strings.Builder
		dealt := 0
		for _, s := range c.Assign(3) {
			dealt += len(s)
		}
		if dealt != c.Len() {
			t.Fatalf("assign dealt %d of %d commands", dealt, c.Len())
		}
		for i := range c.Len() {
			a, err := decode(c.Command(i))
			if err != nil {
				t.Fatalf("command %d %q: %v", i, c.Command(i), err)
			}
			if n := c.Names[c.Name(i)]; n != asciiUpper(a[0]) && n != OtherName {
				t.Fatalf("command %d named %q, first argument %q", i, n, a[0])
			}
			fmt.Fprintf(&monitor, "1.%06d [0 c] %s\n", i%1000000, resp.QuoteInline(a))
		}
		back, err := Parse(strings.NewReader(monitor.String()), "g.txt")
		if err != nil || back.Len() != c.Len() || back.Unparsable != 0 {
			t.Fatalf("written back: %v, %d commands of %d, %v", err, back.Len(), c.Len(), back.Errors)
		}
		if !bytes.Equal(back.buf, c.buf) {
			t.Fatalf("written back, the commands differ")
		}
	})
}

// asciiUpper upper-cases the ASCII letters of s, as command names are.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
