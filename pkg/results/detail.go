package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gocarina/gocsv"
)

// Row is one measured attempt: a row of the detail CSV. Its csv tags, in
// field order, are the file's columns (Columns); a new column is a new
// field appended at the end, before Pos.
//
// Numeric columns left empty read as zero, and zero means "not measured" for
// UsPerOp and the latency columns: a round's us/op is then 1e6/QPS.
type Row struct {
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
	// Mode is the workload: set, get or mixed, or ModeWorkload for a
	// workload's rows (see Workload and Command).
	Mode string `csv:"mode" json:"mode"`
	// Round is the round number, from 1.
	Round int `csv:"round" json:"round"`
	// Attempt is the attempt number within the round, from 1.
	Attempt int `csv:"attempt" json:"attempt,omitempty"`
	// Status is StatusOK for a measured round; any other status is an
	// attempt that measured nothing (see Statuses).
	Status string `csv:"status" json:"status"`
	// Error describes why an attempt failed.
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
	// ClientHost is the host name of the machine that ran the load
	// generator.
	ClientHost string `csv:"client_host" json:"client_host,omitempty"`
	// CPUModel is that machine's CPU model ("model name" of /proc/cpuinfo).
	CPUModel string `csv:"cpu_model" json:"cpu_model,omitempty"`
	// Cores is the number of logical CPUs the load generator could use.
	Cores int `csv:"cores" json:"cores,omitempty"`
	// Kernel is that machine's kernel release (uname -r).
	Kernel string `csv:"kernel" json:"kernel,omitempty"`
	// Label names the build or setup the run measured ("run --label"),
	// for "kvbench compare --by label"; empty when not given.
	Label string `csv:"label" json:"label,omitempty"`
	// ClientCPUS is the load generator's CPU time (user + system) over
	// the measured interval, in seconds; 0 when not measured.
	ClientCPUS float64 `csv:"client_cpu_s" json:"client_cpu_s,omitempty"`
	// ServerCPUS is the server's CPU time over the measured interval, in
	// seconds: every thread of every process of a spawned server's
	// process group (/proc's schedstat, nanoseconds), or INFO cpu for
	// others (microseconds); empty (0) when not known or too little to
	// measure (see the runner's MinServerCPU).
	ServerCPUS Opt `csv:"server_cpu_s" json:"server_cpu_s,omitempty"`
	// QPSPerServerCPUS is QPS / (ServerCPUS / ElapsedS): requests per
	// CPU-second of the server, the fair figure across servers with
	// different numbers of threads; empty (0) when ServerCPUS is.
	QPSPerServerCPUS Opt `csv:"qps_per_server_cpu_s" json:"qps_per_server_cpu_s,omitempty"`
	// ClientBound is true when the load generator was busy for at least
	// ClientBoundShare of its threads' wall time: it, not the server, may
	// have set the pace.
	ClientBound bool `csv:"client_bound" json:"client_bound,omitempty"`
	// Flushed is set when the attempt began by emptying a server that held
	// keys kvbench had not written (an attach target, with the user's
	// leave: --allow-flush or allow_flush).
	Flushed bool `csv:"flushed" json:"flushed,omitempty"`
	// LatencyHist is the attempt's whole latency histogram, in
	// nanoseconds: HdrHistogram's standard compressed encoding in base64
	// (hdrhistogram-go's Encode, Decode to read it), from which any
	// percentile, or a merge with other attempts, can be derived.
	LatencyHist string `csv:"latency_hist" json:"latency_hist,omitempty"`
	// Agents is the number of load-generator processes that shared the
	// measurement (kvbench run --agents), their results merged; 1 when
	// it ran in kvbench's own process, 0 in files written before.
	Agents int `csv:"agents" json:"agents,omitempty"`
	// Shards is the number of masters of a cluster target, among which
	// the keys were spread; 0 for a single server.
	Shards int `csv:"shards" json:"shards,omitempty"`
	// Moved and Ask count a cluster target's redirects: MOVED (the slot
	// map changed) and ASK (a slot being migrated) replies; 0 for a
	// single server.
	Moved int64 `csv:"moved" json:"moved,omitempty"`
	Ask   int64 `csv:"ask" json:"ask,omitempty"`
	// Workload names the workload of a row whose Mode is ModeWorkload
	// ("kvbench run --workloads"): a named workload or a file's path;
	// empty for the set, get and mixed modes.
	Workload string `csv:"workload" json:"workload,omitempty"`
	// Command is the command of the workload the row measures, by its
	// name in the workload (GET, or a name the file gives it), or
	// CommandTotal for the whole mix; each attempt of a workload writes
	// one row per command and one total row. Empty outside workloads.
	Command string `csv:"command" json:"command,omitempty"`
	// TLS says the load generator reached the server over TLS; false in
	// files written before.
	TLS bool `csv:"tls" json:"tls,omitempty"`
	// Reconnects counts the connections lost mid-measurement and dialled
	// again; 0 in files written before.
	Reconnects int64 `csv:"reconnects" json:"reconnects,omitempty"`
	// StartS is the time in seconds from spawning the server (a cluster:
	// its nodes, and forming it) to its verified PING reply; StopS from
	// the stop signal to the server reaped and its directory removed.
	// "kvbench run --dry-run" estimates the next run from them. Zero in
	// files written before.
	StartS float64 `csv:"start_s" json:"start_s,omitempty"`
	StopS  float64 `csv:"stop_s" json:"stop_s,omitempty"`
	// Stalls counts the attempt's stalls (see measure.Stalls) and
	// LongestStallMs is the longest, in ms: found from the series ("run
	// --interval"); empty when no series was recorded, and in files
	// written before.
	Stalls         *int64   `csv:"stalls" json:"stalls,omitempty"`
	LongestStallMs *float64 `csv:"longest_stall_ms" json:"longest_stall_ms,omitempty"`
	// ServerRSSBytes is the peak resident set size of a spawned server
	// during the measured interval, sampled from /proc (a cluster's: the
	// peak of its processes' sum); empty for attached servers.
	ServerRSSBytes OptInt `csv:"server_rss_bytes" json:"server_rss_bytes,omitempty"`
	// ServerUsedMemoryBytes is INFO memory's used_memory after the
	// measured interval (a cluster's: its masters' sum); empty when the
	// server does not say.
	ServerUsedMemoryBytes OptInt `csv:"server_used_memory_bytes" json:"server_used_memory_bytes,omitempty"`
	// ServerUsecPerCall is the server's own time per call of the measured
	// command over the interval, in microseconds: the INFO commandstats
	// delta of usec over that of calls (a mode's commands together: SET
	// and GET for mixed; a workload's row, its own command's); empty when
	// the server keeps no commandstats.
	ServerUsecPerCall Opt `csv:"server_usec_per_call" json:"server_usec_per_call,omitempty"`
	// ServerCalls is the commandstats delta of calls of those commands:
	// the requests as the server counted them.
	ServerCalls OptInt `csv:"server_calls" json:"server_calls,omitempty"`
	// RecoveryS is a recovery row's time from the start of the server's
	// new process, on the killed one's directory, to its answer to a read
	// of a key it held; RecoveryKeysPerS is the keys it loaded per second
	// of it, and RecoveryMBPerS the megabytes (10^6) of its log or
	// snapshot files. Empty for other modes, and when the server came back
	// without the key (it lost the dataset: no recovery to time).
	RecoveryS        *float64 `csv:"recovery_s" json:"recovery_s,omitempty"`
	RecoveryKeysPerS *float64 `csv:"recovery_keys_per_s" json:"recovery_keys_per_s,omitempty"`
	RecoveryMBPerS   *float64 `csv:"recovery_mb_per_s" json:"recovery_mb_per_s,omitempty"`
	// AckedWrites counts a recovery row's writes the server acknowledged
	// before it was killed, and AckedLost those missing or older after the
	// restart. Empty for other modes.
	AckedWrites *int64 `csv:"acked_writes" json:"acked_writes,omitempty"`
	AckedLost   *int64 `csv:"acked_lost" json:"acked_lost,omitempty"`
	// Rate is the requests per second of an open-loop phase of a load
	// curve ("run --rates"), resolved against the attempt's closed-loop
	// peak when given relative; RateSpec is the entry of the list it came
	// from (75% or 20000), which groups the phase over rounds. Both are
	// empty for the closed-loop row, and in files written before.
	Rate     *float64 `csv:"rate" json:"rate,omitempty"`
	RateSpec string   `csv:"rate_spec" json:"rate_spec,omitempty"`
	// CapacityQPS is, on a closed-loop row, the attempt's capacity at the
	// latency objective SLO ("run --slo"): the highest rate at which it
	// held; empty when it held at no rate tried, without --slo, and in
	// files written before.
	CapacityQPS *float64 `csv:"capacity_qps" json:"capacity_qps,omitempty"`
	SLO         string   `csv:"slo" json:"slo,omitempty"`
	// SendLagP99Us is, on a load curve's row, the p99 of how late the
	// requests left against their intended send times, in µs: above
	// measure.MaxSendLag the phase's latencies include the client's
	// queueing. Empty on the closed-loop row and in files written before.
	SendLagP99Us *float64 `csv:"send_lag_p99_us" json:"send_lag_p99_us,omitempty"`
	// Crash is how a recovery row's server went down: CrashProcess (kill
	// -9; the OS keeps what it wrote) or CrashPower (kill -9, then what it
	// had not synced dropped: "run --power-loss"). Empty for other modes,
	// and in files written before, where it was a process crash.
	Crash string `csv:"crash" json:"crash,omitempty"`
	// LostWindowS is, on a recovery row that lost acknowledged writes,
	// how long before the crash the oldest of them was acknowledged, in
	// seconds: the window of writes the policy lost (an everysec log's
	// second). Empty when none was lost, and in files written before.
	LostWindowS *float64 `csv:"lost_window_s" json:"lost_window_s,omitempty"`
	// RESP3 says every connection of the load generator spoke RESP3
	// (HELLO 3); false in files written before, which spoke RESP2.
	RESP3 bool `csv:"resp3" json:"resp3,omitempty"`
	// Placement is where the server's and the load generator's threads
	// ran (run --cpus, package machine): "off" when the scheduler placed
	// them, a CPU list when both shared it ("0"), else
	// "server=0,client=1". Empty in files written before (unpinned).
	// compare treats another placement as another setting.
	Placement string `csv:"placement" json:"placement,omitempty"`
	// Block is, in an adaptive run (run --precision), the block the
	// measurement belongs to: the slices of one block were measured close
	// together in time, every scenario of their mode once or twice, and
	// comparisons pair them block by block. 0 (empty) for the rounds of a
	// fixed-round run, and in files written before.
	Block int `csv:"block" json:"block,omitempty"`
	// Slice is the measurement's position in its block, from 1.
	Slice int `csv:"slice" json:"slice,omitempty"`
	// StealCPUs and OtherCPUs are what the machine did besides the
	// measurement, on average over it, in CPUs: time the hypervisor gave
	// other guests, and the CPU time of processes not measured. Load1 is
	// the one-minute load average at its end, CPUMHz the CPUs' mean
	// frequency (empty where the machine does not say). All empty in
	// files written before.
	StealCPUs *float64 `csv:"steal_cpus" json:"steal_cpus,omitempty"`
	OtherCPUs *float64 `csv:"other_cpus" json:"other_cpus,omitempty"`
	Load1     *float64 `csv:"load1" json:"load1,omitempty"`
	CPUMHz    *float64 `csv:"cpu_mhz" json:"cpu_mhz,omitempty"`
	// Disturbed says why the machine's signals broke the disturbance rule
	// over the measurement (machine.DefaultRule: steal, or other
	// processes' CPU); empty when they did not. An adaptive run leaves a
	// disturbed slice out of its comparisons, and the report counts them.
	Disturbed string `csv:"disturbed" json:"disturbed,omitempty"`
	// Notes say what kvbench could not read or do on the attempt's
	// server for want of a command, and what to do instead, separated by
	// "; " (target.Info.Notes): "config not verified: CONFIG
	// unsupported", a server not emptied for want of FLUSHALL. Empty
	// when it lacked none, and in files written before.
	Notes string `csv:"notes" json:"notes,omitempty"`
	// CapacityWhy is, on a closed-loop row searched at SLO, why it has no
	// CapacityQPS: the machine could not hold the schedule at a rate, or
	// the objective held at no rate tried (the search's words); empty
	// otherwise, and in files written before.
	CapacityWhy string `csv:"capacity_why" json:"capacity_why,omitempty"`
	// PersistJob is the persistence job set off during the measured
	// phase ("run --persist-job"): bgsave or rewrite; empty without one,
	// and in files written before. The columns after it describe it,
	// each empty where the server did not report it or the phase did not
	// show it (never a 0 that was not measured).
	PersistJob string `csv:"persist_job" json:"persist_job,omitempty"`
	// JobS is the job's time, from its command's reply to the first poll
	// of INFO persistence that found it done (with --persist-job-every,
	// the longest); ForkMs the server's pause to start it (INFO's
	// latest_fork_usec: Redis's fork, the kvstore's snapshot under its
	// write lock); CowBytes the memory it copied or kept alive (Redis's
	// rdb_last_cow_size or aof_last_cow_size, the kvstore's likewise).
	// A cluster's: the longest job and fork, the sum of copies.
	JobS     *float64 `csv:"job_s" json:"job_s,omitempty"`
	ForkMs   *float64 `csv:"fork_ms" json:"fork_ms,omitempty"`
	CowBytes *int64   `csv:"cow_bytes" json:"cow_bytes,omitempty"`
	// RSSBeforeBytes is the resident memory of the server's processes
	// (the forked child's included, each page counted once: the sum of
	// their proportional set sizes) just before the job; RSSPeakBytes
	// its peak from then to the phase's end.
	RSSBeforeBytes *int64 `csv:"rss_before_bytes" json:"rss_before_bytes,omitempty"`
	RSSPeakBytes   *int64 `csv:"rss_peak_bytes" json:"rss_peak_bytes,omitempty"`
	// P99BeforeUs, P99DuringUs and P99AfterUs are the load's p99 in µs
	// over the intervals of the series before the job, those it spanned,
	// and those after it; QPSBefore, QPSDuring and QPSAfter its
	// throughput over the same. P99RecoveryS is the time from the job's
	// end to the start of the first interval whose p99 is within 10% of
	// P99BeforeUs (at the series' resolution, run --interval); empty when
	// p99 was not back by the phase's end.
	P99BeforeUs  *float64 `csv:"p99_before_us" json:"p99_before_us,omitempty"`
	P99DuringUs  *float64 `csv:"p99_during_us" json:"p99_during_us,omitempty"`
	P99RecoveryS *float64 `csv:"p99_recovery_s" json:"p99_recovery_s,omitempty"`
	P99AfterUs   *float64 `csv:"p99_after_us" json:"p99_after_us,omitempty"`
	QPSBefore    *float64 `csv:"qps_before" json:"qps_before,omitempty"`
	QPSDuring    *float64 `csv:"qps_during" json:"qps_during,omitempty"`
	QPSAfter     *float64 `csv:"qps_after" json:"qps_after,omitempty"`

	// Pos is where the row was read from (or written to); zero for rows
	// built in memory. It is not a column.
	Pos Pos `csv:"-" json:"-"`
}

