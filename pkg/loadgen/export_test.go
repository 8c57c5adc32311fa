package loadgen

import "context"

// The prefill, for the tests that set a server up with it or check what
// it wrote. Package prefill imports this package, so these tests cannot
// import it: prefill_init_test.go (package loadgen_test, compiled into the
// same test binary) sets these to package prefill's functions before any
// test runs.
var (
	Prefill      func(context.Context, Config) (Result, error)
	PrefillRange func(Config) (lo, hi int64)
	ErrNotEmpty  error
)
