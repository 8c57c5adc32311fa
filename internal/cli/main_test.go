package cli

import (
	"os"
	"testing"
)

// TestMain removes the kvbench binary that tests running it as a process
// of its own built (50 MB a run, left in the temporary directory before).
func TestMain(m *testing.M) {
	code := m.Run()
	removeKvbench()
	os.Exit(code)
}
