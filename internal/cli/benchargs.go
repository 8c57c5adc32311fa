package cli

import (
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// benchArgs allows positional arguments only after "--": the command to
// send, as redis-benchmark takes one.
func benchArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
		return &usageError{fmt.Errorf("unexpected argument %q: a command to send goes after -- (kvbench bench -- SET __key__ __data__)", args[0])}
	}
	return nil
}

// takeCommand makes the command given after "--" the run's command mix,
// as one --command would.
func (o *benchOptions) takeCommand(f *pflag.FlagSet, args []string) error {
	if len(args) == 0 {
		return nil
	}
	for _, n := range []string{"mode", "tests", "command", "workload"} {
		if f.Changed(n) {
			return fmt.Errorf("a command after -- and --%s cannot be used together", n)
		}
	}
	o.commands.cmds = append(o.commands.cmds, mix.Command{Args: slices.Clone(args)})
	return nil
}
