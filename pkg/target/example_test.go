package target_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/kvbench/kvbench/pkg/target"
)

// A target file describing a server on another machine: its strategies
// are labels for however it was configured, with the CONFIG GET values
// to verify before measuring.
func ExampleParseConfig() {
	yaml := `targets:
  - name: remote
    kind: attach
    addr: 10.0.0.5:6379
    baseline: off
    strategies:
      off:
      aof: {persistence: everysec, expect: {appendonly: "yes"}}
`
	targets, err := target.ParseConfig(strings.NewReader(yaml), "kvbench.yaml", target.Defaults{})
	if err != nil {
		log.Fatal(err)
	}
	d := targets[0].Desc()
	for _, s := range d.Strategies {
		fmt.Println(d.Name, d.Kind, s.Name, s.Persistence, s.Expect)
	}
	// Output:
	// remote attach off none map[]
	// remote attach aof everysec map[appendonly:yes]
}

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
