package results

import "io"

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

// The nodes CSV's columns: every one is required.
var (
	nodeFields      = csvFields[NodeRow]()
	nodeFieldByName = byName(nodeFields)
	nodeColumns     = names(nodeFields)
)

// ReadNodesCSV reads a nodes CSV; name is the file's, for errors. Every
// column of NodeRow must be in the header, in any order; unknown columns
// (appended by a later kvbench) are ignored. An error names the file and
// line, and the column: "x_nodes.csv:3: column qps: "abc" is not a
// number"; all the file's errors are reported at once (up to MaxErrors).
func ReadNodesCSV(r io.Reader, name string) ([]NodeRow, error) {
	return readCSV(r, name, nodeFieldByName, nodeColumns, "nodes CSV", func(*NodeRow, Pos) {}) // series.go
}
