package output

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/pkg/render"
	"github.com/kvbench/kvbench/pkg/report"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// cpuCSV writes a detail CSV of two targets whose rows record the QPS per
// server CPU-second; kvstore's second set round was client-bound.
func cpuCSV(t *testing.T) (string, map[string][]float64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kvbench_detail_1.csv")
	w, err := results.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	perCPU := map[string][]float64{
		"kvstore": {61000.25, 64000.5, 59000.75, 90000, 62000},
		"redis":   {150000, 151000.5, 149000, 152000, 148000.25},
	}
	for _, target := range []string{"kvstore", "redis"} {
		for i, q := range []float64{100000, 101000, 99000, 130000, 100500} {
			r := results.Row{Target: target, Strategy: "none", Persistence: "none", Mode: "set", Round: i + 1,
				Status: results.StatusOK, QPS: q, QPSPerServerCPUS: results.Opt(perCPU[target][i]), ClientBound: target == "kvstore" && i == 1}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, perCPU
}

// TestClientBoundAndCPU: a client-bound round is a warning naming its
// scenario, in both languages; the QPS per server CPU-second is the
// trimmed mean of the rounds the trimming keeps, in the trimmed table, the
// side-by-side table and the CSVs' last columns; an old CSV has none of it.
func TestClientBoundAndCPU(t *testing.T) {
	path, perCPU := cpuCSV(t)
	run := func(format render.Format, lang string, files ...string) string {
		var out bytes.Buffer
		if err := Run(context.Background(), RunOptions{Inputs: files, Format: format, Report: report.Options{Lang: lang}}, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	md := run(render.Markdown, render.LangEN, path)
	if !strings.Contains(md, "\n- the load generator may be the bottleneck: add --threads or agents (rounds where it was busy for most of its threads' time): kvstore/none/set (1 round)\n") {
		t.Errorf("no client-bound warning:\n%s", md)
	}
	if zh := run(render.Markdown, render.LangZH, path); !strings.Contains(zh, "压测程序可能是瓶颈：请增加 --threads 或使用 agents（压测线程大部分时间处于忙碌的轮次）：kvstore/none/set（1 轮）") {
		t.Errorf("no client-bound warning in Chinese:\n%s", zh)
	}
	for _, target := range []string{"kvstore", "redis"} {
		tab := tableAfter(t, md, "### "+target+" trimmed")
		row := tab.rows[0]
		dropped, err := strconv.Atoi(row[tab.col("dropped round")])
		if err != nil {
			t.Fatal(err)
		}
		want := stats.Format2(stats.Mean(slices.Delete(slices.Clone(perCPU[target]), dropped-1, dropped)))
		if got := row[tab.col("trimmed mean QPS/CPU-s")]; got != want {
			t.Errorf("%s: trimmed QPS/CPU-s %s, want %s", target, got, want)
		}
		side := tableAfter(t, md, "### set: targets side by side")
		if got := side.rows[0][side.col(target+" QPS/CPU-s")]; got != want {
			t.Errorf("%s: side by side QPS/CPU-s %s, want %s", target, got, want)
		}
	}

	// The CSVs: the new columns come last, the old ones keep their places.
	for _, c := range []struct {
		out    string
		header []string
		value  string
	}{
		{run(render.CSV, render.LangEN, path), TrimmedColumns, "trimmed_qps_per_server_cpu_s"},
	} {
		recs, err := csv.NewReader(strings.NewReader(c.out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		n := slices.Index(recs[0], "client_bound_rounds") + 1
		if n < 2 || recs[0][n-2] != c.value {
			t.Fatalf("header %q: want %s then client_bound_rounds", recs[0], c.value)
		}
		if recs[1][0] != "kvstore" || recs[1][n-1] != "1" || recs[2][n-1] != "0" {
			t.Errorf("client_bound_rounds: %q, %q", recs[1], recs[2])
		}
	}
	var sum bytes.Buffer
	rows, err := results.ReadFiles([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(rows, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := SummaryCSV(rep, &sum); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&sum).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := recs[1][len(recs[1])-2], stats.Format2(stats.Mean(perCPU["kvstore"])); got != want {
		t.Errorf("summary mean_qps_per_server_cpu_s %s, want %s", got, want)
	}

	old := run(render.Markdown, render.LangEN, seedFiles...)
	if strings.Contains(old, "CPU-s") || strings.Contains(old, "bottleneck") {
		t.Errorf("an old CSV shows CPU figures or a client-bound warning:\n%s", old)
	}
}
