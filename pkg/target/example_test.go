package target_test

import (
	"fmt"
	"log"

	"github.com/kvbench/kvbench/pkg/target"
)

// The kvstore's strategies with both allocators: the seeds' variant
// names, each selectable by its persistence strategy's name.
func ExampleDesc_Select() {
	k, err := target.NewKvstore(target.KvstoreConfig{Alloc: target.AllocBoth})
	if err != nil {
		log.Fatal(err)
	}
	selected, unknown := k.Desc().Select([]string{"nopersist", "persist_malloc", "persist_sometimes"})
	for _, s := range selected {
		fmt.Println(s.Name, s.Persistence, s.Alloc)
	}
	fmt.Println("unknown:", unknown)
	// Output:
	// nopersist_mypool none mypool
	// persist_malloc no malloc
	// nopersist_malloc none malloc
	// unknown: [persist_sometimes]
}
