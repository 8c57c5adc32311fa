package kvstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/pkg/resp"
)

// Defaults for Config, Redis's own where Redis has one.
const (
	DefaultAddr       = "127.0.0.1:8888" // the reference script's KV_PORT
	DefaultMaxClients = 10000
)

// Config configures a Server. The zero value of every field means its
// default.
type Config struct {
	// Addr is the TCP address to listen on; port 0 picks a free port.
	Addr string
	// RequirePass, when set, makes every command but AUTH, HELLO and QUIT
	// answer -NOAUTH until the client authenticates. Until it does, a
	// request may declare at most resp.UnauthMaxArgs arguments of at most
	// resp.UnauthMaxBulkLen bytes, and a client that sends no complete
	// request for DefaultAuthTimeout is closed.
	RequirePass string
	// ProtectedModeOff serves clients of every address when no password
	// is set; by default (Redis's protected mode) only those of the
	// loopback interface are, the others are told why and closed.
	ProtectedModeOff bool
	// Timeout closes a client idle for that long (Redis's timeout; 0,
	// the default, never).
	Timeout time.Duration
	// MaxMemory is the most memory the data may take (Redis's maxmemory,
	// in bytes; see memory.go for what counts): past it, writes are
	// refused with -OOM and reads go on. 0, the default, is no limit
	// but what the machine has: writes are refused when they would leave
	// it less than a reserve.
	MaxMemory int64
	// MaxMemoryPolicy is what happens past MaxMemory: PolicyNoEviction
	// (the default and only one) refuses writes.
	MaxMemoryPolicy string
	// MaxClients is the most connections served at once; the next one is
	// told so and closed.
	MaxClients int
	// Limits bound the requests a client may send.
	Limits resp.Limits
	// OutputBufferLimit is the most bytes of replies held for one client;
	// a client over it is disconnected. 0 means DefaultOutputBufferLimit.
	OutputBufferLimit int64
	// Logger receives the server's log lines; nil discards them.
	Logger *slog.Logger
	// Alloc is the allocator: AllocPool (the default) or AllocGo.
	Alloc string
	// Persist is the log's policy: PersistNone (the default), PersistNo,
	// PersistEverysec or PersistAlways.
	Persist string
	// Dir is the log's directory, created if missing; "." by default.
	Dir string
	// AutoRewritePercentage and AutoRewriteMinSize start a rewrite when
	// the incremental log has grown by that percentage of the base and to
	// at least that size; 0 means the defaults, a negative percentage
	// disables automatic rewrites.
	AutoRewritePercentage int
	AutoRewriteMinSize    int64

	// fs is what the log changes its files through; tests put faults
	// or a recorder under it.
	fs logFS
	// Loops is the number of event loops serving connections; 0 means
	// DefaultLoops().
	Loops int
	// IO is the kind of event loop: IOAuto (the default), IOEpoll or
	// IOUring.
	IO string
	// uring holds the io_uring loop's settings that tests change.
	uring uringOptions
	// beforeDump, when set, is called by a background snapshot (BGSAVE)
	// once it is taken, before it is written: tests hold it there.
	beforeDump func()
	// authTimeout is DefaultAuthTimeout unless a test changes it.
	authTimeout time.Duration
	// Version is reported by INFO as kvstore_version.
	Version string
	// Cluster, when set, makes the server the node ClusterID of that
	// Redis Cluster: it answers CLUSTER and redirects keys of other nodes
	// with -MOVED.
	Cluster   *ClusterConfig
	ClusterID string
}

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxClients <= 0 {
		c.MaxClients = DefaultMaxClients
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Alloc == "" {
		c.Alloc = AllocPool
	}
	if c.Persist == "" {
		c.Persist = PersistNone
	}
	if c.Dir == "" {
		c.Dir = "."
	}
	if c.AutoRewritePercentage == 0 {
		c.AutoRewritePercentage = DefaultAutoRewritePercentage
	}
	if c.AutoRewriteMinSize <= 0 {
		c.AutoRewriteMinSize = DefaultAutoRewriteMinSize
	}
	if c.fs == nil {
		c.fs = osFS{}
	}
	if c.OutputBufferLimit <= 0 {
		c.OutputBufferLimit = DefaultOutputBufferLimit
	}
	if c.Loops <= 0 {
		c.Loops = DefaultLoops()
	}
	if c.IO == "" {
		c.IO = defaultIO
	}
	if defaultShared {
		c.uring.shared = true
	}
	if c.Version == "" {
		c.Version = "(devel)"
	}
	if c.authTimeout <= 0 {
		c.authTimeout = DefaultAuthTimeout
	}
	if c.MaxMemoryPolicy == "" {
		c.MaxMemoryPolicy = PolicyNoEviction
	}
	return c
}

