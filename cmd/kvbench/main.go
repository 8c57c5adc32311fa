// Command kvbench benchmarks Redis-protocol key-value servers against Redis
// under each persistence setting, and embeds the kvstore it compares.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit status: the
// whole program but the signals and the exit, so that tests drive it
// in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
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
