package kvstore

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/kvbench/kvbench/internal/testutil"
)

// scrapeText is what a scrape of the server's collector returns.
func scrapeText(t *testing.T, s *Server) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// metricValue is the value of the sample named name (with its labels) in
// an exposition text, or -1 when there is none.
func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCollector: the metrics follow what the server did (commands, keys,
// the log's fsyncs under always, a rewrite), a pedantic registry accepts
// them, and promtool finds them clean.
func TestCollector(t *testing.T) {
	s := startPersistent(t, t.TempDir(), PersistAlways)
	rdb := newClient(t, s)
	c := ctx(t)
	for i := range 10 {
		if err := rdb.Set(c, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Do(c, "HSET", "e", "x").Err(); err != nil {
		t.Fatal(err)
	}
	rdb.Get(c, "missing")
	if err := rdb.Do(c, "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	text := scrapeText(t, s)
	for name, want := range map[string]func(float64) bool{
		"kvstore_commands_processed_total":          func(v float64) bool { return v >= 13 },
		`kvstore_keys{keyspace="strings"}`:          func(v float64) bool { return v == 10 },
		`kvstore_keys{keyspace="hash_engine"}`:      func(v float64) bool { return v == 1 },
		"kvstore_keyspace_misses_total":             func(v float64) bool { return v == 1 },
		"kvstore_connected_clients":                 func(v float64) bool { return v >= 1 },
		"kvstore_aof_enabled":                       func(v float64) bool { return v == 1 },
		"kvstore_aof_fsyncs_total":                  func(v float64) bool { return v >= 11 },
		"kvstore_aof_fsync_seconds_total":           func(v float64) bool { return v > 0 },
		"kvstore_aof_rewrites_total":                func(v float64) bool { return v == 1 },
		"kvstore_aof_last_rewrite_duration_seconds": func(v float64) bool { return v > 0 },
		"kvstore_aof_last_write_ok":                 func(v float64) bool { return v == 1 },
		"kvstore_used_memory_bytes":                 func(v float64) bool { return v > 0 },
	} {
		if v := metricValue(t, text, name); !want(v) {
			t.Errorf("%s: %v (-1: absent)", name, v)
		}
	}
	testutil.PromtoolCheck(t, text)

	// Scraped while clients write (the race detector watches).
	done := make(chan error, 1)
	go func() {
		for i := range 300 {
			if err := rdb.Set(c, "w"+strconv.Itoa(i), "v", 0).Err(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 20 {
		scrapeText(t, s)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v := metricValue(t, scrapeText(t, s), `kvstore_keys{keyspace="strings"}`); v != 310 {
		t.Errorf("strings keys after the writes: %v, want 310", v)
	}

	// No log: the log's metrics are absent, not zero.
	text = scrapeText(t, startServer(t, Config{}))
	if v := metricValue(t, text, "kvstore_aof_enabled"); v != 0 || strings.Contains(text, "kvstore_aof_fsyncs_total") {
		t.Errorf("without a log: aof_enabled %v, fsyncs present %v", v, strings.Contains(text, "kvstore_aof_fsyncs_total"))
	}
}
