package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/resp"
)

// Placeholders of a Command's arguments. Every occurrence is a new draw
// from the command's key sequence, so "MSET __key__ __data__ __key__
// __data__" writes two keys, as redis-benchmark's MSET writes ten.
const (
	// PlaceholderKey is a key: Config.KeyPrefix, then the index
	// zero-padded to KeyWidth(Config.Keyspace) (memtier_benchmark's).
	PlaceholderKey = "__key__"
	// PlaceholderRandInt is a key index alone, zero-padded to 12 digits
	// (redis-benchmark's "-r" substitution).
	PlaceholderRandInt = "__rand_int__"
	// PlaceholderData is a value of Config.ValueSize bytes, the one the
	// seed gives the first key of the request.
	PlaceholderData = "__data__"
)

// RandIntWidth is the width of PlaceholderRandInt, as redis-benchmark's.
const RandIntWidth = 12

// MaxCommands is the most commands a mix may have.
const MaxCommands = 255

// Command is one command of a mix (Config.Commands): its arguments with
// placeholders, its share of the requests and its key order.
type Command struct {
	// Name names the command in reports; empty means Args[0] upper-cased.
	Name string
	// Args is the command and its arguments; PlaceholderKey,
	// PlaceholderRandInt and PlaceholderData are replaced in each request
	// (also inside a longer argument, "user:__rand_int__").
	Args []string
	// Ratio is the command's weight in the mix: it gets
	// Ratio/(sum of Ratios) of the requests, chosen at random per request.
	// 0 means 1, as memtier_benchmark's default.
	Ratio int
	// KeyPattern is the order of the command's keys; empty means
	// Config.KeyPattern.
	KeyPattern KeyPattern
	// Inline sends the command as an inline request ("PING\r\n") instead
	// of a RESP array.
	Inline bool
}

// String is the command as it would be typed.
func (c Command) String() string { return strings.Join(c.Args, " ") }

// Placeholder kinds of a piece.
const (
	phNone uint8 = iota
	phDigits
	phData
)

// piece is literal bytes followed by a placeholder.
type piece struct {
	lit   []byte
	kind  uint8
	width int // phDigits
}

// cmdPlan is a Command compiled: the request is its pieces in order.
type cmdPlan struct {
	name   string
	text   string
	pieces []piece
	cfg    Config // the key sequence's settings (pattern, seed)
}

// cmdCount is what a connection counts per command.
type cmdCount struct{ requests, errors int64 }

// CommandResult is one command's share of a mix's measured phase.
type CommandResult struct {
	// Name is Command.Name; Command the command as typed.
	Name, Command string
	// Requests is the number of replies; Errors how many were error
	// replies.
	Requests, Errors int64
	// QPS is Requests per second of the phase's Elapsed.
	QPS float64
	// Latency summarizes Histogram, in microseconds.
	Latency Latency
	// Histogram holds the command's latencies in nanoseconds.
	Histogram *hdrhistogram.Histogram
}

// commandName is a command's reporting name.
func commandName(c Command) string {
	if c.Name != "" {
		return c.Name
	}
	if len(c.Args) == 0 {
		return ""
	}
	return strings.ToUpper(c.Args[0])
}

// commandErrors checks the mix of c.
func (c Config) commandErrors() []error {
	if len(c.Commands) == 0 {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Commands) > MaxCommands {
		bad("%d commands: want at most %d", len(c.Commands), MaxCommands)
	}
	for i, cmd := range c.Commands {
		if len(cmd.Args) == 0 || cmd.Args[0] == "" {
			bad("command %d: empty", i+1)
			continue
		}
		if cmd.Ratio < 0 {
			bad("command %q: ratio %d: want >= 0", cmd.String(), cmd.Ratio)
		}
		switch cmd.KeyPattern {
		case "", KeyRandom, KeySequential, KeyPermutation, KeyZipf, KeyGaussian:
		default:
			bad("command %q: key pattern %q: want random, sequential, permutation, zipf or gaussian", cmd.String(), cmd.KeyPattern)
		}
		if cmd.Inline {
			for _, a := range cmd.Args {
				if a == "" || strings.ContainsAny(a, " \t\r\n\"'") {
					bad("command %q: argument %q cannot be sent inline", cmd.String(), a)
				}
			}
		}
	}
	if c.VerifyGet {
		bad("verify-get does not apply to a command mix")
	}
	return errs
}

