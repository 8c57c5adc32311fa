package cli

import (
	"errors"
	"fmt"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/pflag"
)

// addRESP3Flag registers --resp3 (-3, as valkey-benchmark and
// redis-benchmark spell it).
func addRESP3Flag(f *pflag.FlagSet, c *loadgen.Config) {
	f.BoolVarP(&c.RESP3, "resp3", "3", false, "speak RESP3: every connection (the load's, the prefill's, the checks' and a cluster's) starts with HELLO 3 and every reply is read as RESP3 (a missing key's is _)")
}

// resp3Error names --resp3 in the error of a server that refused HELLO 3,
// and returns any other error as it is.
func resp3Error(err error) error {
	var nr *control.NoRESP3Error
	if errors.As(err, &nr) {
		return fmt.Errorf("--resp3: %w", nr)
	}
	return err
}
