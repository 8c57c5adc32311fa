// Command gen-docs writes kvbench's command reference, one markdown page
// per command, from the commands themselves (cobra's doc generator), so
// that the reference cannot drift from the flags:
//
//	go run ./cmd/gen-docs            # writes docs/cli
//	go run ./cmd/gen-docs -dir out/
//
// TestReferenceIsCurrent (internal/cli) fails when docs/cli differs from
// what this writes.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
)

func main() {
	dir := flag.String("dir", "docs/cli", "directory to write the reference to (replaced)")
	flag.Parse()
	if err := cli.WriteReference(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
}
