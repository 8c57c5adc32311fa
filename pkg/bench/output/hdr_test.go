package output

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/internal/testutil"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/measure"
)

// TestPercentilesAndHDRFiles runs a SET/GET mix with --percentiles and
// --hdr-file-prefix: each command's and the whole run's .hgrm and .hlog
// exist, the log decodes to a histogram of the command's requests, the
// distribution's footer counts them, and the percentiles printed are the
// histogram's.
func TestPercentilesAndHDRFiles(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Requests, cfg.Keyspace, cfg.Connections, cfg.Threads, cfg.Seed = r.Addr, 4000, 500, 2, 1, 7
	cfg.Commands = []mix.Command{{Args: []string{"SET", "__key__", "__data__"}}, {Args: []string{"GET", "__key__"}, Ratio: 3}}
	mix.NameCommands(cfg.Commands)
	prefix := filepath.Join(t.TempDir(), "run")
	ps := []float64{50, 99, 99.9, 99.99}
	var text, log bytes.Buffer
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res.Percentiles = ps
	if err := Report(&text, res, nil, Output{Format: FormatText, Percentiles: ps, HDRPrefix: prefix, Log: &log}); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{HDRWhole: res.Requests}
	for _, c := range res.Commands {
		counts[c.Name] = c.Requests
	}
	if len(counts) != 3 || counts["SET"]+counts["GET"] != 4000 {
		t.Fatalf("counts %v", counts)
	}
	hists := map[string]*hdrhistogram.Histogram{}
	for name, n := range counts {
		base := prefix + "_" + name
		if !strings.Contains(log.String(), base+".hgrm") || !strings.Contains(log.String(), base+".hlog") {
			t.Errorf("log %q does not name %s's files", log.String(), name)
		}
		f, err := os.Open(base + ".hlog")
		if err != nil {
			t.Fatal(err)
		}
		h, err := hdrhistogram.NewHistogramLogReader(f).NextIntervalHistogram()
		f.Close()
		if err != nil || h == nil {
			t.Fatalf("%s.hlog: %v, %v", base, h, err)
		}
		if h.TotalCount() != n || h.Tag() != name {
			t.Errorf("%s.hlog: %d values tagged %q, want %d tagged %q", base, h.TotalCount(), h.Tag(), n, name)
		}
		hists[name] = h
		hgrm, err := os.ReadFile(base + ".hgrm")
		if err != nil {
			t.Fatal(err)
		}
		s := string(hgrm)
		if !strings.HasPrefix(s, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n") && !strings.HasPrefix(s, " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n") {
			t.Errorf("%s.hgrm header: %q", base, s[:min(len(s), 60)])
		}
		m := regexp.MustCompile(`#\[Max     = +([0-9.]+), Total count    = +(\d+)\]`).FindStringSubmatch(s)
		if m == nil || m[2] != strconv.FormatInt(n, 10) {
			t.Errorf("%s.hgrm footer %v, want a total count of %d:\n%s", base, m, n, s)
		} else if max, _ := strconv.ParseFloat(m[1], 64); max != float64(h.Max())/1e3 {
			t.Errorf("%s.hgrm max %v µs, histogram's %v ns", base, max, h.Max())
		}
		// The last line before the footer is the 100th percentile, its
		// value the maximum in µs.
		lines := strings.Split(strings.TrimSpace(s[:strings.Index(s, "#[Mean")]), "\n")
		last := strings.Fields(lines[len(lines)-1])
		if len(last) != 4 || last[1] != "1.000000" || last[2] != strconv.FormatInt(n, 10) {
			t.Errorf("%s.hgrm last line %q", base, lines[len(lines)-1])
		}
	}
	// The text's percentiles are the histograms'.
	sc := bufio.NewScanner(&text)
	var line string
	var table []string
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "latency us: "); ok {
			line = v
		}
		if strings.HasPrefix(sc.Text(), "command ") || strings.HasPrefix(sc.Text(), "SET ") || strings.HasPrefix(sc.Text(), "GET ") {
			table = append(table, sc.Text())
		}
	}
	f := strings.Fields(line)
	if len(f) != 2*(len(ps)+1) {
		t.Fatalf("latency line %q", line)
	}
	for i, p := range ps {
		want := measure.Micros(hists[HDRWhole].ValueAtQuantile(p))
		if f[2*i] != measure.PercentileKey(p) || f[2*i+1] != strconv.FormatFloat(want, 'f', 2, 64) {
			t.Errorf("latency line %q: %s, want %s %.2f", line, f[2*i], measure.PercentileKey(p), want)
		}
	}
	if len(table) != 3 || !strings.Contains(table[0], "p99.99 us") {
		t.Fatalf("command table %q", table)
	}
	for _, row := range table[1:] {
		cells := strings.Fields(row)
		h := hists[cells[0]]
		for i, p := range ps {
			if want := strconv.FormatFloat(measure.Micros(h.ValueAtQuantile(p)), 'f', 2, 64); cells[3+i] != want {
				t.Errorf("%s %s = %s, want %s", cells[0], measure.PercentileKey(p), cells[3+i], want)
			}
		}
	}
}

// TestHDRFilesMixedMode: a mixed-mode run (--mode mixed) writes, beside
// the whole run's, one pair of files per command, its writes' and its
// reads', whose counts are its sets and gets and add up to the whole.
func TestHDRFilesMixedMode(t *testing.T) {
	r := testutil.StartRedis(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr, cfg.Mode, cfg.Requests, cfg.Keyspace, cfg.Connections, cfg.Threads, cfg.Seed = r.Addr, loadgen.ModeMixed, 4000, 500, 2, 2, 7
	cfg.SplitOps = true // as bench asks with --hdr-file-prefix
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "mixed")
	var log bytes.Buffer
	if err := Report(io.Discard, res, nil, Output{Format: FormatText, HDRPrefix: prefix, Log: &log}); err != nil {
		t.Fatal(err)
	}
	whole := hdrhistogram.New(measure.HistMin, measure.HistMax, measure.HistDigits)
	for name, n := range map[string]int64{HDRWhole: res.Requests, "SET": res.Sets, "GET": res.Gets} {
		f, err := os.Open(prefix + "_" + name + ".hlog")
		if err != nil {
			t.Fatalf("%v (log: %s)", err, log.String())
		}
		h, err := hdrhistogram.NewHistogramLogReader(f).NextIntervalHistogram()
		f.Close()
		if err != nil || h == nil || h.TotalCount() != n || n == 0 {
			t.Fatalf("%s.hlog: %v, %d values, want %d", name, err, h.TotalCount(), n)
		}
		if _, err := os.Stat(prefix + "_" + name + ".hgrm"); err != nil {
			t.Error(err)
		}
		if name != HDRWhole {
			whole.Merge(h)
		}
	}
	if res.Sets+res.Gets != res.Requests || whole.Max() != res.Histogram.Max() || whole.ValueAtQuantile(50) != res.Histogram.ValueAtQuantile(50) {
		t.Errorf("the writes' and reads' histograms do not add up to the whole: max %d vs %d, p50 %d vs %d",
			whole.Max(), res.Histogram.Max(), whole.ValueAtQuantile(50), res.Histogram.ValueAtQuantile(50))
	}
}
