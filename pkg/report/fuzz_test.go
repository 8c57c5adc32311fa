package report

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kvbench/kvbench/pkg/results"
)

// FuzzReport feeds arbitrary bytes to the detail CSV reader, and what it
// accepts to Build and the writers: no input may panic, every error must
// carry the file's position, every row its line. The seed corpus is in
// testdata/fuzz/FuzzReport (package results' FuzzReadCSV corpus) and
// runs with plain "go test".
func FuzzReport(f *testing.F) {
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,ok,100\nkvstore,nopersist,set,2,ok,110\nkvstore,nopersist,set,3,ok,90\n"))
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,failed,\nkvstore,nopersist,set,1,ok,1e5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := results.ReadCSV(bytes.NewReader(data), "f.csv")
		if err != nil {
			var ie *results.InputError
			if !errors.As(err, &ie) || ie.Pos.File != "f.csv" {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for _, r := range rows {
			if r.Pos.File != "f.csv" || r.Pos.Line < 2 {
				t.Fatalf("row without position: %+v", r)
			}
		}
		rep, err := Build(rows, Options{})
		if err != nil {
			return
		}
		for _, write := range []func(io.Writer) error{rep.WriteMarkdown, rep.WriteSummaryCSV, rep.WriteTrimmedCSV, rep.WriteJSON} {
			if err := write(io.Discard); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
	})
}
