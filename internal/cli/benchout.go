package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/pkg/bench/output"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/spf13/pflag"
)

// benchOutput is what bench reports besides its --output format: chosen
// percentiles and histogram files.
type benchOutput struct {
	percentileList string
	// percentiles are --percentiles parsed, sorted.
	percentiles []float64
	// hdrPrefix is --hdr-file-prefix.
	hdrPrefix string
	// quiet is -q: one line per command or test.
	quiet bool
}

// addBenchOutputFlags adds --percentiles, --hdr-file-prefix and -q.
func addBenchOutputFlags(f *pflag.FlagSet, o *benchOutput) {
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only one line per command or test: its QPS and p50, as redis-benchmark -q")
	f.StringVar(&o.percentileList, "percentiles", "", `latency percentiles to report, e.g. 50,99,99.9,99.99: the text's columns, and in JSON "percentiles_us" ({"p99.99": ...}) for the run and each command`)
	f.StringVar(&o.hdrPrefix, "hdr-file-prefix", "", "write each histogram as PATH_<command>.hgrm (HdrHistogram's percentile distribution, µs) and PATH_<command>.hlog (its interval log, compressed and base64-encoded); the whole run is PATH_"+output.HDRWhole)
}

// validate parses the percentiles and checks the format.
func (o *benchOutput) validate(format string) error {
	switch format {
	case output.FormatText:
	case output.FormatJSON, output.FormatCSV:
		if o.quiet {
			return fmt.Errorf("--quiet and --output %s cannot be used together: -q is a text report", format)
		}
	default:
		return fmt.Errorf("--output %q: want text, json or csv", format)
	}
	if o.percentileList != "" {
		ps, err := measure.ParsePercentiles(o.percentileList)
		if err != nil {
			return fmt.Errorf("--percentiles %w", err)
		}
		o.percentiles = ps
	}
	if o.hdrPrefix != "" {
		dir := filepath.Dir(o.hdrPrefix)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--hdr-file-prefix %s: directory %s does not exist", o.hdrPrefix, dir)
		}
	}
	return nil
}
