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
