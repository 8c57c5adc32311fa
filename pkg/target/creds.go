package target

import (
	"context"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// creds are what a connection to a server needs besides its address.
type creds struct {
	control.Options
	// files are the settings Options.TLS was made from, for other
	// processes (Info.TLSFiles).
	files tlsconf.Options
}

// dialControl connects the control client to addr, each call bounded by
// timeout.
func dialControl(ctx context.Context, addr string, cr creds, timeout time.Duration) (*control.Conn, error) {
	o := cr.Options
	o.Timeout = timeout
	return control.Dial(ctx, addr, o)
}
