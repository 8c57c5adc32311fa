package report_test

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// The orchestrator holds its rows in memory and builds the same report as
// "kvbench report" does from the CSV files.
func ExampleBuild() {
	var rows []results.Row
	add := func(strategy, persistence string, qps ...float64) {
		for i, q := range qps {
			rows = append(rows, results.Row{Target: "kvstore", Strategy: strategy, Persistence: persistence,
				Mode: "set", Round: i + 1, Status: results.StatusOK, QPS: q})
		}
	}
	add("persist_no", "no", 139895, 138768, 138867, 143296, 144388)
	add("nopersist", "none", 157950, 143109, 135043, 152045, 147233)

	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := rep.Targets[0].Scenario("persist_no", "set")
	fmt.Println("dropped round", sc.DroppedRound, sc.DroppedQPS)
	fmt.Println("trimmed", sc.TrimmedQPS, sc.TrimmedUsPerOp)
	fmt.Println("against", sc.Baseline, sc.Change(report.MetricQPS), sc.Change(report.MetricUsPerOp))
	// Output:
	// dropped round 5 144388.00
	// trimmed 140206.50 7.13
	// against nopersist -6.58% ~ +6.90% ~
}
