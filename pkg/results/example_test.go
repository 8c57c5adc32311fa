package results_test

import (
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/pkg/results"
)

// ReadCSV names the file and line of every bad cell.
func ExampleReadCSV() {
	in := "target,strategy,mode,round,status,qps\n" +
		"kvstore,nopersist,set,1,ok,150000\n" +
		"kvstore,nopersist,set,2,ok,abc\n"
	_, err := results.ReadCSV(strings.NewReader(in), "results/a.csv")
	fmt.Println(err)
	// Output: results/a.csv:3: column qps: "abc" is not a number
}

// A series CSV's empty cells read as nil: an interval without requests
// has no latency, and its events are none.
func ExampleReadSeriesCSV() {
	in := "target,strategy,mode,round,attempt,command,t_s,requests,qps,p99_us,events\n" +
		"redis,aof_everysec,set,1,1,SET,0,5000,50000,120,aof_rewrite;delayed_fsync\n" +
		"redis,aof_everysec,set,1,1,SET,0.1,0,0,,\n"
	rows, err := results.ReadSeriesCSV(strings.NewReader(in), "results/s.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Println(r.Pos, r.Requests, r.P99Us != nil, results.SplitEvents(r.Events))
	}
	// Output:
	// results/s.csv:2 5000 true [aof_rewrite delayed_fsync]
	// results/s.csv:3 0 false []
}
