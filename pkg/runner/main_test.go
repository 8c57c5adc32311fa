package runner

import (
	"fmt"
	"os"
	"testing"

	"github.com/kvbench/kvbench/internal/testutil"
)

// kvbenchBin is the kvbench binary whose "serve" the kvstore target runs
// (the test binary cannot serve).
var kvbenchBin string

func TestMain(m *testing.M) {
	bin, cleanup, err := testutil.BuildKvbench()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kvbenchBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}
