package kvstore

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// infoSection writes one INFO section's lines.
type infoSection struct {
	name string
	fn   func(s *Server, b *infoBuilder)
}

var infoSections = []infoSection{
	{name: "server", fn: infoServer},
	{name: "clients", fn: infoClients},
	{name: "memory", fn: infoMemory},
	{name: "persistence", fn: infoPersistence},
	{name: "stats", fn: infoStats},
	{name: "replication", fn: infoReplication},
	{name: "cpu", fn: infoCPU},
	{name: "commandstats", fn: infoCommandstats},
	{name: "cluster", fn: infoCluster},
	{name: "keyspace", fn: infoKeyspace},
	{name: "engines", fn: infoEngines},
}

// cmdInfo is INFO [section ...]: Redis's text format, sections headed
// "# Name", "field:value" lines, CRLF line ends.
func cmdInfo(c *conn, args [][]byte) {
	want := map[string]bool{}
	all := len(args) == 1
	for _, a := range args[1:] {
		w := string(toLower(a))
		switch w {
		case "all", "everything", "default":
			all = true
		default:
			want[w] = true
		}
	}
	b := &infoBuilder{}
	for _, sec := range infoSections {
		if !all && !want[sec.name] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + strings.ToUpper(sec.name[:1]) + sec.name[1:] + "\r\n")
		sec.fn(c.s, b)
	}
	c.out = resp.AppendBulkString(c.out, b.String())
}

type infoBuilder struct{ strings.Builder }

func (b *infoBuilder) field(name string, value any) {
	b.WriteString(name)
	b.WriteByte(':')
	fmt.Fprint(b, value)
	b.WriteString("\r\n")
}

func infoServer(s *Server, b *infoBuilder) {
	exe, _ := os.Executable()
	up := time.Since(s.start)
	b.field("redis_version", redisCompatVersion)
	b.field("kvstore_version", s.cfg.Version)
	mode := "standalone"
	if s.cluster != nil {
		mode = "cluster"
	}
	b.field("redis_mode", mode)
	b.field("os", runtime.GOOS+" "+runtime.GOARCH)
	b.field("arch_bits", strconv.IntSize)
	b.field("go_version", runtime.Version())
	b.field("process_id", os.Getpid())
	b.field("run_id", s.runID)
	b.field("tcp_port", s.port())
	b.field("io_loop", s.IO())
	b.field("multiplexing_api", map[string]string{IOEpoll: "epoll", IOUring: "io_uring"}[s.IO()])
	b.field("server_time_usec", time.Now().UnixMicro())
	b.field("uptime_in_seconds", int64(up.Seconds()))
	b.field("uptime_in_days", int64(up.Hours()/24))
	b.field("executable", exe)
	b.field("config_file", "")
}

func (s *Server) port() string {
	_, port, _ := strings.Cut(s.Addr(), "]:")
	if port == "" {
		_, port, _ = strings.Cut(s.Addr(), ":")
	}
	return port
}

func infoClients(s *Server, b *infoBuilder) {
	b.field("connected_clients", s.nclients.Load())
	b.field("maxclients", s.cfg.MaxClients)
	b.field("blocked_clients", 0)
}

func infoMemory(s *Server, b *infoBuilder) {
	s.mem.refresh(time.Now())
	m := readMemMetrics()
	used := uint64(s.mem.used())
	rss := readRSS()
	maxm := uint64(s.mem.max.Load())
	b.field("used_memory", used)
	b.field("used_memory_human", humanBytes(used))
	b.field("used_memory_rss", rss)
	b.field("used_memory_rss_human", humanBytes(rss))
	b.field("maxmemory", maxm)
	b.field("maxmemory_human", humanBytes(maxm))
	b.field("maxmemory_policy", s.cfg.MaxMemoryPolicy)
	// What writes are checked against: maxmemory, or what the machine
	// has left (less a reserve) when there is none.
	b.field("memory_limit", s.mem.limit.Load())
	b.field("mem_allocator", s.cfg.Alloc)
	b.field("go_heap_objects_bytes", m.heapObjects)
	b.field("off_heap_bytes", offHeapBytes.Load())
	b.field("pool_arena_bytes", s.db.arenaBytes())
	b.field("pool_ready_chunk_bytes", readyChunkBytes())
	b.field("gc_cycles", m.gcCycles)
	b.field("gc_cpu_fraction", fmt.Sprintf("%.4f", m.gcCPUFraction))
	b.field("gc_pause_p99_us", fmt.Sprintf("%.1f", m.gcPauseP99.Seconds()*1e6))
	b.field("gc_pause_max_us", fmt.Sprintf("%.1f", m.gcPauseMax.Seconds()*1e6))
}

