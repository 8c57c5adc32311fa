// Package cli is kvbench's command line: one constructor per command,
// each filling an options struct from its flags and calling one run
// function. cmd/kvbench wraps it in signal handling and the exit;
// cmd/gen-docs generates the command reference (docs/cli) from it.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// interrupted maps the error of a command stopped by Ctrl-C or SIGTERM
// (ctx, main's signal context, cancelled: the error is context.Canceled)
// to ExitInterrupted, with a sentence saying what was stopped instead of
// "context canceled". Other errors, and an error already mapped, pass
// through.
func interrupted(ctx context.Context, err error, what string) error {
	var ce *codedError
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
		return err
	}
	return &codedError{fmt.Errorf("interrupted: %s", what), ExitInterrupted}
}

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

// NewRootCmd builds the kvbench command tree with every command's real run
// function.
func NewRootCmd() *cobra.Command {
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
		newCompareCmd(nil),
		newHistoryCmd(),
		newK8sCmd(nil),
		newMergeCmd(nil),
		newReportCmd(nil),
		newRunCmd(nil),
		newServeCmd(nil),
		newVersionCmd(),
	)
	return root
}

// Run executes the command line args and returns the exit status: the
// whole program but the signals and the exit, so that tests drive it
// in-process.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return exitCode(root.ExecuteContext(ctx), stderr)
}

// exitCode reports err on stderr and maps it to the process exit status:
// 0 on success, 2 for a usage error, 1 otherwise, or the status an error
// carries (exitError).
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if _, bare := err.(exitError); !bare {
		fmt.Fprintln(stderr, "kvbench:", err)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return int(ee)
	}
	return 1
}

// machineDefault makes the help of a flag whose default depends on the
// machine say so in words ("one per CPU") instead of this machine's
// number, so that the help and the generated reference read the same
// everywhere.
func machineDefault(f *pflag.FlagSet, name, words string) {
	f.Lookup(name).DefValue = words
}
