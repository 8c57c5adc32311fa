package report_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
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

// Run is "kvbench report" without the flag parsing: here the trimmed CSV
// of seed 000's Redis rounds.
func ExampleRun() {
	err := report.Run(context.Background(), report.RunOptions{
		Inputs: []string{"../../testdata/report/seed000/redis_detail.csv"},
		Format: render.CSV,
	}, &firstColumns{n: 10})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// target,alloc,strategy,persistence,mode,rounds,dropped_round,dropped_qps,trimmed_qps,trimmed_us_per_op
	// redis,,none,none,set,5,3,193900.00,207470.00,4.82
	// redis,,none,none,get,5,1,225347.00,217642.50,4.59
	// redis,,aof_no,no,set,5,5,150658.00,143399.50,6.98
	// redis,,aof_no,no,get,5,5,402028.00,214023.50,4.68
	// redis,,aof_everysec,everysec,set,5,2,132998.00,141893.00,7.05
	// redis,,aof_everysec,everysec,get,5,4,192190.00,208713.75,4.79
}

// firstColumns prints the first n columns of each CSV line it is given.
type firstColumns struct {
	n    int
	rest string
}

func (f *firstColumns) Write(p []byte) (int, error) {
	lines := strings.Split(f.rest+string(p), "\n")
	for _, l := range lines[:len(lines)-1] {
		cols := strings.Split(l, ",")
		fmt.Fprintln(os.Stdout, strings.Join(cols[:min(f.n, len(cols))], ","))
	}
	f.rest = lines[len(lines)-1]
	return len(p), nil
}
