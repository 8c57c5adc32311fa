// Package workload owns workload files: YAML descriptions of a command mix
// (its commands, ratios and key patterns, the value size and key
// distribution) that "kvbench bench --workload" runs, and the named
// workloads shipped inside the binary.
//
// A workload file is a mapping with these keys (only commands is required):
//
//	description: one line shown by --list-workloads
//	key-pattern: random, sequential, permutation, zipf, gaussian, latest or insert (every command's default)
//	zipf: the exponent of the zipf and latest patterns (default keyspace.DefaultZipf)
//	key-median, key-stddev: the gaussian pattern's (default the keyspace's middle and sixth)
//	value-size: bytes of __data__, or a uniform range MIN-MAX (32-1024)
//	data-size-list: a weighted list of sizes, SIZE:WEIGHT,... (32:60,1024:30,16384:10)
//	keyspace: number of distinct keys
//	commands:
//	  - command: SET __key__ __data__   # as --command takes it
//	    ratio: 5                        # weight in the mix, default 1
//	    key-pattern: sequential         # default the workload's
//	    name: UPDATE                    # name in reports, default the command's
//	    then: SET __key__ __data__      # read-modify-write: sent after the reply (name default RMW)
//
// Unknown keys and bad values are errors naming the file and line.
package workload

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/resp"
	"go.yaml.in/yaml/v3"
)

// yamlLine matches the position in a yaml.v3 syntax error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

//go:embed workloads/*.yaml
var builtin embed.FS

// Workload is a parsed workload file. A zero field was not set by the
// file and leaves the run's setting as it is.
type Workload struct {
	// Name is the file's base name without ".yaml", or its path.
	Name string
	// Description is its one-line summary.
	Description string
	// KeyPattern and Zipf are the key distribution of every command
	// without its own.
	KeyPattern keyspace.Pattern
	Zipf       float64
	// KeyMedian and KeyStddev shape the gaussian pattern.
	KeyMedian, KeyStddev float64
	// ValueSize is the length of __data__ in bytes; nil when not set.
	ValueSize *int
	// ValueSizes is a distribution of value sizes (value-size MIN-MAX,
	// or data-size-list); nil when not set.
	ValueSizes []keyspace.SizeRange
	// Keyspace is the number of distinct keys; 0 when not set.
	Keyspace int64
	// Commands is the mix.
	Commands []mix.Command
}

// Info is a named workload as --list-workloads shows it.
type Info struct{ Name, Description string }