// compileCommands returns the plans of c.Commands.
func compileCommands(c Config) []cmdPlan {
	var out []cmdPlan
	for i, cmd := range c.Commands {
		kc := c
		if cmd.KeyPattern != "" {
			kc.KeyPattern = cmd.KeyPattern
		}
		if kc.KeyPattern == KeyZipf && kc.Zipf == 0 {
			kc.Zipf = DefaultZipf
		}
		if i > 0 { // the first command's keys are those of a set/get run
			kc.Seed = int64(mix64(uint64(c.Seed) ^ mix64(uint64(i))))
		}
		cp := cmdPlan{name: commandName(cmd), text: cmd.String(), cfg: kc}
		var lit []byte
		add := func(b []byte) { lit = append(lit, b...) }
		flush := func(kind uint8, width int) {
			cp.pieces = append(cp.pieces, piece{lit: lit, kind: kind, width: width})
			lit = nil
		}
		if !cmd.Inline {
			add(resp.AppendArray(nil, len(cmd.Args)))
		}
		for j, a := range cmd.Args {
			if cmd.Inline {
				if j > 0 {
					add([]byte{' '})
				}
			} else {
				add([]byte("$" + strconv.Itoa(argLen(a, c)) + "\r\n"))
			}
			for a != "" {
				k, ph := nextPlaceholder(a)
				if k < 0 {
					add([]byte(a))
					break
				}
				add([]byte(a[:k]))
				switch ph {
				case PlaceholderKey:
					add([]byte(c.KeyPrefix))
					flush(phDigits, KeyWidth(c.Keyspace))
				case PlaceholderRandInt:
					flush(phDigits, RandIntWidth)
				case PlaceholderData:
					flush(phData, 0)
				}
				a = a[k+len(ph):]
			}
			if !cmd.Inline {
				add([]byte("\r\n"))
			}
		}
		if cmd.Inline {
			add([]byte("\r\n"))
		}
		flush(phNone, 0)
		out = append(out, cp)
	}
	return out
}

// nextPlaceholder finds the first placeholder in a: its index (-1: none)
// and which.
func nextPlaceholder(a string) (int, string) {
	at, which := -1, ""
	for _, ph := range []string{PlaceholderKey, PlaceholderRandInt, PlaceholderData} {
		if k := strings.Index(a, ph); k >= 0 && (at < 0 || k < at) {
			at, which = k, ph
		}
	}
	return at, which
}

// argLen is the length of argument a once its placeholders are replaced.
func argLen(a string, c Config) int {
	n := len(a)
	n += strings.Count(a, PlaceholderKey) * (len(c.KeyPrefix) + KeyWidth(c.Keyspace) - len(PlaceholderKey))
	n += strings.Count(a, PlaceholderRandInt) * (RandIntWidth - len(PlaceholderRandInt))
	n += strings.Count(a, PlaceholderData) * (c.ValueSize - len(PlaceholderData))
	return n
}

// mixTable returns the cumulative ratios of a mix.
func mixTable(cmds []Command) []uint64 {
	cum := make([]uint64, len(cmds))
	var s uint64
	for i, c := range cmds {
		s += uint64(max(c.Ratio, 1))
		cum[i] = s
	}
	return cum
}

// newCmdKeys returns a connection's key sequences, one per command.
func newCmdKeys(p *plan, id, conns int) []*keyGen {
	g := make([]*keyGen, len(p.cmds))
	for i := range p.cmds {
		g[i] = newKeyGen(&p.cmds[i].cfg, id, conns)
		if g[i].pattern == KeyZipf {
			// One ranking for the whole mix: the hot keys a mix reads
			// are those it writes, as in YCSB's workloads.
			g[i].perm = newPerm(g[i].n, p.cfg.Seed)
		}
	}
	return g
}

// newCmdHists returns a worker's per-command histograms: none for a
// single command, whose histogram is the worker's.
func newCmdHists(p *plan) []*hdrhistogram.Histogram {
	if len(p.cmds) < 2 {
		return nil
	}
	h := make([]*hdrhistogram.Histogram, len(p.cmds))
	for i := range h {
		h[i] = newHistogram()
	}
	return h
}

// buildCmds is build for a command mix.
func (c *conn) buildCmds(dst []byte, n int, t int64) []byte {
	p := c.p
	mask := len(c.ring) - 1
	i := c.head + c.inflight + c.pre
	for range n {
		ci := 0
		if len(p.cmds) > 1 {
			x := c.ops.below(p.mixSum)
			for x >= p.mix[ci] {
				ci++
			}
		}
		cp := &p.cmds[ci]
		keys := c.cmdKeys[ci]
		var first uint64
		drawn := false
		for k := range cp.pieces {
			pc := &cp.pieces[k]
			dst = append(dst, pc.lit...)
			switch pc.kind {
			case phDigits:
				key := c.nextCmdKey(keys, drawn) // cluster.go
				if !drawn {
					first, drawn = key, true
				}
				dst = appendDigits(dst, key, pc.width)
			case phData:
				if !drawn {
					first, drawn = keys.next(), true
				}
				dst = appendValueFrom(dst, p.block, p.seed, first, p.vsize)
			}
		}
		c.ring[i&mask] = slot{key: first, t: t, op: uint8(ci)}
		i++
	}
	c.pre += n
	return dst
}

