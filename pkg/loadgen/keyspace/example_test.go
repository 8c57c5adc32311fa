package keyspace_test

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
)

func ExampleSpec_AppendName() {
	fmt.Println(string(keyspace.Spec{Keyspace: 100_000}.AppendName(nil, "bench:key:", 42)))
	fmt.Println(string(keyspace.Spec{Keyspace: 1_000_000}.AppendName(nil, "k:", 42)))
	// Output:
	// bench:key:00042
	// k:000042
}

func ExampleAppendValue() {
	v := keyspace.AppendValue(nil, 1, 42, 16)
	fmt.Printf("%s %d\n", v, len(v))
	// A longer value of the same key starts with the shorter one.
	fmt.Printf("%s\n", keyspace.AppendValue(nil, 1, 42, 24))
	// Output:
	// xNVb^ps@gq\V`@Oi 16
	// xNVb^ps@gq\V`@OizzkDYVIa
}
