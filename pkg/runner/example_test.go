package runner_test

import (
	"fmt"
	"log"

	"github.com/kvbench/kvbench/pkg/runner"
)

// The plan of a small run: two rounds of two kvstore strategies, each
// round in its own shuffled order, and the estimated time.
func ExampleNewPlan() {
	o := runner.DefaultOptions()
	o.Targets = []string{"kvstore"}
	o.Strategies = []string{"nopersist", "persist_always"}
	o.Modes = []string{"set"}
	o.Rounds, o.Requests = 2, 300_000
	p, err := runner.NewPlan(o)
	if err != nil {
		log.Fatal(err)
	}
	for _, st := range p.Steps {
		fmt.Println(st.Round, st.Scenario.Name())
	}
	fmt.Println("estimate:", p.Estimate())
	// Output:
	// 1 kvstore/nopersist/set
	// 1 kvstore/persist_always/set
	// 2 kvstore/persist_always/set
	// 2 kvstore/nopersist/set
	// estimate: 7.9s
}
