package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// usageError marks an error in the command line itself (an unknown flag, a
// bad value): main prints the usage with it and exits 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitError asks main for a specific exit status without printing anything
// beyond what the command already printed.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// noArgs is cobra.NoArgs with the error marked as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return &usageError{err}
	}
	return nil
}

// streams are a command's standard input and outputs, taken from the
// cobra command when it runs: commands never touch os.Stdout.
type streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// streamsOf returns cmd's streams.
func streamsOf(cmd *cobra.Command) streams {
	return streams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
}

// Every command has one shape: newXCmd(runF) fills an xOptions from its
// flags (and, for run, the environment), validates it in one place (a
// failure is a usage error, exit 2), and calls runF(ctx, opts), which is
// runX unless a test passes its own to look at the options.

// newRootCmd builds the kvbench command tree with every command's real run
// function.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "kvbench",
		Short: "Benchmark Redis-protocol key-value servers under each persistence setting",
		Long: `kvbench compares a Redis-protocol key-value server with Redis, scenario by
scenario and persistence setting by persistence setting, with numbers that
hold up: repeated rounds, a trimming rule, significance tests.

It embeds the kvstore it was built to measure ("kvbench serve"), a load
generator ("kvbench bench"), an orchestrator that runs the whole experiment
("kvbench run") and a report builder ("kvbench report").`,
		Example: `  # the whole experiment: kvstore (and redis-server, if installed), 5 rounds
  kvbench run --rounds 5

  # the tables again, from saved results
  kvbench report results/*_detail_*.csv

  # the kvstore alone, and one load-generator run against it
  kvbench serve --port 8888 --persist everysec
  kvbench bench --port 8888 --mode set --set-cmd RSET --pipeline 128

  # shell completion
  source <(kvbench completion bash)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		cmd.PrintErrln(cmd.UsageString())
		return &usageError{err}
	})
	root.AddCommand(
		newBenchCmd(nil),
		newReportCmd(nil),
		newRunCmd(nil),
		newServeCmd(nil),
		newVersionCmd(),
	)
	return root
}