// The status values of a row.
const (
	// StatusOK marks a measured round.
	StatusOK = "ok"
	// StatusFailed marks an attempt that failed; it is retried on a fresh
	// server unless the retries ran out.
	StatusFailed = "failed"
	// StatusInterrupted marks the attempt that was running when the run was
	// interrupted.
	StatusInterrupted = "interrupted"
	// StatusUnsupported marks a workload's rows on a target that lacks
	// some of its commands: nothing was measured, nothing retried, and the
	// run does not count it as a failure.
	StatusUnsupported = "unsupported"
)

// ModeWorkload is the mode column of a workload's rows: their Workload
// and Command columns say what was measured. The column's other values
// are measure's modes (set, get, mixed) and ModeRecovery.
const ModeWorkload = "workload"

// ModeRecovery is the mode column of a recovery row: the server killed
// amid acknowledged writes and started again on its files (RecoveryS,
// AckedWrites, AckedLost).
const ModeRecovery = "recovery"

// The crash kinds of a recovery row (Row.Crash).
const (
	CrashProcess = "process"
	CrashPower   = "power"
)

// CommandTotal is the Command of a workload row that holds the whole mix:
// every command's requests, and the latencies of them all.
const CommandTotal = "total"

// ClientBoundShare is the share of its threads' wall time the load
// generator must be busy for a row to be marked ClientBound.
const ClientBoundShare = 0.85

