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
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := results.ReadCSV(bytes.NewReader(data), "f.csv")
		if err != nil {
			return
		}
		rep, err := report.Build(rows, report.Options{})
		if err != nil {
			return
		}
		for _, write := range []func(io.Writer) error{func(w io.Writer) error { return Markdown(rep, w) }, func(w io.Writer) error { return SummaryCSV(rep, w) }, func(w io.Writer) error { return TrimmedCSV(rep, w) }, func(w io.Writer) error { return JSON(rep, w) }} {
			if err := write(io.Discard); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	})
}
