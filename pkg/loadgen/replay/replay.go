// Package replay reads a capture of commands for "kvbench bench --replay"
// to send again: the output of redis-cli MONITOR, or a file of inline
// commands as typed at redis-cli.
//
// # Formats
//
// A MONITOR capture has one command per line,
//
//	1733412345.123456 [0 127.0.0.1:50312] "SET" "key:1" "value"
//
// the time in seconds, the database and the client's address (or
// "unix:PATH" for a Unix socket, "lua" for a command a script ran), then
// the arguments in double quotes with MONITOR's escapes (\" \\ \n \r \t
// \a \b \xHH). MONITOR's first line, "OK", is its reply to MONITOR, not a
// command. A line of a script's ("[0 lua]") is skipped: the script's EVAL
// is in the capture too, and replaying both would run its commands twice.
//
// An inline file has one command per line, as redis-cli takes them:
// words separated by spaces, double-quoted strings with the escapes
// above, single-quoted strings taken literally (but for \').
//
// The format is decided once per file, by its first line that is neither
// blank nor MONITOR's "OK": a line starting "SECONDS.FRACTION [" makes
// the file a MONITOR capture, anything else an inline file. A line of the
// other format later on is unparsable.
//
// Commands after which a connection's replies no longer answer its
// requests one for one (Unreplayable: MONITOR, SUBSCRIBE, QUIT, HELLO…)
// are skipped too, wherever they are.
//
// # Encoded form
//
// Parse reads the file once and keeps every command RESP-encoded, back
// to back in one buffer, with its end offset, its name's index and (for
// MONITOR) its client's index and time: a few bytes per command beside
// its encoding, so that a capture of millions of commands loads in
// little more memory than its RESP bytes, and sending a command copies
// one slice.
package replay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// Format is the format of a capture file.
type Format string

// The formats.
const (
	// Monitor is redis-cli MONITOR's output.
	Monitor Format = "monitor"
	// Inline is one redis-cli command per line.
	Inline Format = "inline"
)

// Limits of a capture.
const (
	// MaxReported is how many unparsable lines Capture.Errors names.
	MaxReported = 5
	// MaxNames is the most command names a capture distinguishes: the
	// names after the first MaxNames-1 are counted together as
	// OtherName.
	MaxNames = 255
	// OtherName names the commands past MaxNames-1 names.
	OtherName = "OTHER"
	// MaxLine is the longest line read; a longer one is unparsable.
	MaxLine = 1 << 30
)

// Unreplayable are the commands a replay skips: after them the
// connection's replies no longer answer its requests one for one
// (a subscription, MONITOR, a replica's sync), it is closed (QUIT), or
// it speaks another protocol (HELLO).
var Unreplayable = []string{"MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "QUIT", "HELLO", "SYNC", "PSYNC"}

// ErrEmpty is returned by Parse for a file without a command to send.
var ErrEmpty = errors.New("no command to replay")

// Stats counts a capture's lines: Lines is Commands, Skipped,
// Unparsable, and the blank lines and MONITOR's "OK" together.
type Stats struct {
	// File is the capture's path, Format its format.
	File   string `json:"file"`
	Format Format `json:"format"`
	// Lines is every line of the file.
	Lines int64 `json:"lines"`
	// Commands is the lines parsed into a command to send.
	Commands int64 `json:"commands"`
	// Skipped is the lines left out on purpose: a script's commands
	// ("[0 lua]") and the Unreplayable commands.
	Skipped int64 `json:"skipped"`
	// Unparsable is the lines that could not be read as a command.
	Unparsable int64 `json:"unparsable"`
	// Clients is the number of client addresses of a MONITOR capture;
	// 0 for an inline file.
	Clients int `json:"clients"`
}

// LineError is an unparsable line: FILE:LINE: reason.
type LineError struct {
	File   string
	Line   int64
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// Capture is a parsed capture file, every command RESP-encoded.
type Capture struct {
	Stats
	// Names are the command names (the first argument upper-cased), in
	// order of first appearance.
	Names []string
	// Clients are a MONITOR capture's client addresses, in order of
	// first appearance; nil for an inline file. Clients on a Unix socket
	// share one address (MONITOR shows the socket's path), so they count
	// as one client.
	Clients []string
	// Errors are the first MaxReported unparsable lines.
	Errors []*LineError

	buf    []byte   // the commands, RESP-encoded, back to back
	ends   []int    // command i is buf[ends[i-1]:ends[i]]
	name   []uint8  // index in Names
	client []uint32 // index in Clients (MONITOR)
	at     []int64  // ns since the first command (MONITOR)
	t0     int64    // the first command's time, ns since the epoch
}

// ParseFile reads the capture at path (see Parse).
func ParseFile(path string) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a capture from r, named file in its errors. Unparsable
// lines are counted (Stats.Unparsable) and the first ones kept in
// Errors; the error is a read error, or ErrEmpty when no line holds a
// command.
func Parse(r io.Reader, file string) (*Capture, error) {
	p := parser{c: &Capture{Stats: Stats{File: file}}, names: map[string]uint8{}, clients: map[string]uint32{}}
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := p.readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, p.c.Lines+1, err)
		}
		p.line(line)
	}
	c := p.c
	c.Clients = p.clientList
	c.Stats.Clients = len(c.Clients)
	if c.Format == "" {
		c.Format = Inline
	}
	if len(c.ends) == 0 {
		return c, fmt.Errorf("%s: %w (%d lines, %d skipped, %d unparsable)", file, ErrEmpty, c.Lines, c.Skipped, c.Unparsable)
	}
	return c, nil
}