// Statuses lists every status value, StatusOK first.
var Statuses = []string{StatusOK, StatusFailed, StatusInterrupted, StatusUnsupported}

// OK reports whether the row is a measured round.
func (r *Row) OK() bool { return r.Status == StatusOK }

// Scenario is the row's mode as reports name its scenario: the mode, or
// for a workload's row "workload command" (ycsb-a READ, ycsb-a total),
// each command being measured and compared on its own; a load curve's
// phase adds its rate ("get at 75%"), each rate being another scenario.
func (r *Row) Scenario() string {
	s := r.Mode
	if r.Workload != "" {
		s = r.Workload + " " + r.Command
	}
	if k := r.RateKey(); k != "" {
		s += " at " + k
	}
	return s
}

// RateKey names the rate of a load curve's row, as its phases are grouped
// over rounds: RateSpec, or Rate in requests per second when RateSpec is
// empty; "" for a closed-loop row.
func (r *Row) RateKey() string {
	switch {
	case r.RateSpec != "":
		return r.RateSpec
	case r.Rate != nil:
		return strconv.FormatFloat(*r.Rate, 'f', -1, 64) + "/s"
	}
	return ""
}

// Unsupported reports whether the row is a workload the target lacks
// commands of (StatusUnsupported).
func (r *Row) Unsupported() bool { return r.Status == StatusUnsupported }

