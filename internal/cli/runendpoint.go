package cli

import (
	"github.com/kvbench/kvbench/pkg/runner"
	"github.com/spf13/pflag"
)

// addRunEndpointFlags adds run's --user, --db and --resp3: how the
// targets that say nothing of it in --config are entered.
func addRunEndpointFlags(f *pflag.FlagSet, o *runner.Options) {
	f.StringVar(&o.User, "user", "", "ACL user of the attach targets whose --config entry sets none (user:), sent with AUTH and the target's password, e.g. --config remote.yaml --user bench")
	f.IntVar(&o.DB, "db", 0, "database selected with SELECT on every connection to the redis, command and attach targets that set none (db:); the kvstore and clusters have only database 0")
	f.BoolVar(&o.RESP3, "resp3", false, "RESP3 (HELLO 3) on every connection, the load's and kvbench's own, to the targets whose --config entry sets no resp3:, e.g. --targets redis --resp3; the kvstore speaks RESP2 only: a kvstore target in the run is an error unless its entry says resp3: false")
}