// parser is Parse's state.
type parser struct {
	c          *Capture
	long       []byte // a line longer than the reader's buffer
	tooLong    bool   // the current line passed MaxLine
	argv       [][]byte
	upper      []byte
	names      map[string]uint8
	clients    map[string]uint32
	clientList []string
}

// readLine returns the next line without its line ending, reading a
// line longer than the buffer into p.long; io.EOF when there is none.
// A line past MaxLine comes back empty with p.tooLong set.
func (p *parser) readLine(br *bufio.Reader) ([]byte, error) {
	p.long, p.tooLong = p.long[:0], false
	keep := func(b []byte) {
		if len(p.long)+len(b) > MaxLine {
			p.tooLong, p.long = true, p.long[:0]
		} else if !p.tooLong {
			p.long = append(p.long, b...)
		}
	}
	b, err := br.ReadSlice('\n')
	long := err == bufio.ErrBufferFull
	for err == bufio.ErrBufferFull {
		keep(b)
		b, err = br.ReadSlice('\n')
	}
	if long {
		keep(b)
		b = p.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if err == io.EOF && len(b) == 0 && !p.tooLong {
		return nil, io.EOF
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r")), nil
}

// line takes one line of the file.
func (p *parser) line(line []byte) {
	c := p.c
	c.Lines++
	if p.tooLong {
		p.bad(fmt.Sprintf("line longer than %d bytes", MaxLine))
		return
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if string(line) == "OK" && (c.Format == "" || c.Format == Monitor) {
		return // MONITOR's reply to MONITOR
	}
	if c.Format == "" {
		c.Format = Inline
		if _, ok := monitorTime(line); ok {
			c.Format = Monitor
		}
	}
	if c.Format == Inline {
		args, err := resp.SplitInline(p.argv[:0], line)
		p.argv = args
		switch {
		case err != nil:
			p.bad("unbalanced quotes")
		case len(args) == 0 || p.skip(args):
		default:
			p.add(args, 0, 0)
		}
		return
	}
	p.monitorLine(line)
}

// monitorLine takes a line of a MONITOR capture:
// SECONDS.FRACTION [DB ADDR] "ARG" ...
func (p *parser) monitorLine(line []byte) {
	t, ok := monitorTime(line)
	if !ok {
		p.bad(`not a MONITOR line: want SECONDS.FRACTION [DB CLIENT] "COMMAND" ...`)
		return
	}
	rest := line[bytes.IndexByte(line, '[')+1:]
	db := 0
	for db < len(rest) && rest[db] >= '0' && rest[db] <= '9' {
		db++
	}
	if db == 0 || db == len(rest) || rest[db] != ' ' {
		p.bad("no database number after [")
		return
	}
	rest = rest[db+1:]
	end := bytes.Index(rest, []byte("] "))
	if end < 0 {
		if bytes.HasSuffix(rest, []byte("]")) {
			p.bad("no command after the client")
		} else {
			p.bad("no ] after the client")
		}
		return
	}
	addr := rest[:end]
	if string(addr) == "lua" {
		p.c.Skipped++
		return
	}
	args, err := resp.SplitInline(p.argv[:0], rest[end+2:])
	p.argv = args
	switch {
	case err != nil:
		p.bad("unbalanced quotes")
		return
	case len(args) == 0:
		p.bad("no command after the client")
		return
	case p.skip(args):
		return
	}
	id, ok := p.clients[string(addr)]
	if !ok {
		id = uint32(len(p.clientList))
		p.clients[string(addr)] = id
		p.clientList = append(p.clientList, string(addr))
	}
	p.add(args, id, t)
}

// monitorTime parses the time that starts a MONITOR line, "SECONDS.FRACTION [",
// in ns since the epoch.
func monitorTime(line []byte) (int64, bool) {
	dot := bytes.IndexByte(line, '.')
	sp := bytes.Index(line, []byte(" ["))
	if dot < 1 || sp < dot+2 || sp-dot-1 > 9 || dot > 12 {
		return 0, false
	}
	sec, err := strconv.ParseInt(string(line[:dot]), 10, 64)
	if err != nil || sec < 0 || line[0] == '+' {
		return 0, false
	}
	frac := line[dot+1 : sp]
	var ns int64
	for i := range 9 {
		ns *= 10
		if i < len(frac) {
			d := frac[i]
			if d < '0' || d > '9' {
				return 0, false
			}
			ns += int64(d - '0')
		}
	}
	return sec*int64(time.Second) + ns, true
}

// skip upper-cases the command's name into p.upper, and counts it as
// skipped when it is Unreplayable.
func (p *parser) skip(args [][]byte) bool {
	p.upper = append(p.upper[:0], args[0]...)
	for i, b := range p.upper {
		if 'a' <= b && b <= 'z' {
			p.upper[i] = b - 'a' + 'A'
		}
	}
	if slices.Contains(Unreplayable, string(p.upper)) {
		p.c.Skipped++
		return true
	}
	return false
}

// add encodes one command, p.upper its name.
func (p *parser) add(args [][]byte, client uint32, t int64) {
	c := p.c
	id, ok := p.names[string(p.upper)]
	if !ok {
		if len(c.Names) < MaxNames-1 {
			id = uint8(len(c.Names))
			c.Names = append(c.Names, string(p.upper))
		} else {
			if len(c.Names) < MaxNames {
				c.Names = append(c.Names, OtherName)
			}
			id = MaxNames - 1
		}
		p.names[string(p.upper)] = id
	}
	c.buf = resp.AppendArray(c.buf, len(args))
	for _, a := range args {
		c.buf = resp.AppendBulk(c.buf, a)
	}
	c.ends = append(c.ends, len(c.buf))
	c.name = append(c.name, id)
	if c.Format == Monitor {
		if len(c.at) == 0 {
			c.t0 = t
		}
		c.client = append(c.client, client)
		c.at = append(c.at, max(t-c.t0, 0))
	}
	c.Commands++
}

// bad counts an unparsable line.
func (p *parser) bad(reason string) {
	c := p.c
	c.Unparsable++
	if len(c.Errors) < MaxReported {
		c.Errors = append(c.Errors, &LineError{File: c.File, Line: c.Lines, Reason: reason})
	}
}

// Len is the number of commands.
func (c *Capture) Len() int { return len(c.ends) }

// Command returns command i, RESP-encoded; it aliases the capture.
func (c *Capture) Command(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.buf[start:c.ends[i]:c.ends[i]]
}

// Name returns the index in Names of command i's name.
func (c *Capture) Name(i int) int { return int(c.name[i]) }

// Timed reports whether the commands have times (a MONITOR capture).
func (c *Capture) Timed() bool { return c.Format == Monitor }

// At returns command i's time after the first command's; 0 for an
// inline file.
func (c *Capture) At(i int) time.Duration {
	if c.at == nil {
		return 0
	}
	return time.Duration(c.at[i])
}

// Span is the time from the first command to the last.
func (c *Capture) Span() time.Duration {
	if len(c.at) == 0 {
		return 0
	}
	return time.Duration(c.at[len(c.at)-1])
}

// Bytes is the size of the encoded commands.
func (c *Capture) Bytes() int { return len(c.buf) }

// Assign deals the commands to n streams (connections), each keeping the
// capture's order: in a MONITOR capture client k (in order of first
// appearance) goes to stream k mod n, so each client's commands stay in
// order on one connection; in an inline file, which has no clients,
// command i goes to stream i mod n. It returns each stream's command
// indices, ascending.
func (c *Capture) Assign(n int) [][]uint32 {
	counts := make([]int, n)
	stream := func(i int) int {
		if c.client != nil {
			return int(c.client[i]) % n
		}
		return i % n
	}
	for i := range c.ends {
		counts[stream(i)]++
	}
	out := make([][]uint32, n)
	for k := range out {
		out[k] = make([]uint32, 0, counts[k])
	}
	for i := range c.ends {
		k := stream(i)
		out[k] = append(out[k], uint32(i))
	}
	return out
}
