// Command kvbench benchmarks Redis-protocol key-value servers against Redis
// under each persistence setting, and embeds the kvstore it compares.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}

// exitCode reports err on stderr and maps it to the process exit status:
// 0 on success, 2 for a usage error (the usage is printed too), 1 otherwise.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if _, bare := err.(exitError); !bare {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
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