// Columns lists the detail CSV's columns in the order they are written: the
// csv tags of Row, in field order.
var Columns = names(rowFields())

// RequiredColumns are the columns a detail CSV must have; every other
// column is optional (it reads as its zero value when absent) and unknown
// columns are ignored.
var RequiredColumns = []string{"target", "strategy", "mode", "round", "status", "qps"}

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

// field is one column of Row: its name, field index and kind.
type field struct {
	name  string
	index int
	kind  reflect.Kind
}

// rowFields lists Row's columns from its csv tags, in field order.
func rowFields() []field { return csvFields[Row]() }

// csvFields lists a row type's columns from its csv tags, in field order.
func csvFields[T any]() []field {
	var fs []field
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		f := t.Field(i)
		if tag := f.Tag.Get("csv"); tag != "" && tag != "-" {
			fs = append(fs, field{name: tag, index: i, kind: f.Type.Kind()})
		}
	}
	return fs
}

// names lists the column names of fs.
func names(fs []field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.name)
	}
	return out
}

// byName maps each column name of fs to its field.
func byName(fs []field) map[string]field {
	m := make(map[string]field)
	for _, f := range fs {
		m[f.name] = f
	}
	return m
}

// fieldByName maps a column name of the detail CSV to its field.
var fieldByName = byName(rowFields())

