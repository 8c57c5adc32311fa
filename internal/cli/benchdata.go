package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/spf13/pflag"
)

// addBenchClientFlags adds the flags of what memtier_benchmark and
// valkey-benchmark users expect of the client beyond the request mix:
// reconnecting after a server restart, random values, expiring keys,
// reads of several keys.
func addBenchClientFlags(f *pflag.FlagSet, o *benchOptions) {
	c := &o.Config
	f.BoolVar(&c.RandomData, "random-data", false, "write random bytes that do not compress, still a function of (seed, key) so --verify-get checks them, instead of printable values")
	f.StringVar(&o.expiryRange, "expiry-range", "", "give each SET EX n, n seconds drawn uniformly per key from MIN-MAX (e.g. 60-600); needs the write command SET")
	f.IntVar(&c.MultiKeyGet, "multi-key-get", 0, "send each read as one MGET of this many keys, counted as one request (with --verify-get every value checked); needs the read command GET")
	f.BoolVar(&c.Reconnect, "reconnect", false, "redial a connection the server closed or reset mid-run (a restart), counting its requests in flight as errors (kind reconnect), instead of failing the run")
	f.IntVar(&c.ReconnectAttempts, "reconnect-attempts", c.ReconnectAttempts, "with --reconnect, redials of a lost connection before the run fails")
	f.DurationVar(&c.ReconnectBackoff, "reconnect-backoff", c.ReconnectBackoff,
		fmt.Sprintf("with --reconnect, the wait after a failed redial, doubling after each next one up to %v", loadgen.MaxReconnectBackoff))
}

// validateClient reads --expiry-range and refuses the client flags that
// would do nothing.
func (o *benchOptions) validateClient(f *pflag.FlagSet) error {
	c := &o.Config
	if c.ReconnectAttempts < 1 || c.ReconnectBackoff <= 0 {
		return fmt.Errorf("--reconnect-attempts %d and --reconnect-backoff %v: want >= 1 and > 0", c.ReconnectAttempts, c.ReconnectBackoff)
	}
	if o.expiryRange != "" {
		lo, hi, ok := strings.Cut(o.expiryRange, "-")
		var err1, err2 error
		c.ExpiryMin, err1 = strconv.Atoi(strings.TrimSpace(lo))
		c.ExpiryMax, err2 = strconv.Atoi(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil || c.ExpiryMin < 1 || c.ExpiryMax < c.ExpiryMin {
			return fmt.Errorf("--expiry-range %q: want MIN-MAX seconds, 1 <= MIN <= MAX (60-600)", o.expiryRange)
		}
	}
	if o.tests != "" || len(o.commands.cmds) > 0 || o.workload != "" {
		for _, n := range []string{"expiry-range", "multi-key-get"} {
			if f.Changed(n) {
				return fmt.Errorf("--%s applies to --mode runs, not to --tests, --command or --workload", n)
			}
		}
	}
	if !o.Config.Reconnect {
		for _, n := range []string{"reconnect-attempts", "reconnect-backoff"} {
			if f.Changed(n) {
				return fmt.Errorf("--%s needs --reconnect", n)
			}
		}
	}
	return nil
}