// List returns the named workloads shipped in the binary, by name.
func List() ([]Info, error) {
	ents, err := fs.ReadDir(builtin, "workloads")
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range ents {
		w, err := Builtin(strings.TrimSuffix(e.Name(), ".yaml"))
		if err != nil {
			return nil, err
		}
		out = append(out, Info{w.Name, w.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Builtin returns the named workload shipped in the binary.
func Builtin(name string) (*Workload, error) {
	b, err := builtin.ReadFile(path.Join("workloads", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("no workload named %q", name)
	}
	w, err := Parse(name+".yaml", b)
	if err != nil {
		return nil, err
	}
	w.Name = name
	return w, nil
}

// Load returns the named workload, or else reads the file at nameOrPath:
// a name has no slash and no ".yaml"/".yml" ending.
func Load(nameOrPath string) (*Workload, error) {
	if !strings.ContainsAny(nameOrPath, `/\`) && !strings.HasSuffix(nameOrPath, ".yaml") && !strings.HasSuffix(nameOrPath, ".yml") {
		w, err := Builtin(nameOrPath)
		if err == nil {
			return w, nil
		}
		if _, serr := os.Stat(nameOrPath); serr != nil {
			names, _ := List()
			var n []string
			for _, i := range names {
				n = append(n, i.Name)
			}
			return nil, fmt.Errorf("%w: want one of %s, or a file", err, strings.Join(n, ", "))
		}
	}
	b, err := os.ReadFile(nameOrPath)
	if err != nil {
		return nil, err
	}
	w, err := Parse(nameOrPath, b)
	if err != nil {
		return nil, err
	}
	w.Name = nameOrPath
	return w, nil
}

// Parse parses the workload file named file (for error messages) with
// content b. Every error is "file:line: ...".
func Parse(file string, b []byte) (*Workload, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		// yaml.v3 says "yaml: line N: msg": make it "file:N: msg".
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s:%s: %s", file, m[1], m[2])
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p := parser{file: file}
	w := &Workload{}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "want a mapping with commands")
	}
	var cmdsNode *yaml.Node
	p.once(root)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "description":
			w.Description = p.str(v)
		case "key-pattern":
			w.KeyPattern = p.pattern(v)
		case "zipf":
			w.Zipf = p.float(v, math.SmallestNonzeroFloat64)
		case "key-median":
			w.KeyMedian = p.float(v, 0)
		case "key-stddev":
			w.KeyStddev = p.float(v, math.SmallestNonzeroFloat64)
		case "value-size":
			n, r, err := keyspace.ParseValueSize(p.str(v))
			if err != nil {
				p.fail(v, "%v", err)
			}
			w.ValueSize, w.ValueSizes = &n, r
		case "data-size-list":
			r, err := keyspace.ParseValueSizes(p.str(v))
			if err != nil {
				p.fail(v, "%v", err)
			}
			w.ValueSizes = r
		case "keyspace":
			w.Keyspace = int64(p.int(v, 1, 1<<62))
		case "commands":
			cmdsNode = v
		default:
			p.fail(k, "unknown key %q: want description, key-pattern, zipf, key-median, key-stddev, value-size, data-size-list, keyspace or commands", k.Value)
		}
	}
	if w.Zipf > 0 && w.KeyPattern != "" && w.KeyPattern != keyspace.Zipf && w.KeyPattern != keyspace.Latest {
		p.fail(root, "zipf %g needs key-pattern zipf or latest, not %s", w.Zipf, w.KeyPattern)
	}
	switch {
	case cmdsNode == nil:
		p.fail(root, "no commands")
	case cmdsNode.Kind != yaml.SequenceNode || len(cmdsNode.Content) == 0:
		p.fail(cmdsNode, "commands: want a list of at least one command")
	case len(cmdsNode.Content) > mix.MaxCommands:
		p.fail(cmdsNode, "%d commands: want at most %d", len(cmdsNode.Content), mix.MaxCommands)
	default:
		for _, n := range cmdsNode.Content {
			if c, ok := p.command(n); ok {
				w.Commands = append(w.Commands, c)
			}
		}
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return w, nil
}

// parser collects the errors of one file.
type parser struct {
	file string
	errs []error
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, n.Line, fmt.Sprintf(format, args...))
}

func (p *parser) fail(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, p.errf(n, format, args...))
}

// once fails every key of mapping n given a second time.
func (p *parser) once(n *yaml.Node) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			p.fail(k, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
	}
}

// str is a scalar's value; a non-scalar is an error.
func (p *parser) str(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		p.fail(n, "want a single value")
		return ""
	}
	return n.Value
}

func (p *parser) int(n *yaml.Node, lo, hi int) int {
	v, err := strconv.Atoi(p.str(n))
	if err != nil || v < lo || v > hi {
		p.fail(n, "%q: want a whole number from %d to %d", n.Value, lo, hi)
	}
	return v
}

// float is a number >= lo.
func (p *parser) float(n *yaml.Node, lo float64) float64 {
	f, err := strconv.ParseFloat(p.str(n), 64)
	if err != nil || f < lo || math.IsInf(f, 0) {
		if lo > 0 {
			p.fail(n, "%q: want a number > 0", n.Value)
		} else {
			p.fail(n, "%q: want a number >= %g", n.Value, lo)
		}
	}
	return f
}

func (p *parser) pattern(n *yaml.Node) keyspace.Pattern {
	s := keyspace.Pattern(p.str(n))
	switch s {
	case keyspace.Random, keyspace.Sequential, keyspace.Permutation, keyspace.Zipf, keyspace.Gaussian,
		keyspace.Latest, keyspace.Insert:
		return s
	}
	p.fail(n, "key-pattern %q: want random, sequential, permutation, zipf, gaussian, latest or insert", n.Value)
	return ""
}

// command parses one entry of commands.
func (p *parser) command(n *yaml.Node) (mix.Command, bool) {
	var c mix.Command
	if n.Kind != yaml.MappingNode {
		p.fail(n, "command: want a mapping with command, and ratio, key-pattern or name")
		return c, false
	}
	before := len(p.errs)
	p.once(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "command":
			c.Args = p.argv(v)
		case "then":
			if c.Then = p.argv(v); len(c.Then) == 0 {
				p.fail(v, "then: empty command")
			}
		case "ratio":
			c.Ratio = p.int(v, 1, 1<<20)
		case "key-pattern":
			c.KeyPattern = p.pattern(v)
		case "name":
			c.Name = p.str(v)
		default:
			p.fail(k, "unknown key %q: want command, ratio, key-pattern, name or then", k.Value)
		}
	}
	if len(c.Args) == 0 && len(p.errs) == before {
		p.fail(n, "no command")
	}
	return c, len(p.errs) == before
}

// argv splits a command as redis-cli does.
func (p *parser) argv(v *yaml.Node) []string {
	argv, err := resp.SplitInline(nil, []byte(p.str(v)))
	switch {
	case err != nil:
		p.fail(v, "command %q: unbalanced quotes", v.Value)
	case len(argv) == 0:
		p.fail(v, "empty command")
	}
	var out []string
	for _, a := range argv {
		out = append(out, string(a))
	}
	return out
}

// Apply sets what the workload sets on c: its commands (each named, with
// "#2" on the second of a name), and its key pattern, Zipf exponent, value
// size or sizes, keyspace and gaussian median and stddev unless keep says
// the user set them ("key-pattern", "zipf", "value-size", "data-size-list",
// "keyspace", "key-median", "key-stddev").
func (w *Workload) Apply(c *loadgen.Config, keep func(setting string) bool) {
	cmds := append([]mix.Command(nil), w.Commands...)
	mix.NameCommands(cmds)
	c.Commands = cmds
	if w.KeyPattern != "" && !keep("key-pattern") && !keep("zipf") {
		c.KeyPattern = w.KeyPattern
	}
	if w.Zipf > 0 && !keep("zipf") {
		c.Zipf = w.Zipf
	}
	if w.KeyMedian > 0 && !keep("key-median") {
		c.KeyMedian = w.KeyMedian
	}
	if w.KeyStddev > 0 && !keep("key-stddev") {
		c.KeyStddev = w.KeyStddev
	}
	if w.ValueSize != nil && !keep("value-size") && !keep("data-size-list") {
		c.ValueSize, c.ValueSizes = *w.ValueSize, w.ValueSizes
	}
	if w.ValueSizes != nil && w.ValueSize == nil && !keep("value-size") && !keep("data-size-list") {
		c.ValueSizes = w.ValueSizes
	}
	if w.Keyspace > 0 && !keep("keyspace") {
		c.Keyspace = w.Keyspace
	}
}
