package results

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadCSV feeds arbitrary bytes to the detail CSV reader: no input may
// panic, every error must carry the file's position, every row its line.
// The seed corpus is in testdata/fuzz/FuzzReadCSV and runs with plain
// "go test"; package report's FuzzReport takes what the reader accepts on
// to the report.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,ok,100\nkvstore,nopersist,set,2,ok,110\nkvstore,nopersist,set,3,ok,90\n"))
	f.Add([]byte(hdr + "kvstore,nopersist,set,1,failed,\nkvstore,nopersist,set,1,ok,1e5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadCSV(bytes.NewReader(data), "f.csv")
		if err != nil {
			var ie *InputError
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
	})
}

// FuzzReadSeriesCSV feeds arbitrary bytes to the series CSV reader: no
// input may panic, every error must carry the file's position, every row
// its line. The seed corpus is in testdata/fuzz/FuzzReadSeriesCSV.
func FuzzReadSeriesCSV(f *testing.F) {
	f.Add([]byte(seriesHdr + "redis,none,set,1,1,SET,0,5\nredis,none,set,1,1,SET,0.1,7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadSeriesCSV(bytes.NewReader(data), "s.csv")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Pos.File != "s.csv" {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for _, r := range rows {
			if r.Pos.File != "s.csv" || r.Pos.Line < 2 {
				t.Fatalf("row without position: %+v", r)
			}
		}
	})
}