// csvFile is a CSV file of T, written with gocsv (driven by T's csv tags)
// and flushed at every append, so that an interrupted run keeps every row
// it wrote.
type csvFile[T any] struct {
	f    *os.File
	csv  *gocsv.SafeCSVWriter
	path string
}

// createCSV creates the CSV at path (it must not exist: what names it in
// the error) and writes its header.
func createCSV[T any](path, what string) (*csvFile[T], error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create the %s: %w", what, err)
	}
	w := &csvFile[T]{f: f, csv: gocsv.NewSafeCSVWriter(csv.NewWriter(f)), path: path}
	if err := gocsv.MarshalCSV([]T{}, w.csv); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.flush(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// append writes rows and flushes them to the file.
func (w *csvFile[T]) append(rows []T) error {
	if err := gocsv.MarshalCSVWithoutHeaders(rows, w.csv); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return w.flush()
}

func (w *csvFile[T]) flush() error {
	w.csv.Flush()
	if err := w.csv.Error(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Close closes the file.
func (w *csvFile[T]) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.path, err)
	}
	return nil
}

// Path is the file written.
func (w *csvFile[T]) Path() string { return w.path }

// Writer appends rows to a detail CSV, each flushed to the file as it is
// written. It numbers the rows' lines, so that rows kept in memory point at
// the file as rows read back from it do.
type Writer struct {
	*csvFile[Row]
	line int
}