// DefaultLoops is half the processors, at least one. Connections are
// served one system call at a time and the machine's other processors are
// needed too: by the kernel's network stack, and, in a benchmark, by the
// client. On two processors one loop serves pipeline-1 traffic from 50
// clients 20% faster, and with a fifth less CPU per request, than two.
func DefaultLoops() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// ErrServerClosed is returned by Serve after Close or SHUTDOWN.
var ErrServerClosed = errors.New("kvstore: server closed")

// Server is a running kvstore. Its methods are safe for concurrent use.
type Server struct {
	cfg   Config
	log   *slog.Logger
	db    *DB
	aof   *aofLog // nil under PersistNone
	start time.Time
	runID string // INFO server's run_id: 40 random hex digits, new at each start
	// cluster is nil outside cluster mode.
	cluster *cluster

	mu      sync.Mutex
	ln      net.Listener
	loops   []*loop
	io      string // the loops' kind: IOEpoll or IOUring
	conns   map[*conn]struct{}
	closing bool
	loopsWG sync.WaitGroup
	done    chan struct{} // closed when the server has stopped
	stopped sync.Once

	nextID   atomic.Int64
	nclients atomic.Int64
	// now is the time since start, kept by the cron (tick): what a
	// connection reads to note when it was last active.
	now atomic.Int64
	// Settings CONFIG SET changes: the idle timeout (nanoseconds) and
	// protected mode.
	timeout   atomic.Int64
	protected atomic.Bool
	stats     stats
	cmdStats  cmdStats
	mem       mem
	// saver is the background snapshots' (BGSAVE), forks what the
	// snapshots of both kinds cost (save.go).
	saver saver
	forks forks
}

// stats are the counters INFO reports.
type stats struct {
	commands    atomic.Int64
	connections atomic.Int64
	rejected    atomic.Int64
	hits        atomic.Int64
	misses      atomic.Int64
	protoErrors atomic.Int64
	// outputLimitClosed counts clients closed over the output buffer limit.
	outputLimitClosed atomic.Int64
	// timedOut counts clients closed idle (see Server.stale); denied
	// those refused by protected mode.
	timedOut atomic.Int64
	denied   atomic.Int64
	netOut   atomic.Int64
	ops      opsMeter
}

