package agents_test

import (
	"fmt"
	"os"

	"github.com/kvbench/kvbench/pkg/agents"
)

// Two agents' results (kvbench bench --segment 0/2 and 1/2 --output json),
// merged: the requests add up, the histograms are summed.
func ExampleMerge() {
	var all []agents.Agent
	for _, name := range []string{"../../testdata/agents/agent-0.json", "../../testdata/agents/agent-1.json"} {
		f, err := os.Open(name)
		if err != nil {
			panic(err)
		}
		as, _, err := agents.Read(f, name)
		f.Close()
		if err != nil {
			panic(err)
		}
		all = append(all, as...)
	}
	m, err := agents.Merge(all, 2)
	if err != nil {
		panic(err)
	}
	r := m.Result
	fmt.Println(r.Requests, r.Histogram.TotalCount(), len(r.Warnings))
	// Output: 601424 601424 0
}