// Create creates the detail CSV at path (it must not exist) and writes its
// header.
func Create(path string) (*Writer, error) {
	f, err := createCSV[Row](path, "detail CSV")
	if err != nil {
		return nil, err
	}
	return &Writer{csvFile: f, line: 1}, nil
}

// Write appends the row and sets its Pos. A multi-line Error is joined
// into one line, so that line numbers and rows agree.
func (w *Writer) Write(r *Row) error {
	r.Error = oneLine(r.Error)
	if err := w.append([]Row{*r}); err != nil {
		return err
	}
	w.line++
	r.Pos = Pos{File: w.path, Line: w.line}
	return nil
}

// oneLine keeps a cell on one line of the CSV (a server's log tail is
// several).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " | ")
}

// DetailGlob matches the detail CSVs in a directory: "kvbench run" names
// them PREFIX_detail_TIME.csv (and a renamed one, NAME_detail.csv).
const DetailGlob = "*_detail*.csv"

// The reader is hand-made on encoding/csv: gocsv's unmarshalling reports
// neither the line of a bad cell nor which required column is missing.
// Both sides are driven by Row's csv tags, so they cannot disagree.

// ExpandPatterns turns command-line arguments into file names: a
// directory stands for its detail CSVs (DetailGlob: "kvbench run --out
// DIR" wrote them), and must hold one; an argument holding glob
// metacharacters is expanded with filepath.Glob and must match at least
// one file (ErrNoFiles otherwise); other arguments are kept as they are.
// A file named twice is read once.
func ExpandPatterns(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%w: no detail CSV given", ErrNoFiles)
	}
	var files []string
	seen := make(map[string]bool)
	for _, p := range patterns {
		matches := []string{p}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if matches, _ = filepath.Glob(filepath.Join(p, DetailGlob)); len(matches) == 0 {
				return nil, fmt.Errorf("%w: no %s in directory %s", ErrNoFiles, DetailGlob, p)
			}
		} else if strings.ContainsAny(p, `*?[\`) {
			var err error
			matches, err = filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", p, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%w %q", ErrNoFiles, p)
			}
		}
		for _, m := range matches {
			if c := filepath.Clean(m); !seen[c] {
				seen[c] = true
				files = append(files, m)
			}
		}
	}
	return files, nil
}

// ReadFiles reads and merges detail CSV files, in the order given. Every
// error names its file and line; all the files are read so that all their
// errors are reported at once (up to MaxErrors).
func ReadFiles(paths []string) ([]Row, error) {
	var chunks rowChunks
	if err := Scan(paths, chunks.add); err != nil {
		return nil, err
	}
	return chunks.rows(), nil
}

// Scan reads the files as ReadFiles does, passing each row to emit instead
// of keeping it: emit must copy what it keeps, the row is reused. On error,
// the rows already emitted are to be discarded.
func Scan(paths []string, emit func(*Row)) error {
	var errs ErrorList
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			errs.Add(fmt.Errorf("read detail CSV: %w", err))
			continue
		}
		err = scanCSV(f, p, emit)
		f.Close()
		if err != nil {
			errs.Add(err)
		}
	}
	return errs.Err()
}

// rowChunks collects rows in fixed-size chunks and copies them into one
// slice at the end: growing one slice of large, pointer-holding structs by
// append costs more than reading the CSV itself.
type rowChunks struct {
	full [][]Row
	cur  []Row
	n    int
}

const chunkRows = 4096

// add appends a copy of the row.
func (c *rowChunks) add(r *Row) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]Row, 0, chunkRows)
	}
	c.cur = append(c.cur, *r)
	c.n++
}

// rows returns all the rows in one slice.
func (c *rowChunks) rows() []Row {
	if len(c.full) == 0 {
		return c.cur
	}
	out := make([]Row, 0, c.n)
	for _, ch := range c.full {
		out = append(out, ch...)
	}
	return append(out, c.cur...)
}

// ReadCSV reads one detail CSV; name is used in error positions. The header
// must hold the RequiredColumns, in any order; unknown columns are ignored.
// Empty numeric cells read as zero. Each returned row's Pos is its file and
// line. ReadCSV checks the syntax of each cell; the rows' consistency with
// each other (duplicates, conflicts) is the report's to check.
func ReadCSV(r io.Reader, name string) ([]Row, error) {
	var chunks rowChunks
	if err := scanCSV(r, name, chunks.add); err != nil {
		return nil, err
	}
	return chunks.rows(), nil
}

// scanCSV reads one detail CSV, passing each row to emit.
func scanCSV(r io.Reader, name string, emit func(*Row)) error {
	hdrPos := Pos{File: name, Line: 1}
	br := &sniffReader{r: r}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w file: no header line", ErrEmpty)}
	}
	if err != nil {
		return csvError(name, err)
	}
	if br.binary {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	cols, err := mapHeader(slices.Clone(header), hdrPos, fieldByName, RequiredColumns, "detail CSV")
	if err != nil {
		return err
	}
	err = readRows(cr, name, cols, func(row *Row, pos Pos) {
		row.Pos = pos
		emit(row)
	})
	if br.binary {
		return &InputError{Pos: hdrPos, Err: fmt.Errorf("%w: binary data", ErrNotCSV)}
	}
	return err
}

// readRows reads the records after a CSV's header into rows of T, its
// columns mapped to T's fields by cols, and passes each complete row with
// its position to emit (the row is reused after emit returns). A
// malformed record (a stray quote, too few or too many fields) is an
// error and reading goes on with the next, so that every bad line is
// reported at once; it stops at the end, at a read error, or at MaxErrors
// errors, and returns them all.
func readRows[T any](cr *csv.Reader, name string, cols []field, emit func(*T, Pos)) error {
	var errs ErrorList
	var row, zero T
	v := reflect.ValueOf(&row).Elem()
	for !errs.Full() {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if errors.Is(pe.Err, csv.ErrFieldCount) {
				errs.At(Pos{File: name, Line: pe.Line}, "", fmt.Errorf("%w: %d fields, the header has %d", ErrNotCSV, len(rec), cr.FieldsPerRecord))
			} else {
				errs.Add(csvError(name, err))
			}
			continue // encoding/csv resumes at the record after a malformed one
		}
		if err != nil {
			errs.Add(csvError(name, err))
			break
		}
		line, _ := cr.FieldPos(0)
		pos := Pos{File: name, Line: line}
		row = zero
		if setFields(v, cols, rec, pos, &errs) {
			emit(&row, pos)
		}
	}
	return errs.Err()
}

// mapHeader checks the header line of a CSV of what ("detail CSV") and
// maps each column to its field among fields; an unknown column maps to
// the zero field (no name). Every required column must be there.
func mapHeader(header []string, pos Pos, fields map[string]field, required []string, what string) ([]field, error) {
	cols := make([]field, len(header))
	seen := make(map[string]bool)
	var errs ErrorList
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a spreadsheet's byte order mark
		}
		h = strings.TrimSpace(h)
		if !utf8.ValidString(h) {
			return nil, &InputError{Pos: pos, Err: fmt.Errorf("%w: the header is not UTF-8 text", ErrNotCSV)}
		}
		f, ok := fields[h]
		if !ok {
			continue
		}
		if seen[h] {
			errs.At(pos, h, fmt.Errorf("%w: the column appears twice", ErrBadValue))
			continue
		}
		seen[h] = true
		cols[i] = f
	}
	if len(seen) == 0 {
		return nil, &InputError{Pos: pos, Err: fmt.Errorf("%w: the first line %q is not a %s header (want columns %s)",
			ErrNotCSV, truncate(strings.Join(header, ","), 40), what, strings.Join(required, ", "))}
	}
	for _, c := range required {
		if !seen[c] {
			errs.At(pos, "", fmt.Errorf("%w %q", ErrMissingColumn, c))
		}
	}
	return cols, errs.Err()
}

// setFields parses a record's cells into the fields of v that cols map
// them to (cols from mapHeader); each bad cell is an error at pos in errs.
// It reports whether every cell parsed.
func setFields(v reflect.Value, cols []field, rec []string, pos Pos, errs *ErrorList) bool {
	ok := true
	for i, c := range cols {
		if c.name == "" {
			continue
		}
		if err := setField(v.Field(c.index), c.kind, rec[i]); err != nil {
			errs.At(pos, c.name, err)
			ok = false
		}
	}
	return ok
}

// setField parses s into a field of the given kind.
func setField(v reflect.Value, kind reflect.Kind, s string) error {
	if s != "" && (s[0] <= ' ' || s[len(s)-1] <= ' ') {
		s = strings.TrimSpace(s)
	}
	switch kind {
	case reflect.String:
		v.SetString(s)
	case reflect.Float64:
		if s == "" {
			return nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%q %w", truncate(s, 40), ErrNotNumber)
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int64:
		if s == "" {
			return nil
		}
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(x) {
			return fmt.Errorf("%q %w", truncate(s, 40), ErrNotInteger)
		}
		v.SetInt(x)
	case reflect.Bool:
		if s == "" {
			return nil
		}
		x, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%w: %q: want true or false", ErrBadValue, truncate(s, 40))
		}
		v.SetBool(x)
	case reflect.Pointer: // an optional column: empty is nil
		if s == "" {
			v.SetZero()
			return nil
		}
		e := reflect.New(v.Type().Elem())
		if err := setField(e.Elem(), e.Elem().Kind(), s); err != nil {
			return err
		}
		v.Set(e)
	default:
		panic("results: unsupported Row field kind " + kind.String())
	}
	return nil
}

// csvError turns an encoding/csv error into an InputError with its line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{Pos: Pos{File: name, Line: pe.Line}, Err: fmt.Errorf("%w: %w", ErrNotCSV, pe.Err)}
	}
	return &InputError{Pos: Pos{File: name}, Err: fmt.Errorf("read: %w", err)}
}

// truncate shortens s to at most n bytes (and valid UTF-8) for an error
// message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// sniffReader passes bytes through, noting whether any is a NUL: text CSV
// never holds one, binary files nearly always do.
type sniffReader struct {
	r      io.Reader
	binary bool
}

// Read reads from the underlying reader, watching for NUL bytes.
func (s *sniffReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.binary && bytes.IndexByte(p[:n], 0) >= 0 {
		s.binary = true
	}
	return n, err
}