// New returns a Server for cfg that is not yet listening.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if cfg.Alloc != AllocGo && cfg.Alloc != AllocPool {
		return nil, fmt.Errorf("allocator %q: want %q or %q", cfg.Alloc, AllocGo, AllocPool)
	}
	switch cfg.Persist {
	case PersistNone, PersistNo, PersistEverysec, PersistAlways:
	default:
		return nil, fmt.Errorf("persistence %q: want none, no, everysec or always", cfg.Persist)
	}
	switch cfg.IO {
	case IOAuto, IOEpoll, IOUring:
	default:
		return nil, fmt.Errorf("event loop %q: want auto, epoll or uring", cfg.IO)
	}
	if cfg.MaxMemoryPolicy != PolicyNoEviction {
		return nil, fmt.Errorf("maxmemory policy %q: want %s (writes past maxmemory are refused)", cfg.MaxMemoryPolicy, PolicyNoEviction)
	}
	if cfg.MaxMemory < 0 {
		return nil, fmt.Errorf("maxmemory %d: want 0 (none) or a number of bytes", cfg.MaxMemory)
	}
	var cl *cluster
	if cfg.Cluster != nil {
		var err error
		if cl, err = newCluster(cfg.Cluster, cfg.ClusterID); err != nil {
			return nil, err
		}
	}
	s := &Server{
		cluster: cl,
		cfg:     cfg,
		log:     cfg.Logger,
		db:      newDB(cfg.Alloc),
		start:   time.Now(),
		runID:   newRunID(),
		conns:   make(map[*conn]struct{}),
		done:    make(chan struct{}),
	}
	s.cmdStats = newCmdStats()
	s.timeout.Store(int64(cfg.Timeout))
	s.protected.Store(!cfg.ProtectedModeOff)
	s.mem.setMax(cfg.MaxMemory)
	s.mem.refresh(time.Now())
	if cfg.Persist != PersistNone {
		if err := s.openAOF(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start listens on cfg.Addr and serves in the background until Close.
func Start(cfg Config) (*Server, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		s.closeAOF()
		return nil, fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	if err := s.startLoops(ln); err != nil {
		ln.Close()
		s.closeAOF()
		return nil, err
	}
	go s.acceptLoop(ln)
	return s, nil
}

// startLoops records the listener and starts one event loop per processor.
func (s *Server) startLoops(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return ErrServerClosed
	}
	if s.ln != nil {
		return errors.New("kvstore: server already serving")
	}
	if err := s.newLoops(); err != nil {
		return err
	}
	s.ln = ln
	for _, l := range s.loops {
		s.loopsWG.Add(1)
		go func() {
			defer s.loopsWG.Done()
			l.run()
		}()
	}
	go s.cron()
	if s.aof != nil && s.cfg.Persist != PersistAlways {
		go s.aof.background(s.done)
	}
	s.warnExposed(ln.Addr().String())
	s.log.Info("ready to accept connections", "addr", ln.Addr().String(), "pid", os.Getpid(), "alloc", s.cfg.Alloc)
	return nil
}

// newLoops makes the event loops of the kind Config.IO asks for, io_uring
// under IOAuto when the kernel offers it, and logs which and why.
func (s *Server) newLoops() error {
	why := "configured"
	if s.cfg.IO != IOEpoll {
		err := s.makeLoops(IOUring)
		if err == nil {
			if s.cfg.IO == IOAuto {
				why = "the kernel offers io_uring"
			}
			s.log.Info("event loop", "io", IOUring, "why", why)
			return nil
		}
		if s.cfg.IO == IOUring {
			return fmt.Errorf("event loop uring: %w", err)
		}
		why = "io_uring unavailable: " + err.Error()
	}
	if err := s.makeLoops(IOEpoll); err != nil {
		return err
	}
	s.log.Info("event loop", "io", IOEpoll, "why", why)
	return nil
}

// makeLoops makes Config.Loops loops of one kind, or none.
func (s *Server) makeLoops(io string) error {
	for range s.cfg.Loops {
		l, err := newLoop(s, io)
		if err != nil {
			for _, l := range s.loops {
				l.closeFds()
			}
			s.loops = nil
			return err
		}
		s.loops = append(s.loops, l)
	}
	s.io = io
	return nil
}

// IO reports the kind of event loop serving, IOEpoll or IOUring, once the
// server listens.
func (s *Server) IO() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.io
}

// Addr returns the address the server listens on, once it listens.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Done is closed when the server has stopped: after Close, or after a client
// sent SHUTDOWN and the server closed.
func (s *Server) Done() <-chan struct{} { return s.done }

// Serve accepts connections on ln until Close. It always returns a non-nil
// error, ErrServerClosed after Close.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.startLoops(ln); err != nil {
		return err
	}
	return s.acceptLoop(ln)
}

func (s *Server) acceptLoop(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Transient (EMFILE and the like): back off as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		s.accept(nc)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) accept(nc net.Conn) {
	s.stats.connections.Add(1)
	if s.nclients.Load() >= int64(s.cfg.MaxClients) {
		s.stats.rejected.Add(1)
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		nc.Write(resp.AppendError(nil, "ERR max number of clients reached"))
		nc.Close()
		return
	}
	addr := nc.RemoteAddr().String()
	if s.denied(addr) {
		s.stats.denied.Add(1)
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		nc.Write(resp.AppendError(nil, errDenied))
		nc.Close()
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	fd, err := socketFD(nc)
	if err != nil {
		s.log.Warn("cannot serve client", "client", addr, "err", err)
		return
	}
	c := newConn(s, fd, addr)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		unix.Close(fd)
		return
	}
	s.conns[c] = struct{}{}
	s.nclients.Add(1)
	l := s.loops[c.id%int64(len(s.loops))]
	s.mu.Unlock()
	l.add(c)
}

