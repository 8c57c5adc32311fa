package loadgen

import "github.com/kvbench/kvbench/pkg/loadgen/keyspace"

// ValueSizeOf is the size of key i's value in a run of c: c.ValueSize,
// or with c.ValueSizes the size drawn for the key from them.
func ValueSizeOf(c Config, i int64) int {
	if z := keyspace.NewSizes(c.ValueSizes, c.Seed); z != nil {
		return z.Of(uint64(i))
	}
	return c.ValueSize
}
