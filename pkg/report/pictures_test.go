package report

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/results"
)

// latencyCSV writes a detail CSV of kvstore and redis, two strategies
// each, set and get, 5 rounds, whose rows carry real HdrHistograms of
// made-up latencies (log-normal, a slower tail for the always strategy)
// and the percentiles read from them; valkey's rows are an older CSV's:
// percentiles only. It returns the file and the rows.
func latencyCSV(t testing.TB) (string, []results.Row) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kvbench_detail_1.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var rows []results.Row
	for ti, target := range []string{"kvstore", "redis", "valkey"} {
		for si, s := range []struct{ strategy, persistence string }{{"none", "none"}, {"always", "always"}} {
			for _, mode := range []string{"set", "get"} {
				for round := 1; round <= 5; round++ {
					h := hdrhistogram.New(1, 60e9, 3)
					median := 200e3 * (1 + 0.3*float64(ti)) // ns
					for range 20000 {
						v := median * math.Exp(0.35*rng.NormFloat64())
						if si == 1 && rng.Float64() < 0.02 {
							v *= 8 // fsync stalls
						}
						if err := h.RecordValue(int64(v)); err != nil {
							t.Fatal(err)
						}
					}
					row := results.Row{Target: target, Strategy: s.strategy, Persistence: s.persistence, Mode: mode,
						Round: round, Attempt: 1, Status: results.StatusOK, Requests: 20000,
						QPS: 100000 * (1 + 0.1*float64(ti)) * (1 - 0.3*float64(si)) * (1 + 0.01*float64(round)),
						LatP50Us:  float64(h.ValueAtQuantile(50)) / 1e3, LatP99Us: float64(h.ValueAtQuantile(99)) / 1e3,
						LatP999Us: float64(h.ValueAtQuantile(99.9)) / 1e3, LatMaxUs: float64(h.Max()) / 1e3,
						QPSPerServerCPUS: 90000 * (1 + 0.2*float64(ti)),
					}
					if target != "valkey" {
						b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
						if err != nil {
							t.Fatal(err)
						}
						row.LatencyHist = string(b)
					}
					if err := w.Write(&row); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, row)
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

func TestLatencyDump(t *testing.T) {
	path, _ := latencyCSV(t)
	out := os.Getenv("KVBENCH_DUMP")
	if out == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(out, data, 0o644)
	_ = bytes.Buffer{}
	_ = context.Background
	_ = exec.Command
	_ = regexp.MustCompile
	_ = strings.Contains
	_ = time.Second
}
