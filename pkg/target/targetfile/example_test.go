package targetfile_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/kvbench/kvbench/pkg/target/targetfile"
)

// A target file describing a server on another machine: its strategies
// are labels for however it was configured, with the CONFIG GET values
// to verify before measuring.
func ExampleParse() {
	yaml := `targets:
  - name: remote
    kind: attach
    addr: 10.0.0.5:6379
    baseline: off
    strategies:
      off:
      aof: {persistence: everysec, expect: {appendonly: "yes"}}
`
	targets, err := targetfile.Parse(strings.NewReader(yaml), "kvbench.yaml", targetfile.Defaults{})
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
