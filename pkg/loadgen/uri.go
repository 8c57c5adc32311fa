package loadgen

import "github.com/kvbench/kvbench/pkg/control"

// Endpoint is how to reach a server, as a URI gives it: its Addr is
// Config.Addr.
type Endpoint = control.Endpoint

// ParseURI parses a server URI as redis-cli -u takes it (control.ParseURI):
// redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or
// unix:///path/to/socket[?db=N].
func ParseURI(s string) (Endpoint, error) { return control.ParseURI(s) }
