package loadgen

import (
	"github.com/kvbench/kvbench/pkg/loadgen/load"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
	"github.com/kvbench/kvbench/pkg/measure"
)

// The description of a run is package load's, the layer every other part
// of the load generator reads; these are its names as the load
// generator's callers know them.

// Config describes one run: the server, the request mix and the Load
// (load.Config).
type Config = load.Config

// Load is what shapes a load, described once (load.Load).
type Load = load.Load

// Mode is the request mix of a run (load.Mode).
type Mode = load.Mode

// Progress is a snapshot of a running phase (load.Progress).
type Progress = load.Progress

// IntervalFigures are one interval's figures in a Progress.
type IntervalFigures = load.IntervalFigures

// The modes (load.ModeSet...).
const (
	ModeSet   = load.ModeSet
	ModeGet   = load.ModeGet
	ModeMixed = load.ModeMixed
)

// The defaults and bounds (package load's constants of these names).
const (
	DefaultHost              = load.DefaultHost
	DefaultPort              = load.DefaultPort
	DefaultAddr              = load.DefaultAddr
	DefaultMode              = load.DefaultMode
	DefaultRequests          = load.DefaultRequests
	DefaultPipeline          = load.DefaultPipeline
	DefaultKeyspace          = load.DefaultKeyspace
	DefaultValueSize         = load.DefaultValueSize
	DefaultSetRatio          = load.DefaultSetRatio
	DefaultSetCmd            = load.DefaultSetCmd
	DefaultGetCmd            = load.DefaultGetCmd
	DefaultKeyPrefix         = load.DefaultKeyPrefix
	DefaultConnections       = load.DefaultConnections
	DefaultConnectTimeout    = load.DefaultConnectTimeout
	DefaultTimeout           = load.DefaultTimeout
	DefaultProgressInterval  = load.DefaultProgressInterval
	DefaultInterval          = load.DefaultInterval
	MaxStartLate             = load.MaxStartLate
	DefaultReconnectAttempts = load.DefaultReconnectAttempts
	DefaultReconnectBackoff  = load.DefaultReconnectBackoff
	MaxReconnectBackoff      = load.MaxReconnectBackoff
	MaxPipeline              = load.MaxPipeline
	MaxConnections           = load.MaxConnections
	MaxMultiKeyGet           = load.MaxMultiKeyGet
)

// DefaultConfig returns a run with every setting at its default
// (load.DefaultConfig).
func DefaultConfig() Config { return load.DefaultConfig() }

// DefaultLoad returns the load of "kvbench bench" without flags
// (load.DefaultLoad).
func DefaultLoad() Load { return load.DefaultLoad() }

// DefaultThreads is the default number of worker threads: one per CPU.
func DefaultThreads() int { return load.DefaultThreads() }

// InsertOnly reports whether a write command only inserts
// (load.InsertOnly).
func InsertOnly(cmd string) bool { return load.InsertOnly(cmd) }

// MaxSendLag is the send lag p99 above which an open-loop run warns that
// the client did not keep its schedule (schedule.MaxSendLag).
const MaxSendLag = schedule.MaxSendLag

// ErrBehindSchedule is wrapped by that warning (schedule.ErrBehindSchedule).
var ErrBehindSchedule = schedule.ErrBehindSchedule

// BehindSchedule returns the warning for an open loop's send lag summary
// (µs), or nil (schedule.BehindSchedule).
func BehindSchedule(lag measure.Latency) error { return schedule.BehindSchedule(lag) }