// forget drops a closed connection from the server's books.
func (s *Server) forget(c *conn) {
	c.releaseReserved()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.nclients.Add(-1)
}

// Shutdown stops the server gracefully: it stops accepting, lets every
// loop answer the requests it has read, closes the connections and waits
// for the loops (at most until ctx is done).
func (s *Server) Shutdown(ctx context.Context) error { return s.shutdown(ctx.Done(), ctx.Err) }

// shutdown is Shutdown until stop is closed, whose error is why().
func (s *Server) shutdown(stop <-chan struct{}, why func() error) error {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	ln, loops := s.ln, s.loops
	s.mu.Unlock()
	if already {
		select {
		case <-s.done:
			return nil
		case <-stop:
			return why()
		}
	}
	if ln != nil {
		ln.Close()
	}
	for _, l := range loops {
		l.stop()
	}
	waited := make(chan struct{})
	go func() { s.loopsWG.Wait(); close(waited) }()
	var err error
	select {
	case <-waited:
	case <-stop:
		err = why()
	}
	s.waitSave()
	if cerr := s.closeAOF(); err == nil {
		err = cerr
	}
	s.stopped.Do(func() {
		s.mem.setMax(0) // the collector's soft limit goes with the server
		s.log.Info("server stopped", "commands", s.stats.commands.Load())
		purgeRetired()
		close(s.done)
	})
	return err
}

// Close is Shutdown with a grace period of closeGrace.
func (s *Server) Close() error {
	stop := make(chan struct{})
	t := time.AfterFunc(closeGrace, func() { close(stop) })
	defer t.Stop()
	return s.shutdown(stop, func() error { return fmt.Errorf("the loops did not stop within %v", closeGrace) })
}

// closeGrace bounds Close's wait for the loops.
const closeGrace = 5 * time.Second

// closeAOF waits for a rewrite under way, then writes and fsyncs what is
// left of the log and closes it.
func (s *Server) closeAOF() error {
	a := s.aof
	if a == nil {
		return nil
	}
	for {
		a.mu.Lock()
		busy := a.rewriting
		a.mu.Unlock()
		if !busy {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := a.close(); err != nil {
		s.log.Error("closing the operation log", "err", err)
		return err
	}
	return nil
}

// cron runs the server's periodic work until it stops.
func (s *Server) cron() {
	t := time.NewTicker(opsSampleEvery)
	defer t.Stop()
	var last int64
	var swept time.Time
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.tick()
			s.mem.refresh(now)
			if now.Sub(swept) >= sweepEvery && (s.timeout.Load() > 0 || s.cfg.RequirePass != "") {
				swept = now
				s.mu.Lock()
				for _, l := range s.loops {
					l.sweepDue.Store(true)
					l.wake()
				}
				s.mu.Unlock()
			}
			n := s.stats.commands.Load()
			s.stats.ops.sample(now, n)
			if n == last {
				giveBackIdle(s.db) // idle: nothing to interrupt
			}
			last = n
			if s.aof != nil && !s.isClosing() {
				s.maybeRewrite(now)
			}
		}
	}
}

const (
	opsSampleEvery = 100 * time.Millisecond
	opsSamples     = 16 // Redis's STATS_METRIC_SAMPLES
)

// opsMeter computes instantaneous_ops_per_sec as Redis does: the mean rate
// over the last 16 samples taken every 100 ms.
type opsMeter struct {
	mu    sync.Mutex
	last  time.Time
	lastN int64
	rates [opsSamples]float64
	i     int
	n     int
}

func (m *opsMeter) sample(now time.Time, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.last.IsZero() {
		if dt := now.Sub(m.last).Seconds(); dt > 0 {
			m.rates[m.i] = float64(total-m.lastN) / dt
			m.i = (m.i + 1) % opsSamples
			m.n = min(m.n+1, opsSamples)
		}
	}
	m.last, m.lastN = now, total
}

func (m *opsMeter) rate() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 {
		return 0
	}
	var sum float64
	for _, r := range m.rates[:m.n] {
		sum += r
	}
	return int64(sum / float64(m.n))
}

// newRunID returns 40 random hex digits, as Redis's run_id: a client that
// sees it change knows the server restarted.
func newRunID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}
