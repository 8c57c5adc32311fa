package results

import (
	"fmt"
	"io"

	"github.com/gocarina/gocsv"
)

// NodeRow is one node's share of one attempt on a cluster target: a row
// of the nodes CSV ("<prefix>_nodes_<ts>.csv", beside the detail CSV),
// which an attempt's detail row joins on RunID, Target, Strategy, Mode,
// Round and Attempt.
type NodeRow struct {
	RunID    string `csv:"run_id" json:"run_id"`
	Target   string `csv:"target" json:"target"`
	Strategy string `csv:"strategy" json:"strategy"`
	Mode     string `csv:"mode" json:"mode"`
	Round    int    `csv:"round" json:"round"`
	Attempt  int    `csv:"attempt" json:"attempt"`
	// Node is the master's address, host:port.
	Node string `csv:"node" json:"node"`
	// Slots is the number of hash slots it served at the end of the
	// attempt.
	Slots int `csv:"slots" json:"slots"`
	// Requests counts the replies on the connections to it; QPS is
	// Requests per second of the attempt's elapsed time.
	Requests int64   `csv:"requests" json:"requests"`
	QPS      float64 `csv:"qps" json:"qps"`
	// LatP50Us and LatP99Us are its requests' latency percentiles, in µs.
	LatP50Us float64 `csv:"lat_p50_us" json:"lat_p50_us"`
	LatP99Us float64 `csv:"lat_p99_us" json:"lat_p99_us"`
	// Moved and Ask count the redirects it replied.
	Moved int64 `csv:"moved" json:"moved"`
	Ask   int64 `csv:"ask" json:"ask"`
}

// NodeWriter appends rows to a nodes CSV, flushing each attempt's.
type NodeWriter struct{ *csvFile[NodeRow] }

// CreateNodes creates the nodes CSV at path (it must not exist) and
// writes its header.
func CreateNodes(path string) (*NodeWriter, error) {
	f, err := createCSV[NodeRow](path, "nodes CSV")
	if err != nil {
		return nil, err
	}
	return &NodeWriter{f}, nil
}

// Write appends rows.
func (w *NodeWriter) Write(rows []NodeRow) error {
	if len(rows) == 0 {
		return nil
	}
	return w.append(rows)
}

// ReadNodesCSV reads a nodes CSV; name is the file's, for errors.
func ReadNodesCSV(r io.Reader, name string) ([]NodeRow, error) {
	var rows []NodeRow
	if err := gocsv.Unmarshal(r, &rows); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows, nil
}
