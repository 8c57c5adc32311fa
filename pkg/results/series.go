package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SeriesRow is one interval of one command of one attempt: a row of the
// series CSV ("<prefix>_series_<ts>.csv", beside the detail CSV, with the
// same <ts>), which joins an attempt's detail row on RunID, Target,
// Strategy, Mode, Round and Attempt (and Workload). An attempt's rows of
// one command and node add up to its detail row's requests: every reply
// of the measured phase is counted in the interval it arrived in.
//
// Like Row's, the columns are the csv tags in field order, and new ones
// are appended.
type SeriesRow struct {
	RunID    string `csv:"run_id" json:"run_id"`
	Target   string `csv:"target" json:"target"`
	Strategy string `csv:"strategy" json:"strategy"`
	Mode     string `csv:"mode" json:"mode"`
	Round    int    `csv:"round" json:"round"`
	Attempt  int    `csv:"attempt" json:"attempt"`
	// Command is the command measured: a workload's command by its name
	// or CommandTotal for the whole mix, the set or get mode's command,
	// CommandTotal for the mixed mode.
	Command string `csv:"command" json:"command"`
	// TS is the interval's start, in seconds from the start of the
	// measured phase (the first interval is cut to begin there, the last
	// to end at its end).
	TS float64 `csv:"t_s" json:"t_s"`
	// Requests and Errors count the replies, and the error replies, that
	// arrived in the interval.
	Requests int64 `csv:"requests" json:"requests"`
	Errors   int64 `csv:"errors" json:"errors"`
	// QPS is Requests per second of the interval's part within the
	// measured phase; empty when that part has no length.
	QPS *float64 `csv:"qps" json:"qps,omitempty"`
	// The latency percentiles of the interval's requests, in µs (to 2
	// significant digits); empty for an interval without requests.
	P50Us  *float64 `csv:"p50_us" json:"p50_us,omitempty"`
	P99Us  *float64 `csv:"p99_us" json:"p99_us,omitempty"`
	P999Us *float64 `csv:"p999_us" json:"p999_us,omitempty"`
	MaxUs  *float64 `csv:"max_us" json:"max_us,omitempty"`
	// Workload names the workload of a workload's rows; empty for the
	// set, get and mixed modes.
	Workload string `csv:"workload" json:"workload,omitempty"`
	// Node is the master of a cluster target whose share of the interval
	// the row is; empty for a single server and for the whole of a
	// cluster's interval.
	Node string `csv:"node" json:"node,omitempty"`
	// Events are what the server was doing during the interval, from its
	// INFO persistence polled once per interval: Events' names joined by
	// ";"; empty when nothing was seen.
	Events string `csv:"events" json:"events,omitempty"`
	// LatencyHist is the interval's latency histogram (a whole row's:
	// not a command's or a node's), in nanoseconds, as the detail CSV's
	// latency_hist (HdrHistogram's compressed encoding in base64): what
	// the report's heatmaps are drawn from. Empty for an interval without
	// requests, and in files written before.
	LatencyHist string `csv:"latency_hist" json:"latency_hist,omitempty"`

	// Pos is where the row was read from; zero for rows built in memory.
	Pos Pos `csv:"-" json:"-"`
}

// The server events of the events column.
const (
	// EventAOFRewrite: an AOF rewrite was in progress
	// (aof_rewrite_in_progress).
	EventAOFRewrite = "aof_rewrite"
	// EventRDBSave: an RDB background save was in progress
	// (rdb_bgsave_in_progress).
	EventRDBSave = "rdb_bgsave"
	// EventDelayedFsync: an fsync of the AOF was delayed (aof_delayed_fsync
	// grew).
	EventDelayedFsync = "delayed_fsync"
	// EventPersistJob: the persistence job "run --persist-job" set off
	// was under way (from its command's reply to the poll that found it
	// done).
	EventPersistJob = "persist_job"
)

// EventSep separates the events of a cell.
const EventSep = ";"

// SplitEvents returns the events of an events cell.
func SplitEvents(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, EventSep)
}

// SeriesRequired are the columns a series CSV must have; the others read
// as empty when absent.
var SeriesRequired = []string{"target", "strategy", "mode", "round", "attempt", "command", "t_s", "requests"}

var (
	seriesFields      = csvFields[SeriesRow]()
	seriesFieldByName = byName(seriesFields)
	// SeriesColumns lists the series CSV's columns in the order they are
	// written.
	SeriesColumns = names(seriesFields)
)

// SeriesWriter appends rows to a series CSV, flushing each attempt's.
type SeriesWriter struct{ *csvFile[SeriesRow] }

// CreateSeries creates the series CSV at path (it must not exist) and
// writes its header.
func CreateSeries(path string) (*SeriesWriter, error) {
	f, err := createCSV[SeriesRow](path, "series CSV")
	if err != nil {
		return nil, err
	}
	return &SeriesWriter{f}, nil
}

// Write appends rows and flushes them (the nodes and series CSVs' Write).
func (w *csvFile[T]) Write(rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	return w.append(rows)
}

// ReadSeriesCSV reads a series CSV; name is the file's, for errors. The
// header must hold SeriesRequired, in any order; unknown columns are
// ignored. An error names the file, line and column; all the file's
// errors are reported at once (up to MaxErrors).
func ReadSeriesCSV(r io.Reader, name string) ([]SeriesRow, error) {
	return readCSV(r, name, seriesFieldByName, SeriesRequired, "series CSV", func(row *SeriesRow, pos Pos) { row.Pos = pos })
}

// readCSV reads a whole CSV of T (what names it in errors): its header
// must hold the required columns among fields; each row is passed to at,
// with its position, before it is kept.
func readCSV[T any](r io.Reader, name string, fields map[string]field, required []string, what string, at func(*T, Pos)) ([]T, error) {
	hdrPos := Pos{File: name, Line: 1}
	br := &sniffReader{r: r}
	cr := csv.NewReader(br)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &InputError{Pos: hdrPos, Err: fmt.Errorf("%w file: no header line", ErrEmpty)}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if br.binary {
		return nil, &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	cols, err := mapHeader(header, hdrPos, fields, required, what)
	if err != nil {
		return nil, err
	}
	var rows []T
	err = readRows(cr, name, cols, func(row *T, pos Pos) {
		at(row, pos)
		rows = append(rows, *row)
	})
	if br.binary {
		return nil, &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	return rows, err
}

// ReadSeriesFile reads the series CSV at path.
func ReadSeriesFile(path string) ([]SeriesRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read series CSV: %w", err)
	}
	defer f.Close()
	return ReadSeriesCSV(f, path)
}

// SeriesPath is the series CSV beside the detail CSV at path, by its
// name: "x_detail_<ts>.csv" gives "x_series_<ts>.csv"; "" when the name
// is not a detail CSV's.
func SeriesPath(detail string) string {
	base := filepath.Base(detail)
	i := strings.LastIndex(base, "_detail_")
	if i < 0 || !strings.HasSuffix(base, ".csv") {
		return ""
	}
	return filepath.Join(filepath.Dir(detail), base[:i]+"_series_"+base[i+len("_detail_"):])
}
