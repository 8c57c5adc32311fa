package output_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report/output"
)

// Run is "kvbench report" without the flag parsing: here the trimmed CSV
// of seed 000's Redis rounds.
func ExampleRun() {
	err := output.Run(context.Background(), output.RunOptions{
		Inputs: []string{"../../../testdata/report/seed000/redis_detail.csv"},
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
