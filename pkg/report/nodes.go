package report

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/pkg/report/attempt"
	"github.com/kvbench/kvbench/pkg/results"
)

// NodeSpread is how one scenario of a cluster target spread its load and
// latency over the masters (attempt.NodeSpread).
type NodeSpread = attempt.NodeSpread

// NodeSpreads pools node rows by scenario (attempt.NodeSpreads).
func NodeSpreads(rows []results.NodeRow) []NodeSpread { return attempt.NodeSpreads(rows) }

// AddNodesFile sets r.Nodes from the nodes CSV at path; a file that does
// not exist (no cluster target ran) leaves r.Nodes as it is.
func (r *Report) AddNodesFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := results.ReadNodesCSV(f, path)
	if err != nil {
		return err
	}
	r.Nodes = NodeSpreads(rows)
	return nil
}

// addNodesBeside reads the nodes CSVs that "kvbench run" wrote beside the
// detail CSVs (x_detail_TS.csv → x_nodes_TS.csv), where there are some.
func (r *Report) addNodesBeside(details []string) error {
	var rows []results.NodeRow
	for _, d := range details {
		dir, base := filepath.Split(d)
		if !strings.Contains(base, "_detail_") {
			continue
		}
		path := filepath.Join(dir, strings.Replace(base, "_detail_", "_nodes_", 1))
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		more, err := results.ReadNodesCSV(f, path)
		f.Close()
		if err != nil {
			return err
		}
		rows = append(rows, more...)
	}
	if len(rows) > 0 {
		r.Nodes = NodeSpreads(rows)
	}
	return nil
}
