package output

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
)

// TestTelemetryTable: rows with the server_… columns, written to a detail
// CSV and read back, give each target a telemetry table of medians: the
// server's µs per call beside the client's p50, memory in MiB, bytes per
// key where the keyspace was prefilled (get), empty cells where nothing
// was measured (set's bytes per key, an attached server's RSS); the JSON
// holds the same figures.
func TestTelemetryTable(t *testing.T) {
	var rows []results.Row
	for round := 1; round <= 3; round++ {
		for _, mode := range []string{"set", "get"} {
			rows = append(rows, results.Row{Target: "kvstore", Strategy: "nopersist", Mode: mode, Round: round,
				Status: results.StatusOK, QPS: 100_000, Keyspace: 100_000, LatP50Us: 100 + float64(round),
				ServerUsecPerCall: results.Opt(0.5 * float64(round)), ServerCalls: 20_000,
				ServerUsedMemoryBytes: results.OptInt(20 << 20), ServerRSSBytes: results.OptInt(int64(30+round) << 20)})
			rows = append(rows, results.Row{Target: "redis", Strategy: "none", Mode: mode, Round: round,
				Status: results.StatusOK, QPS: 90_000, Keyspace: 100_000, LatP50Us: 200,
				ServerUsecPerCall: 1.25, ServerCalls: 20_000, ServerUsedMemoryBytes: results.OptInt(10 << 20)})
		}
	}
	path := filepath.Join(t.TempDir(), "detail.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := w.Write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	read, err := results.ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(read, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(md.String(), "## Server telemetry\n")
	if !ok {
		t.Fatalf("no telemetry section in\n%s", md.String())
	}
	for _, want := range []string{
		"### kvstore", "### redis",
		"| nopersist | set  |        102.00 |           1.00 |           20.00 |        32.00 |           |",
		"| nopersist | get  |        102.00 |           1.00 |           20.00 |        32.00 |    209.72 |",
		"| none     | get  |        200.00 |           1.25 |           10.00 |              |    104.86 |",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("telemetry section lacks %q:\n%s", want, section)
		}
	}
	var js bytes.Buffer
	if err := JSON(rep, &js); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Telemetry []struct {
			Target string `json:"target"`
			Rows   []struct {
				Mode       string   `json:"mode"`
				UsPerCall  *float64 `json:"server_usec_per_call"`
				RSS        *float64 `json:"server_rss_bytes"`
				BytesPerKy *float64 `json:"bytes_per_key"`
			} `json:"rows"`
		} `json:"server_telemetry"`
	}
	if err := json.Unmarshal(js.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Telemetry) != 2 || v.Telemetry[1].Target != "redis" || len(v.Telemetry[1].Rows) != 2 ||
		v.Telemetry[1].Rows[0].RSS != nil || *v.Telemetry[1].Rows[0].UsPerCall != 1.25 || v.Telemetry[1].Rows[0].BytesPerKy != nil {
		t.Errorf("JSON server_telemetry: %s", js.String())
	}
}

// TestTelemetryOldCSV: a detail CSV written before the server_… columns
// reads and reports, without a telemetry section.
func TestTelemetryOldCSV(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/report/seed000/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("seed000 CSVs: %v", err)
	}
	head, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(head), "server_rss_bytes") {
		t.Fatalf("%s has server columns: not an old CSV", files[0])
	}
	rows, err := results.ReadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := Markdown(rep, &md); err != nil {
		t.Fatal(err)
	}
	if len(rep.Telemetry) > 0 || strings.Contains(md.String(), "Server telemetry") {
		t.Errorf("an old CSV got a telemetry table: %+v", rep.Telemetry)
	}
}
