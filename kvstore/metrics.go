package kvstore

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector returns the server's Prometheus metrics ("kvbench serve
// --metrics-addr"; docs/metrics.md lists them): the counters and figures
// INFO reports, read when scraped, so that serving them costs the request
// path nothing. The keys and memory are read under the dataset's read
// lock, as INFO reads them.
func (s *Server) Collector() prometheus.Collector { return &collector{s: s} }

// collector is Server.Collector.
type collector struct{ s *Server }

// metricDesc describes one kvstore metric: its name (without the kvstore_
// prefix), help, type and labels.
type metricDesc struct {
	name, help string
	kind       prometheus.ValueType
	labels     []string
}

func (m metricDesc) desc() *prometheus.Desc {
	return prometheus.NewDesc("kvstore_"+m.name, m.help, m.labels, nil)
}

var (
	mCommands        = metricDesc{"commands_processed_total", "Commands executed (INFO total_commands_processed).", prometheus.CounterValue, nil}
	mConnections     = metricDesc{"connections_received_total", "Connections accepted (INFO total_connections_received).", prometheus.CounterValue, nil}
	mRejected        = metricDesc{"rejected_connections_total", "Connections refused over maxclients (INFO rejected_connections).", prometheus.CounterValue, nil}
	mClients         = metricDesc{"connected_clients", "Clients connected (INFO connected_clients).", prometheus.GaugeValue, nil}
	mNetOut          = metricDesc{"net_output_bytes_total", "Bytes of replies written to clients (INFO total_net_output_bytes).", prometheus.CounterValue, nil}
	mHits            = metricDesc{"keyspace_hits_total", "Reads that found their key (INFO keyspace_hits).", prometheus.CounterValue, nil}
	mMisses          = metricDesc{"keyspace_misses_total", "Reads that did not find their key (INFO keyspace_misses).", prometheus.CounterValue, nil}
	mProtoErrors     = metricDesc{"protocol_errors_total", "Requests refused as malformed (INFO total_protocol_errors).", prometheus.CounterValue, nil}
	mOutputLimit     = metricDesc{"output_buffer_limit_disconnections_total", "Clients closed over the output buffer limit (INFO client_output_buffer_limit_disconnections).", prometheus.CounterValue, nil}
	mUsedMemory      = metricDesc{"used_memory_bytes", "Memory holding the data, what maxmemory bounds: Go heap objects plus the memory mapped outside the heap (INFO used_memory).", prometheus.GaugeValue, nil}
	mRSS             = metricDesc{"used_memory_rss_bytes", "Resident set size of the process (INFO used_memory_rss).", prometheus.GaugeValue, nil}
	mKeys            = metricDesc{"keys", "Keys, by keyspace; their sum is DBSIZE (INFO engines).", prometheus.GaugeValue, []string{"keyspace"}}
	mAOFEnabled      = metricDesc{"aof_enabled", "1 when the server keeps a log (--persist other than none), else 0.", prometheus.GaugeValue, nil}
	mFsyncs          = metricDesc{"aof_fsyncs_total", "fsyncs of the log.", prometheus.CounterValue, nil}
	mFsyncSeconds    = metricDesc{"aof_fsync_seconds_total", "Time spent in the log's fsyncs.", prometheus.CounterValue, nil}
	mDelayedFsyncs   = metricDesc{"aof_delayed_fsyncs_total", "everysec fsyncs still running after 2 s (INFO aof_delayed_fsync).", prometheus.CounterValue, nil}
	mRewrites        = metricDesc{"aof_rewrites_total", "Log rewrites ended, failed ones included.", prometheus.CounterValue, nil}
	mRewriting       = metricDesc{"aof_rewrite_in_progress", "1 while a log rewrite runs (INFO aof_rewrite_in_progress).", prometheus.GaugeValue, nil}
	mLastRewrite     = metricDesc{"aof_last_rewrite_duration_seconds", "How long the last rewrite took; absent before the first (INFO aof_last_rewrite_time_sec).", prometheus.GaugeValue, nil}
	mLastRewriteOK   = metricDesc{"aof_last_rewrite_ok", "1 unless the last rewrite failed (INFO aof_last_bgrewrite_status).", prometheus.GaugeValue, nil}
	mLastWriteOK     = metricDesc{"aof_last_write_ok", "1 unless the log is failing and refusing writes (INFO aof_last_write_status).", prometheus.GaugeValue, nil}
	mAOFSize         = metricDesc{"aof_size_bytes", "The log's size: base file and incremental files (INFO aof_current_size).", prometheus.GaugeValue, nil}
	mAOFBaseSize     = metricDesc{"aof_base_size_bytes", "The base file's size at the last rewrite (INFO aof_base_size).", prometheus.GaugeValue, nil}
	mAOFBuffer       = metricDesc{"aof_buffer_bytes", "Records appended and not yet written (INFO aof_buffer_length).", prometheus.GaugeValue, nil}
	serverMetricList = []metricDesc{
		mCommands, mConnections, mRejected, mClients, mNetOut, mHits, mMisses, mProtoErrors, mOutputLimit,
		mUsedMemory, mRSS, mKeys,
		mAOFEnabled, mFsyncs, mFsyncSeconds, mDelayedFsyncs, mRewrites, mRewriting, mLastRewrite, mLastRewriteOK, mLastWriteOK,
		mAOFSize, mAOFBaseSize, mAOFBuffer,
	}
	serverDescs = func() map[string]*prometheus.Desc {
		m := make(map[string]*prometheus.Desc, len(serverMetricList))
		for _, d := range serverMetricList {
			m[d.name] = d.desc()
		}
		return m
	}()
)

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range serverMetricList {
		ch <- serverDescs[d.name]
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	emit := func(m metricDesc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(serverDescs[m.name], m.kind, v, labels...)
	}
	st := &s.stats
	emit(mCommands, float64(st.commands.Load()))
	emit(mConnections, float64(st.connections.Load()))
	emit(mRejected, float64(st.rejected.Load()))
	emit(mClients, float64(s.nclients.Load()))
	emit(mNetOut, float64(st.netOut.Load()))
	emit(mHits, float64(st.hits.Load()))
	emit(mMisses, float64(st.misses.Load()))
	emit(mProtoErrors, float64(st.protoErrors.Load()))
	emit(mOutputLimit, float64(st.outputLimitClosed.Load()))

	db := s.db
	db.mu.RLock()
	keys := [...]int{db.strs.len(), len(db.hashes), db.hash.len(), db.tree.len()}
	db.mu.RUnlock()
	s.mem.refresh(time.Now())
	emit(mUsedMemory, float64(s.mem.used()))
	emit(mRSS, float64(readRSS()))
	for i, name := range [...]string{"strings", "redis_hashes", "hash_engine", "ordered_engine"} {
		emit(mKeys, float64(keys[i]), name)
	}

	a := s.aof
	if a == nil {
		emit(mAOFEnabled, 0)
		return
	}
	emit(mAOFEnabled, 1)
	emit(mFsyncs, float64(a.fsyncs.Load()))
	emit(mFsyncSeconds, float64(a.fsyncNanos.Load())/1e9)
	emit(mDelayedFsyncs, float64(a.delayedFsyncs.Load()))
	a.mu.Lock()
	rewrites, rewriting, last, lastOK, writeOK := a.rewrites, a.rewriting, a.lastRewrite.duration, a.lastRewrite.ok, a.err == nil
	size, base, buf := a.baseSize+a.incrSize, a.baseSize, len(a.buf)
	a.mu.Unlock()
	emit(mRewrites, float64(rewrites))
	emit(mRewriting, b2f(rewriting))
	if last > 0 {
		emit(mLastRewrite, last.Seconds())
	}
	emit(mLastRewriteOK, b2f(lastOK))
	emit(mLastWriteOK, b2f(writeOK))
	emit(mAOFSize, float64(size))
	emit(mAOFBaseSize, float64(base))
	emit(mAOFBuffer, float64(buf))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
