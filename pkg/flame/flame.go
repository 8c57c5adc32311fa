// Package flame turns CPU profiles into flame graphs: it folds the
// samples of perf (perf script's text) or pprof into stacks, and draws
// them, or the difference of two profiles, as one self-contained SVG
// with a title per frame and click-to-zoom.
//
// The folding and the drawing are written here: no well-kept Go library
// renders flame graphs (pprof's own flame graph is an HTML page of its web
// UI, not a file), and the folded-stacks format ("frame;frame;frame
// count", root first) is the common ground of perf, pprof and Brendan
// Gregg's FlameGraph scripts.
package flame

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Profile is a set of folded stacks: each stack's frames, root first,
// joined by ";", and its sample count.
type Profile struct {
	// Stacks counts the samples of each stack.
	Stacks map[string]int64
}

// New returns an empty profile.
func New() *Profile { return &Profile{Stacks: make(map[string]int64)} }

// Add counts n samples of the stack frames (root first). Semicolons in
// a frame's name become colons: they separate frames.
func (p *Profile) Add(frames []string, n int64) {
	if len(frames) == 0 || n <= 0 {
		return
	}
	clean := make([]string, len(frames))
	for i, f := range frames {
		clean[i] = strings.ReplaceAll(f, ";", ":")
	}
	p.Stacks[strings.Join(clean, ";")] += n
}

// Total is the number of samples.
func (p *Profile) Total() int64 {
	var t int64
	for _, n := range p.Stacks {
		t += n
	}
	return t
}

// WriteFolded writes the profile in the folded-stacks format, one
// "frame;frame;frame count" line per stack, sorted.
func (p *Profile) WriteFolded(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range slices.Sorted(maps.Keys(p.Stacks)) {
		fmt.Fprintf(bw, "%s %d\n", s, p.Stacks[s])
	}
	return bw.Flush()
}

// ReadFolded reads the folded-stacks format; name names the input in
// errors (name:line).
func ReadFolded(r io.Reader, name string) (*Profile, error) {
	p := New()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("%s:%d: want \"frame;frame count\", got %q", name, line, text)
		}
		n, err := strconv.ParseInt(text[i+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s:%d: count %q is not a whole number", name, line, text[i+1:])
		}
		p.Add(strings.Split(strings.TrimSpace(text[:i]), ";"), n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// ParsePerfScript folds the text of "perf script" (perf record -g): each
// sample's header line (command, pid, time, event) followed by its
// frames, leaf first, one per line ("addr symbol+off (object)"), then a
// blank line. The stack's root is the command's name; a frame without a
// symbol is named after its object, in brackets. name names the input in
// errors.
func ParsePerfScript(r io.Reader, name string) (*Profile, error) {
	p := New()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var comm string
	var frames []string // leaf first
	in := false
	flush := func() {
		if in {
			stack := []string{comm}
			for i := len(frames) - 1; i >= 0; i-- {
				stack = append(stack, frames[i])
			}
			p.Add(stack, 1)
		}
		in, frames = false, frames[:0]
	}
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.TrimSpace(text) == "":
			flush()
		case strings.HasPrefix(text, "#"):
		case text[0] != ' ' && text[0] != '\t':
			flush()
			comm = perfComm(text)
			if comm == "" {
				return nil, fmt.Errorf("%s:%d: a sample line without a command: %q", name, line, text)
			}
			in = true
		case in:
			frames = append(frames, perfFrame(strings.TrimSpace(text)))
		default:
			return nil, fmt.Errorf("%s:%d: a frame outside a sample: %q", name, line, text)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// perfComm is the command of a sample's header line: what comes before
// the pid (the command may hold spaces).
func perfComm(line string) string {
	f := strings.Fields(line)
	for i := 1; i < len(f); i++ {
		pid, _, _ := strings.Cut(f[i], "/")
		if _, err := strconv.Atoi(pid); err == nil {
			return strings.Join(f[:i], " ")
		}
	}
	if len(f) > 0 {
		return f[0]
	}
	return ""
}

// perfFrame names a frame line "addr symbol+0xoff (object)": the symbol
// without its offset, or "[object]" when perf knows no symbol.
func perfFrame(line string) string {
	_, rest, ok := strings.Cut(line, " ")
	if !ok {
		return "[unknown]"
	}
	rest = strings.TrimSpace(rest)
	obj := ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		obj = rest[i+2 : len(rest)-1]
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "+0x"); i > 0 {
		rest = rest[:i]
	}
	if rest == "" || rest == "[unknown]" {
		if obj == "" || obj == "[unknown]" {
			return "[unknown]"
		}
		return "[" + obj[strings.LastIndexByte(obj, '/')+1:] + "]"
	}
	return rest
}

// ErrEmpty is returned for a profile without a sample: there is nothing
// to draw.
var ErrEmpty = errors.New("the profile holds no sample")
