package output

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocarina/gocsv"
	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/results"
)

// benchDetail generates a detail CSV of targets × strategies × modes ×
// rounds rows with every column filled, as "kvbench run" writes it.
func benchDetail(b *testing.B, targets, strategies, modes, rounds int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	modeNames := []string{"set", "get", "mixed"}
	rows := make([]results.Row, 0, targets*strategies*modes*rounds)
	for r := 1; r <= rounds; r++ {
		for t := range targets {
			for s := range strategies {
				persistence := "everysec"
				if s == 0 {
					persistence = "none"
				}
				for m := range modes {
					qps := 150000 * (1 + 0.05*rng.NormFloat64()) * (1 - 0.3*float64(s)/float64(strategies))
					rows = append(rows, results.Row{
						RunID: "bench", StartedAt: "2026-03-07T06:25:49Z",
						Target: fmt.Sprintf("target%d", t), Strategy: fmt.Sprintf("strategy%d", s),
						Persistence: persistence, Alloc: "mypool", Mode: modeNames[m%len(modeNames)] + fmt.Sprint(m/len(modeNames)),
						Round: r, Attempt: 1, Status: results.StatusOK, Requests: 1000000, Pipeline: 128, Connections: 1,
						Keyspace: 1000000, ValueSize: 32, Seed: int64(12345 + r), ElapsedS: 1e6 / qps,
						QPS: float64(int(qps*100)) / 100, UsPerOp: float64(int(1e8/qps)) / 100,
						LatP50Us: 800 + 100*rng.Float64(), LatP99Us: 2000 + 500*rng.Float64(),
						LatP999Us: 4000 + 1000*rng.Float64(), LatMaxUs: 9000, ServerVersion: "7.2.4",
						ServerConfig: "appendonly=yes appendfsync=everysec",
					})
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := gocsv.Marshal(rows, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkReport100k is "kvbench report" on a detail CSV file of 100,000
// rows: Run reads the file, builds the report, prints the markdown and
// writes the summary and trimmed CSVs (no chart), with tablewriter's width
// cache off as the command has it.
func BenchmarkReport100k(b *testing.B) {
	render.DisableWidthCache()
	for _, shape := range []struct {
		name                               string
		targets, strategies, modes, rounds int
	}{
		{"rounds=2500", 2, 10, 2, 2500},    // 40 scenarios of 2,500 rounds
		{"scenarios=20000", 4, 2500, 2, 5}, // 20,000 scenarios of 5 rounds
	} {
		b.Run(shape.name, func(b *testing.B) {
			data := benchDetail(b, shape.targets, shape.strategies, shape.modes, shape.rounds)
			dir := b.TempDir()
			detail := filepath.Join(dir, "detail.csv")
			if err := os.WriteFile(detail, data, 0o644); err != nil {
				b.Fatal(err)
			}
			opts := RunOptions{
				Inputs:     []string{detail},
				SummaryCSV: filepath.Join(dir, "summary.csv"),
				TrimmedCSV: filepath.Join(dir, "trimmed.csv"),
			}
			b.SetBytes(int64(len(data)))
			cpu := cpuTime()
			n := 0
			for b.Loop() {
				if err := Run(context.Background(), opts, io.Discard); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if used := cpuTime() - cpu; used > 0 {
				b.ReportMetric(float64(used.Nanoseconds())/float64(n), "cpu-ns/op")
			}
		})
	}
}