// consumeCmds is consume for a command mix: any reply but an error is
// counted as it comes.
func (c *conn) consumeCmds(b []byte, now int64) (int, error) {
	p := c.p
	mask := len(c.ring) - 1
	total := len(b)
	if c.cmd == nil {
		c.cmd = make([]cmdCount, len(p.cmds))
	}
	var err error
	for c.inflight > 0 && len(b) > 0 {
		s := &c.ring[c.head&mask]
		var n int
		switch {
		case len(b) >= 5 && string(b[:5]) == "+OK\r\n":
			n = 5
		case b[0] == '-':
			n, err = c.cmdError(b, s)
		default:
			n, err = resp.SkipReply(b, resp.DefaultMaxBulkLen)
			if err != nil {
				err = fmt.Errorf("connection %d: %w", c.id, err)
			}
		}
		if n == 0 {
			break
		}
		b = b[n:]
		lat := now - s.t
		if lat != c.runV {
			c.flushLatency()
			c.runV = lat
		}
		c.runN++
		if c.cmdHist != nil {
			_ = c.cmdHist[s.op].RecordValue(min(max(lat, histMin), histMax))
		}
		c.cmd[s.op].requests++
		c.others++
		c.head = (c.head + 1) & mask
		c.inflight--
		if err != nil {
			break
		}
	}
	c.flushLatency()
	return total - len(b), err
}

// cmdError counts an error reply to a command of a mix, and returns the
// error that ends the run unless Config.ContinueOnError.
func (c *conn) cmdError(b []byte, s *slot) (int, error) {
	r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil {
		return 0, fmt.Errorf("connection %d: %w", c.id, err)
	}
	if n == 0 {
		return 0, nil
	}
	word := r.Data
	if i := bytes.IndexByte(word, ' '); i >= 0 {
		word = word[:i]
	}
	if c.errors == nil {
		c.errors = map[string]int64{}
	}
	c.errors[string(word)]++
	c.cmd[s.op].errors++
	if !c.p.cfg.ContinueOnError {
		return n, &ReplyError{Command: c.p.cmds[s.op].text, Msg: string(r.Data)}
	}
	return n, nil
}

// commandResults sums the connections' per-command counts and the
// workers' per-command histograms of a finished phase.
func (r *runner) commandResults(res *Result) []CommandResult {
	cmds := r.plan.cmds
	if len(cmds) == 0 {
		return nil
	}
	out := make([]CommandResult, len(cmds))
	for i, cp := range cmds {
		out[i] = CommandResult{Name: cp.name, Command: cp.text, Histogram: newHistogram()}
		if len(cmds) == 1 {
			out[i].Histogram.Merge(res.Histogram)
		} else {
			for _, w := range r.workers {
				out[i].Histogram.Merge(w.cmdHist[i])
			}
		}
	}
	for _, s := range r.conns {
		for i, n := range s.cmd {
			out[i].Requests += n.requests
			out[i].Errors += n.errors
		}
	}
	for i := range out {
		if res.Elapsed > 0 {
			out[i].QPS = float64(out[i].Requests) / res.Elapsed.Seconds()
		}
		out[i].Latency = summarize(out[i].Histogram)
	}
	return out
}

// ErrUnsupported is wrapped by the error of a target that lacks commands
// (see CheckCommands).
var ErrUnsupported = errors.New("unsupported commands")