func infoPersistence(s *Server, b *infoBuilder) {
	b.field("loading", 0)
	if n, ok := s.currentCOW(); ok {
		b.field("current_cow_size", n)
	}
	infoSaves(s, b)
	a := s.aof
	if a == nil {
		b.field("aof_enabled", 0)
		b.field("aof_fsync", PersistNone)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b.field("aof_enabled", 1)
	b.field("aof_fsync", a.policy)
	b.field("aof_rewrite_in_progress", b2i(a.rewriting))
	b.field("aof_rewrite_scheduled", 0)
	lastRewrite, current := int64(-1), int64(-1)
	if a.lastRewrite.duration > 0 {
		lastRewrite = int64(a.lastRewrite.duration.Seconds())
	}
	if a.rewriting {
		current = int64(time.Since(a.rewriteStart).Seconds())
	}
	b.field("aof_last_rewrite_time_sec", lastRewrite)
	b.field("aof_current_rewrite_time_sec", current)
	b.field("aof_last_bgrewrite_status", okErr(a.lastRewrite.ok))
	b.field("aof_last_write_status", okErr(a.err == nil))
	if a.err != nil {
		b.field("aof_last_write_error", a.err.Error())
	}
	b.field("aof_current_size", a.baseSize+a.incrSize)
	b.field("aof_base_size", a.baseSize)
	b.field("aof_rewrite_needs_bytes", a.rewriteNeeds())
	b.field("aof_rewrites", a.rewrites)
	b.field("aof_buffer_length", len(a.buf))
	b.field("aof_delayed_fsync", a.delayedFsyncs.Load())
	b.field("aof_load_time_ms", a.loadTime.Milliseconds())
	b.field("aof_loaded_keys", a.loadedKeys)
	b.field("aof_loaded_records", a.loadedRecords)
	b.field("aof_loaded_bytes", a.loadedBytes)
	b.field("aof_load_truncated_bytes", a.truncated)
	s.forks.mu.Lock()
	if cow := s.forks.aofCOW; cow >= 0 && a.rewrites > 0 {
		b.field("aof_last_cow_size", cow)
	}
	s.forks.mu.Unlock()
}

// infoSaves writes the background snapshots' fields (BGSAVE), Redis's
// rdb_ names: the kvstore's snapshot is its dump file, in its own format.
func infoSaves(s *Server, b *infoBuilder) {
	v := &s.saver
	v.mu.Lock()
	defer v.mu.Unlock()
	b.field("rdb_bgsave_in_progress", b2i(v.running))
	b.field("rdb_saves", v.saves)
	last := v.last.okAt
	if last.IsZero() {
		last = s.start
	}
	b.field("rdb_last_save_time", last.Unix())
	b.field("rdb_last_bgsave_status", okErr(v.saves == 0 || v.last.ok))
	lastTime, current := int64(-1), int64(-1)
	if v.saves > 0 {
		lastTime = int64(v.last.duration.Seconds())
	}
	if v.running {
		current = int64(time.Since(v.began).Seconds())
	}
	b.field("rdb_last_bgsave_time_sec", lastTime)
	b.field("rdb_current_bgsave_time_sec", current)
	if v.saves > 0 && v.last.cow >= 0 {
		b.field("rdb_last_cow_size", v.last.cow)
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

func infoStats(s *Server, b *infoBuilder) {
	st := &s.stats
	b.field("total_connections_received", st.connections.Load())
	b.field("total_commands_processed", st.commands.Load())
	b.field("instantaneous_ops_per_sec", st.ops.rate())
	b.field("total_net_output_bytes", st.netOut.Load())
	b.field("rejected_connections", st.rejected.Load())
	b.field("keyspace_hits", st.hits.Load())
	b.field("keyspace_misses", st.misses.Load())
	b.field("total_protocol_errors", st.protoErrors.Load())
	b.field("client_output_buffer_limit_disconnections", st.outputLimitClosed.Load())
	b.field("client_timeout_disconnections", st.timedOut.Load())
	b.field("protected_mode_denied_connections", st.denied.Load())
	// The kvstore forks nothing: this is how long its last snapshot
	// (BGSAVE, or a log rewrite's) held the write lock, which stops the
	// clients as Redis's fork does.
	s.forks.mu.Lock()
	b.field("latest_fork_usec", s.forks.latest.Microseconds())
	s.forks.mu.Unlock()
}

func infoReplication(s *Server, b *infoBuilder) {
	b.field("role", "master")
	b.field("connected_slaves", 0)
}

func infoCPU(s *Server, b *infoBuilder) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.field("used_cpu_sys", fmt.Sprintf("%.6f", tvSeconds(ru.Stime)))
		b.field("used_cpu_user", fmt.Sprintf("%.6f", tvSeconds(ru.Utime)))
	}
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// infoKeyspace reports every keyspace as db0, the only database: DBSIZE
// and db0's keys agree.
func infoKeyspace(s *Server, b *infoBuilder) {
	if n := s.db.size(); n > 0 {
		b.field("db0", fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", n))
	}
}

// infoEngines breaks the key count down by keyspace.
func infoEngines(s *Server, b *infoBuilder) {
	db := s.db
	b.field("strings_keys", db.strs.len())
	b.field("redis_hashes_keys", len(db.hashes))
	b.field("hash_engine_keys", db.hash.len())
	b.field("ordered_engine_keys", db.tree.len())
}

// memMetrics are the runtime's memory and collector figures.
type memMetrics struct {
	heapObjects   uint64
	gcCycles      uint64
	gcCPUFraction float64 // of all CPU time the process used since start
	gcPauseP99    time.Duration
	gcPauseMax    time.Duration
}

var memMetricNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/sched/pauses/total/gc:seconds",
}

// readMemMetrics reads runtime/metrics: used_memory's Go part is the bytes
// of live and not yet swept heap objects, the closest analogue of what
// Redis's allocator reports; GC pauses are the stop-the-world pauses.
func readMemMetrics() memMetrics {
	samples := make([]metrics.Sample, len(memMetricNames))
	for i, n := range memMetricNames {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var m memMetrics
	if v := samples[0].Value; v.Kind() == metrics.KindUint64 {
		m.heapObjects = v.Uint64()
	}
	if v := samples[1].Value; v.Kind() == metrics.KindUint64 {
		m.gcCycles = v.Uint64()
	}
	if gc, all := samples[2].Value, samples[3].Value; gc.Kind() == metrics.KindFloat64 && all.Kind() == metrics.KindFloat64 && all.Float64() > 0 {
		m.gcCPUFraction = gc.Float64() / all.Float64()
	}
	if v := samples[4].Value; v.Kind() == metrics.KindFloat64Histogram {
		m.gcPauseP99 = histQuantile(v.Float64Histogram(), 0.99)
		m.gcPauseMax = histQuantile(v.Float64Histogram(), 1)
	}
	return m
}

// histQuantile returns the upper bound of the bucket holding quantile q.
func histQuantile(h *metrics.Float64Histogram, q float64) time.Duration {
	var total uint64
	for _, c := range h.Counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank && c > 0 {
			upper := h.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = h.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}

// readRSS is used_memory_rss: the resident set size from /proc.
func readRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + "B"
	}
	v, suffix := float64(n), "B"
	for _, s := range []string{"K", "M", "G", "T"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.2f%s", v, suffix)
}

func infoCluster(s *Server, b *infoBuilder) {
	b.field("cluster_enabled", b2i(s.cluster != nil))
}
