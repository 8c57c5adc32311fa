package runner

import (
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

// kvbenchBin is the kvbench binary whose "serve" the kvstore target runs
// (the test binary cannot serve).
var kvbenchBin string

func TestMain(m *testing.M) {
	testutil.YoungServerMain() // the test binary as a command target's server
	os.Exit(testutil.RunWithKvbench(m, &kvbenchBin))
}
