package report

import (
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// TelemetryTable is a target's server telemetry: per scenario what the
// server said about the measured phases (the detail CSV's server_…
// columns) beside the client's latency. A target whose rows hold none of
// those columns (files written before them, attached servers without
// INFO commandstats or memory) has no table.
type TelemetryTable struct {
	Target string            `json:"target"`
	Rows   []ServerTelemetry `json:"rows"`
}

// ServerTelemetry is one scenario's row of a TelemetryTable: medians over
// its ok rounds of the rounds that record each figure; missing when none
// does.
type ServerTelemetry struct {
	Strategy string `json:"strategy"`
	Mode     string `json:"mode"`
	// ClientP50Us is the client's median latency (lat_p50_us), µs.
	ClientP50Us Figure `json:"client_p50_us"`
	// ServerUsPerCall is the server's own time per call of the measured
	// commands (server_usec_per_call), µs.
	ServerUsPerCall Figure `json:"server_usec_per_call"`
	// UsedMemoryBytes is INFO used_memory after the phase
	// (server_used_memory_bytes), and RSSBytes the peak resident set
	// size during it (server_rss_bytes).
	UsedMemoryBytes Figure `json:"server_used_memory_bytes"`
	RSSBytes        Figure `json:"server_rss_bytes"`
	// BytesPerKey is used_memory over the keys the server held, its fixed
	// overhead included: known where the phase found the keyspace
	// prefilled and kept its size (the get and mixed modes).
	BytesPerKey Figure `json:"bytes_per_key"`
}

// roundTelemetry is what a round's row says of its server.
type roundTelemetry struct {
	clientP50, usPerCall, usedMemory, rss, bytesPerKey float64
}

// telemetryOf reads a row's telemetry; zero figures are not measured.
func telemetryOf(r *results.Row) roundTelemetry {
	t := roundTelemetry{
		clientP50:  r.LatP50Us,
		usPerCall:  float64(r.ServerUsecPerCall),
		usedMemory: float64(r.ServerUsedMemoryBytes),
		rss:        float64(r.ServerRSSBytes),
	}
	full := r.Workload == "" && (r.Mode == string(measure.ModeGet) || r.Mode == string(measure.ModeMixed))
	if full && r.Keyspace > 0 && t.usedMemory > 0 {
		t.bytesPerKey = t.usedMemory / float64(r.Keyspace)
	}
	return t
}

// has reports whether the round records any server figure.
func (t roundTelemetry) has() bool {
	return t.usPerCall > 0 || t.usedMemory > 0 || t.rss > 0
}

// telemetryTables builds the TelemetryTable of each target whose rounds
// record server figures, its rows in the target's scenario order.
func telemetryTables(targets []*TargetReport) []*TelemetryTable {
	var out []*TelemetryTable
	for _, t := range targets {
		tab := &TelemetryTable{Target: t.Target}
		found := false
		for _, sc := range t.Scenarios {
			median := func(get func(roundTelemetry) float64) Figure {
				var xs []float64
				for _, r := range sc.Rounds {
					if x := get(r.tel); x > 0 {
						xs = append(xs, x)
					}
				}
				if len(xs) == 0 {
					return missing
				}
				return fig(stats.Median(xs))
			}
			for _, r := range sc.Rounds {
				found = found || r.tel.has()
			}
			tab.Rows = append(tab.Rows, ServerTelemetry{
				Strategy:        sc.Strategy,
				Mode:            sc.Mode,
				ClientP50Us:     median(func(t roundTelemetry) float64 { return t.clientP50 }),
				ServerUsPerCall: median(func(t roundTelemetry) float64 { return t.usPerCall }),
				UsedMemoryBytes: median(func(t roundTelemetry) float64 { return t.usedMemory }),
				RSSBytes:        median(func(t roundTelemetry) float64 { return t.rss }),
				BytesPerKey:     median(func(t roundTelemetry) float64 { return t.bytesPerKey }),
			})
		}
		if found {
			out = append(out, tab)
		}
	}
	return out
}
