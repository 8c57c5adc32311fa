package output

import (
	"bytes"
	"io"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// FuzzReport feeds what the detail CSV reader accepts of arbitrary bytes
// to Build and the writers: no input may panic, and a report that builds
// must write (the reader's own checks are package results' FuzzReadCSV).
// The seed corpus is in testdata/fuzz/FuzzReport and runs with plain
// "go test".
func FuzzReport(f *testing.F) {
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,ok,100\nkvstore,nopersist,set,2,ok,110\nkvstore,nopersist,set,3,ok,90\n"))
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,failed,\nkvstore,nopersist,set,1,ok,1e5\n"))
	f.Add([]byte("target,strategy,persistence,mode,round,status,qps,lat_p99_us,block,slice,disturbed\n" +
		"k,a,none,set,1,ok,100,200,1,1,\nk,b,no,set,1,ok,90,210,1,2,\nk,b,no,set,2,ok,91,,1,3,\nk,a,none,set,2,ok,101,190,1,4,steal 0.5 CPUs > 0.10\n" +
		"k,a,none,set,3,ok,99,200,2,1,\nk,b,no,set,3,ok,80,220,2,2,other processes 0.3 CPUs > 0.20\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := results.ReadCSV(bytes.NewReader(data), "f.csv")
		if err != nil {
			return
		}
		rep, err := report.Build(rows, report.Options{})
		if err != nil {
			return
		}
		for _, write := range []func(io.Writer) error{func(w io.Writer) error { return Markdown(rep, w) }, func(w io.Writer) error { return SummaryCSV(rep, w) }, func(w io.Writer) error { return TrimmedCSV(rep, w) }, func(w io.Writer) error { return JSON(rep, w) },
			func(w io.Writer) error { return ComparisonsCSV(rep, w) }} {
			if err := write(io.Discard); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	})
}
