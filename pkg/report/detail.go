package report

import "fmt"

// DetailRow is one measured attempt: a row of the detail CSV that
// "kvbench run" writes (with gocsv, using the csv tags) and "kvbench report"
// reads. The columns, in this order, are DetailColumns.
//
// Numeric columns left empty read as zero, and zero means "not measured" for
// UsPerOp and the latency columns: a round's us/op is then 1e6/QPS.
type DetailRow struct {
	// RunID identifies the "kvbench run" invocation that wrote the row.
	RunID string `csv:"run_id" json:"run_id,omitempty"`
	// StartedAt is when the attempt started, RFC 3339.
	StartedAt string `csv:"started_at" json:"started_at,omitempty"`
	// Target is the server kind or name: kvstore, redis, or a configured name.
	Target string `csv:"target" json:"target"`
	// Strategy names the persistence configuration (persist_no, aof_everysec, …).
	Strategy string `csv:"strategy" json:"strategy"`
	// Persistence is the strategy's durability class: none, no, everysec,
	// always, rdb…; "none" marks the baseline of its target and alloc.
	Persistence string `csv:"persistence" json:"persistence,omitempty"`
	// Alloc is the server's allocator (mypool, malloc, …), empty if not applicable.
	Alloc string `csv:"alloc" json:"alloc,omitempty"`
	// Mode is the workload: set, get or mixed.
	Mode string `csv:"mode" json:"mode"`
	// Round is the round number, from 1.
	Round int `csv:"round" json:"round"`
	// Attempt is the attempt number within the round, from 1.
	Attempt int `csv:"attempt" json:"attempt,omitempty"`
	// Status is "ok" for a measured round; anything else is a failed attempt.
	Status string `csv:"status" json:"status"`
	// Error describes why a failed attempt failed.
	Error string `csv:"error" json:"error,omitempty"`
	// Requests is the number of requests sent.
	Requests int64 `csv:"requests" json:"requests,omitempty"`
	// Pipeline is the pipeline depth.
	Pipeline int `csv:"pipeline" json:"pipeline,omitempty"`
	// Connections is the number of client connections.
	Connections int `csv:"connections" json:"connections,omitempty"`
	// Keyspace is the number of distinct keys.
	Keyspace int64 `csv:"keyspace" json:"keyspace,omitempty"`
	// ValueSize is the value size in bytes.
	ValueSize int `csv:"value_size" json:"value_size,omitempty"`
	// Seed is the round's random seed.
	Seed int64 `csv:"seed" json:"seed,omitempty"`
	// ElapsedS is the measured wall time in seconds.
	ElapsedS float64 `csv:"elapsed_s" json:"elapsed_s,omitempty"`
	// QPS is requests per second.
	QPS float64 `csv:"qps" json:"qps"`
	// UsPerOp is the amortized time per operation in microseconds, 2
	// decimals; 0 means absent (then 1e6/QPS is used).
	UsPerOp float64 `csv:"us_per_op" json:"us_per_op,omitempty"`
	// LatP50Us is the median latency in microseconds; 0 means not measured.
	LatP50Us float64 `csv:"lat_p50_us" json:"lat_p50_us,omitempty"`
	// LatP99Us is the 99th percentile latency in microseconds.
	LatP99Us float64 `csv:"lat_p99_us" json:"lat_p99_us,omitempty"`
	// LatP999Us is the 99.9th percentile latency in microseconds.
	LatP999Us float64 `csv:"lat_p999_us" json:"lat_p999_us,omitempty"`
	// LatMaxUs is the highest latency in microseconds.
	LatMaxUs float64 `csv:"lat_max_us" json:"lat_max_us,omitempty"`
	// Errors counts error replies.
	Errors int64 `csv:"errors" json:"errors,omitempty"`
	// Conflicts counts rejected writes to existing keys (RSET).
	Conflicts int64 `csv:"conflicts" json:"conflicts,omitempty"`
	// Misses counts GETs that found no value.
	Misses int64 `csv:"misses" json:"misses,omitempty"`
	// VerifyFailures counts GETs whose value differed from what was written.
	VerifyFailures int64 `csv:"verify_failures" json:"verify_failures,omitempty"`
	// PrefillS is the prefill time in seconds (get and mixed modes).
	PrefillS float64 `csv:"prefill_s" json:"prefill_s,omitempty"`
	// ServerVersion is the server's reported version.
	ServerVersion string `csv:"server_version" json:"server_version,omitempty"`
	// ServerConfig is the server's effective persistence configuration.
	ServerConfig string `csv:"server_config" json:"server_config,omitempty"`

	// Pos is where the row was read from; zero for rows built in memory.
	// It is not a CSV column.
	Pos Pos `csv:"-" json:"-"`
}

// DetailColumns lists the detail CSV's columns in the order "kvbench run"
// writes them; they are the csv tags of DetailRow.
var DetailColumns = []string{
	"run_id", "started_at", "target", "strategy", "persistence", "alloc", "mode",
	"round", "attempt", "status", "error", "requests", "pipeline", "connections",
	"keyspace", "value_size", "seed", "elapsed_s", "qps", "us_per_op",
	"lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "errors",
	"conflicts", "misses", "verify_failures", "prefill_s", "server_version",
	"server_config",
}

// RequiredColumns are the detail CSV columns a file must have; any other
// column is optional and unknown columns are ignored.
var RequiredColumns = []string{"target", "strategy", "mode", "round", "status", "qps"}

// StatusOK is the status of a measured round; rows with any other status
// are failed attempts.
const StatusOK = "ok"

// OK reports whether the row is a measured round (status "ok").
func (r *DetailRow) OK() bool { return r.Status == StatusOK }

// Pos is a position in an input: a file and a 1-based line. The zero Pos
// means "built in memory"; Index then numbers the row from 1.
type Pos struct {
	// File is the file name as given.
	File string
	// Line is the 1-based line where the row starts.
	Line int
	// Index numbers an in-memory row from 1 (when File is empty).
	Index int
}

// String formats the position as "file:line", or "row N" for an in-memory row.
func (p Pos) String() string {
	switch {
	case p.File != "" && p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	case p.File != "":
		return p.File
	case p.Index > 0:
		return fmt.Sprintf("row %d", p.Index)
	}
	return "(memory)"
}
