package cli

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/pflag"
)

// addBenchClientFlags adds the flags of what memtier_benchmark and
// valkey-benchmark users expect of the client beyond the request mix:
// reconnecting after a server restart.
func addBenchClientFlags(f *pflag.FlagSet, o *benchOptions) {
	c := &o.Config
	f.BoolVar(&c.Reconnect, "reconnect", false, "redial a connection the server closed or reset mid-run (a restart), counting its requests in flight as errors (kind reconnect), instead of failing the run")
	f.IntVar(&c.ReconnectAttempts, "reconnect-attempts", c.ReconnectAttempts, "with --reconnect, redials of a lost connection before the run fails")
	f.DurationVar(&c.ReconnectBackoff, "reconnect-backoff", c.ReconnectBackoff,
		fmt.Sprintf("with --reconnect, the wait after a failed redial, doubling after each next one up to %v", loadgen.MaxReconnectBackoff))
}

// validateClient refuses the client flags that would do nothing.
func (o *benchOptions) validateClient(f *pflag.FlagSet) error {
	if !o.Config.Reconnect {
		for _, n := range []string{"reconnect-attempts", "reconnect-backoff"} {
			if f.Changed(n) {
				return fmt.Errorf("--%s needs --reconnect", n)
			}
		}
	}
	return nil
}