// CheckCommands asks the server at cfg.Addr with COMMAND INFO whether it
// has the commands named, and fails with one error naming those it lacks
// (wrapping ErrUnsupported). A server without COMMAND is not checked.
func CheckCommands(cfg Config, names []string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, n := range names {
		u := strings.ToUpper(n)
		if !seen[u] {
			seen[u] = true
			uniq = append(uniq, u)
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	b, err := Query(cfg.Addr, cfg.Password, timeout, append([]string{"COMMAND", "INFO"}, uniq...)...)
	if err != nil {
		return err
	}
	r, n, err := resp.ParseReply(b, resp.DefaultMaxBulkLen)
	if err != nil || n == 0 {
		return fmt.Errorf("COMMAND INFO: malformed reply %s", quote(b))
	}
	if r.Type == resp.TypeError {
		return nil // no COMMAND: nothing to check against
	}
	if r.Type != resp.TypeArray || r.Int != int64(len(uniq)) {
		return fmt.Errorf("COMMAND INFO: unexpected reply %s", quote(b))
	}
	b = b[n:]
	var lack []string
	for _, name := range uniq {
		e, _, _ := resp.ParseReply(b, resp.DefaultMaxBulkLen)
		if e.IsNull() {
			lack = append(lack, name)
		}
		m, err := resp.SkipReply(b, resp.DefaultMaxBulkLen)
		if err != nil || m == 0 {
			return fmt.Errorf("COMMAND INFO: malformed reply")
		}
		b = b[m:]
	}
	if len(lack) > 0 {
		return fmt.Errorf("%w: %s has no %s", ErrUnsupported, cfg.Addr, strings.Join(lack, ", "))
	}
	return nil
}

// commandNames returns the command names of a mix.
func commandNames(cmds []Command) []string {
	var names []string
	for _, c := range cmds {
		if len(c.Args) > 0 {
			names = append(names, c.Args[0])
		}
	}
	return names
}

// Query sends one command to addr on a new connection (after AUTH when
// password is set) and returns its whole reply, raw.
func Query(addr, password string, timeout time.Duration, args ...string) ([]byte, error) {
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(timeout))
	var req []byte
	if password != "" {
		req = resp.AppendCommandString(req, "AUTH", password)
	}
	req = resp.AppendCommandString(req, args...)
	if _, err := nc.Write(req); err != nil {
		return nil, err
	}
	var buf []byte
	chunk := make([]byte, 64<<10)
	want := 1
	if password != "" {
		want = 2
	}
	for {
		pos := 0
		var last int
		ok := true
		for i := range want {
			n, err := resp.SkipReply(buf[pos:], resp.DefaultMaxBulkLen)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", args[0], err)
			}
			if n == 0 {
				ok = false
				break
			}
			if i == 0 && password != "" && buf[0] == '-' {
				return nil, fmt.Errorf("AUTH: %s", strings.TrimSpace(string(buf[1:n])))
			}
			last = pos
			pos += n
		}
		if ok {
			return buf[last:pos], nil
		}
		m, err := nc.Read(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", args[0], err)
		}
		buf = append(buf, chunk[:m]...)
	}
}

// writeMix writes the mix line of a text report.
func writeMix(b *strings.Builder, c Config) {
	var sum int
	for _, cmd := range c.Commands {
		sum += max(cmd.Ratio, 1)
	}
	fmt.Fprintf(b, "mix:")
	for i, cmd := range c.Commands {
		if i > 0 {
			b.WriteString(",")
		}
		p := c.KeyPattern
		if cmd.KeyPattern != "" {
			p = cmd.KeyPattern
		}
		fmt.Fprintf(b, " %q %.1f%% %s", cmd.String(), 100*float64(max(cmd.Ratio, 1))/float64(sum), p)
	}
	b.WriteString("\n")
}

// writeCommands writes the per-command table of a text report.
func writeCommands(b *strings.Builder, cmds []CommandResult) {
	if len(cmds) == 0 {
		return
	}
	w := len("command")
	for _, c := range cmds {
		w = max(w, len(c.Name))
	}
	fmt.Fprintf(b, "%-*s %10s %12s %9s %9s %9s %9s %9s %7s\n", w, "command", "requests", "QPS", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "errors")
	for _, c := range cmds {
		l := c.Latency
		fmt.Fprintf(b, "%-*s %10d %12.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7d\n", w, c.Name, c.Requests, c.QPS, l.P50, l.P90, l.P99, l.P999, l.Max, c.Errors)
	}
}

// JSONCommand is a CommandResult in JSON.
type JSONCommand struct {
	Command   string      `json:"command"`
	Args      string      `json:"args"`
	Requests  int64       `json:"requests"`
	QPS       float64     `json:"qps"`
	LatencyUs JSONLatency `json:"latency_us"`
	Errors    int64       `json:"errors"`
}

func jsonCommands(cmds []CommandResult) []JSONCommand {
	var out []JSONCommand
	for _, c := range cmds {
		out = append(out, JSONCommand{Command: c.Name, Args: c.Command, Requests: c.Requests, QPS: c.QPS,
			LatencyUs: JSONLatency(c.Latency), Errors: c.Errors})
	}
	return out
}
