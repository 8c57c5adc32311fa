package output

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/measure"
)

// HDR files (--hdr-file-prefix): for each histogram, PREFIX_NAME.hgrm, its
// percentile distribution as HdrHistogram's outputPercentileDistribution
// prints it (Value in µs, Percentile, TotalCount, 1/(1-Percentile), then
// the Mean/StdDeviation/Max/Total count footer), and PREFIX_NAME.hlog, an
// HdrHistogram interval log of one interval, the measured window, whose
// histogram (nanoseconds) is compressed and base64-encoded as
// HdrHistogram's HistogramLogWriter writes it: HistogramLogAnalyzer and
// hdrhistogram-go's HistogramLogReader read it.

// HDRWhole is the name of the whole run's histogram files, as
// memtier_benchmark names its own.
const HDRWhole = "FULL_RUN"

// HDRTicks is the number of reporting points per half distance to 100%
// of the .hgrm files: HdrHistogram's usual 5.
const HDRTicks = 5

// writeHDRFiles writes h as prefix_name.hgrm and prefix_name.hlog, the
// log's interval from start to end, and returns the paths written.
func writeHDRFiles(prefix, name string, h *hdrhistogram.Histogram, start, end time.Time) ([]string, error) {
	if h == nil {
		h = measure.NewHistogram()
	}
	base := prefix + "_" + fileName(name)
	hgrm, hlog := base+".hgrm", base+".hlog"
	err := writeFile(hgrm, func(w *bufio.Writer) error {
		_, err := h.PercentilesPrint(w, HDRTicks, 1e3)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = writeFile(hlog, func(w *bufio.Writer) error {
		lw := hdrhistogram.NewHistogramLogWriter(w)
		startMs, endMs := start.UnixMilli(), end.UnixMilli()
		if start.IsZero() {
			startMs, endMs = 0, 0
		}
		c := hdrhistogram.Import(h.Export())
		c.SetStartTimeMs(startMs)
		c.SetEndTimeMs(endMs)
		c.SetTag(fileName(name))
		lw.SetBaseTime(startMs)
		for _, f := range []func() error{
			lw.OutputLogFormatVersion,
			func() error { return lw.OutputStartTime(startMs) },
			func() error { return lw.OutputBaseTime(startMs) },
			func() error { return lw.OutputComment("values in nanoseconds; " + name) },
			lw.OutputLegend,
			func() error { return lw.OutputIntervalHistogram(c) },
		} {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []string{hgrm, hlog}, nil
}

// writeFile creates path and fills it with write.
func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--hdr-file-prefix: %w", err)
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--hdr-file-prefix: %s: %w", path, err)
	}
	return nil
}

// fileName is name with what a file name or an hlog tag cannot hold
// (separators, spaces, commas) replaced by "_".
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '_'
	}, name)
}

// WriteHDR writes the HDR files of a run: the whole (HDRWhole) and each
// command of a mix, or a mixed-mode run's write and read commands
// (loadgen.Result.Ops), under prefix, and returns the paths written. Two
// commands of one name (GET with different arguments) get their position
// in the mix appended.
func WriteHDR(prefix string, r loadgen.Result) ([]string, error) {
	paths, err := writeHDRFiles(prefix, HDRWhole, r.Histogram, r.Start, r.End)
	if err != nil {
		return nil, err
	}
	cmds := r.Commands
	if len(cmds) == 0 {
		cmds = r.Ops
	}
	seen := map[string]int{}
	for _, c := range cmds {
		seen[c.Name]++
	}
	for i, c := range cmds {
		name := c.Name
		if seen[name] > 1 {
			name = fmt.Sprintf("%s_%d", name, i+1)
		}
		p, err := writeHDRFiles(prefix, name, c.Histogram, r.Start, r.End)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p...)
	}
	return paths, nil
}

// WriteTestsHDR writes the HDR files of redis-benchmark's tests, one pair
// per test named after it in upper case (PREFIX_LRANGE_100.hgrm).
func WriteTestsHDR(prefix string, tests []rbtests.TestResult) ([]string, error) {
	var paths []string
	for _, t := range tests {
		p, err := writeHDRFiles(prefix, strings.ToUpper(t.Test), t.Histogram, t.Start, t.End)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p...)
	}
	return paths, nil
}
