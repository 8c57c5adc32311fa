package cli

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/pkg/metrics"
)

// metricsFlag is the flag of bench, run and serve that serves Prometheus
// metrics.
const metricsFlag = "metrics-addr"

// addMetricsFlag adds --metrics-addr; what says which metrics.
func addMetricsFlag(f *pflag.FlagSet, p *string, what string) {
	f.StringVar(p, metricsFlag, "", "serve Prometheus metrics ("+what+") over HTTP at HOST:PORT/metrics while the command runs, e.g. 127.0.0.1:9100 (port 0: a free one, printed; docs/metrics.md)")
}

// checkMetricsAddr checks --metrics-addr's form: "" or HOST:PORT.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("--%s %q: want HOST:PORT: %w", metricsFlag, addr, err)
	}
	return nil
}

// startMetrics serves the collectors at addr, from a registry of their
// own, and returns their URL. stop ends the server and waits for it: the
// port is closed when it returns.
func startMetrics(ctx context.Context, addr string, cs ...prometheus.Collector) (url string, stop func() error, err error) {
	reg := prometheus.NewRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return "", nil, fmt.Errorf("--%s: %w", metricsFlag, err)
		}
	}
	srv, err := metrics.Serve(ctx, addr, reg)
	if err != nil {
		return "", nil, fmt.Errorf("--%s: %w", metricsFlag, err)
	}
	return srv.URL(), func() error {
		if err := srv.Close(); err != nil {
			return fmt.Errorf("--%s: %w", metricsFlag, err)
		}
		return nil
	}, nil
}

// startLoadMetrics serves the load's metrics (bench, run) at addr and
// says where on errOut.
func startLoadMetrics(ctx context.Context, addr string, errOut io.Writer) (*metrics.Load, func() error, error) {
	load := metrics.NewLoad()
	url, stop, err := startMetrics(ctx, addr, load)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(errOut, "metrics:", url)
	return load, stop, nil
}
