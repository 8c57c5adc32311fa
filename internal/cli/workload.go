package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/workload"
	"github.com/spf13/pflag"
)

// commandList collects --command, --command-name, --command-ratio,
// --command-key-pattern and --command-then in command-line order: all but
// the first apply to the --command before them.
type commandList struct {
	cmds *[]mix.Command
}

// commandFlag is --command.
type commandFlag struct{ l *commandList }

func (f commandFlag) String() string { return "" }
func (f commandFlag) Type() string   { return "command" }
func (f commandFlag) Set(s string) error {
	argv, err := resp.SplitInline(nil, []byte(s))
	if err != nil {
		return fmt.Errorf("%q: unbalanced quotes", s)
	}
	if len(argv) == 0 {
		return fmt.Errorf("%q: empty command", s)
	}
	c := mix.Command{}
	for _, a := range argv {
		c.Args = append(c.Args, string(a))
	}
	*f.l.cmds = append(*f.l.cmds, c)
	return nil
}

// commandNameFlag is --command-name.
type commandNameFlag struct{ l *commandList }

func (f commandNameFlag) String() string { return "" }
func (f commandNameFlag) Type() string   { return "string" }
func (f commandNameFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	last, err := f.l.last("--command-name")
	if err != nil {
		return err
	}
	last.Name = s
	return nil
}

// commandRatioFlag is --command-ratio.
type commandRatioFlag struct{ l *commandList }

func (f commandRatioFlag) String() string { return "" }
func (f commandRatioFlag) Type() string   { return "int" }
func (f commandRatioFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q: want a whole number >= 1", s)
	}
	last, err := f.l.last("--command-ratio")
	if err != nil {
		return err
	}
	last.Ratio = n
	return nil
}

// commandPatternFlag is --command-key-pattern.
type commandPatternFlag struct{ l *commandList }

func (f commandPatternFlag) String() string { return "" }
func (f commandPatternFlag) Type() string   { return "pattern" }
func (f commandPatternFlag) Set(s string) error {
	p, err := parseKeyPattern(s)
	if err != nil {
		return err
	}
	last, err := f.l.last("--command-key-pattern")
	if err != nil {
		return err
	}
	last.KeyPattern = p
	return nil
}

// commandThenFlag is --command-then.
type commandThenFlag struct{ l *commandList }

func (f commandThenFlag) String() string { return "" }
func (f commandThenFlag) Type() string   { return "command" }
func (f commandThenFlag) Set(s string) error {
	argv, err := resp.SplitInline(nil, []byte(s))
	if err != nil {
		return fmt.Errorf("%q: unbalanced quotes", s)
	}
	if len(argv) == 0 {
		return fmt.Errorf("%q: empty command", s)
	}
	last, err := f.l.last("--command-then")
	if err != nil {
		return err
	}
	for _, a := range argv {
		last.Then = append(last.Then, string(a))
	}
	return nil
}

func (l *commandList) last(flag string) (*mix.Command, error) {
	cmds := *l.cmds
	if len(cmds) == 0 {
		return nil, fmt.Errorf("%s must follow a --command", flag)
	}
	return &cmds[len(cmds)-1], nil
}

// parseKeyPattern takes memtier_benchmark's letters (R, S, P, G; Z for zipf)
// or kvbench's names.
func parseKeyPattern(s string) (keyspace.Pattern, error) {
	switch strings.ToLower(s) {
	case "r", "random":
		return keyspace.Random, nil
	case "s", "sequential":
		return keyspace.Sequential, nil
	case "p", "permutation":
		return keyspace.Permutation, nil
	case "z", "zipf":
		return keyspace.Zipf, nil
	case "g", "gaussian":
		return keyspace.Gaussian, nil
	case "l", "latest":
		return keyspace.Latest, nil
	case "i", "insert":
		return keyspace.Insert, nil
	}
	return "", fmt.Errorf("%q: want R (random), S (sequential), P (permutation), Z (zipf), G (gaussian), L (latest) or I (insert)", s)
}

// addWorkloadFlags adds --tests, the --command flags and --workload.
func addWorkloadFlags(f *pflag.FlagSet, o *benchOptions) {
	l := &commandList{&o.CommandMix}
	f.StringVar(&o.Workload, "workload", "", "run a workload: a named one (see --list-workloads) or a YAML file (see docs/bench.md)")
	f.BoolVar(&o.listWorkloads, "list-workloads", false, "list the named workloads and exit")
	f.StringVarP(&o.Tests, "tests", "t", "", "run redis-benchmark's tests by name, comma-separated (set,get,lpush,lrange_100...), each a measured phase")
	f.Var(commandFlag{l}, "command", "send this command, memtier_benchmark style: 'HSET __key__ f __data__' (repeatable; placeholders __key__, __data__, __rand_int__)")
	f.Var(commandNameFlag{l}, "command-name", "name of the --command before it in the report (default the command's name, RMW for a read-modify-write)")
	f.Var(commandRatioFlag{l}, "command-ratio", "weight of the --command before it in the mix (default 1)")
	f.Var(commandPatternFlag{l}, "command-key-pattern", "key order of the --command before it: R random, S sequential, P permutation, Z zipf, G gaussian, L latest, I insert (default --key-pattern)")
	f.Var(commandThenFlag{l}, "command-then", "make the --command before it a read-modify-write: send this command once its reply has arrived, same key (reported as one operation, RMW)")
}

// listWorkloads prints the named workloads, one a line.
func listWorkloads(w io.Writer) error {
	list, err := workload.List()
	if err != nil {
		return err
	}
	for _, i := range list {
		fmt.Fprintf(w, "%-18s %s\n", i.Name, i.Description)
	}
	return nil
}
