package loadgen_test

import (
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
)

// init gives package loadgen's tests the prefill (export_test.go).
func init() {
	loadgen.Prefill, loadgen.PrefillRange = prefill.Prefill, prefill.PrefillRange
	loadgen.ErrNotEmpty = prefill.ErrNotEmpty
}
