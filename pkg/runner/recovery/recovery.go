// Package recovery is the recovery mode of "kvbench run": on a prefilled
// server, a stream of acknowledged writes, a crash amid it (kill -9; with
// a power cut, what the server had not synced dropped too), a restart on
// the same files, and what came back: how long the server took to answer
// a read, the keys and bytes it loaded per second, and the acknowledged
// writes it lost (Run). Site is where the server keeps its files and how
// its crash ends.
package recovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/resp"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/target"
)

// Stream bounds the acknowledged writes of a recovery attempt: the
// server is killed once Config.Requests writes are acknowledged, or once
// the stream has run this long, whichever comes first.
const Stream = time.Second

// PowerLossStream is Stream for a power loss: long enough that a
// log fsynced every second loses only the end of it, so that the row's
// lost window shows how much.
const PowerLossStream = 3 * time.Second

// recoveryPrefix starts the keys a recovery attempt writes after the
// prefill: its probe key and each connection's keys and counter.
const recoveryPrefix = "kvbench:recovery:"

// recoveryReadBatch is how many reads go in one round trip when the
// acknowledged writes are read back.
const recoveryReadBatch = 256

// killWait bounds the wait for a killed server's process to be reaped.
const killWait = 10 * time.Second

// Config is what a recovery takes of the run's settings.
type Config struct {
	// Connections is the number of writers of the stream, each on a
	// connection of its own; Requests the acknowledged writes after which
	// the server is killed (0: Stream's time only).
	Connections int
	Requests    int64
	// Timeout bounds a request; ReadyTimeout the restarted server's start
	// and its first answer (0: target.DefaultReadyTimeout).
	Timeout, ReadyTimeout time.Duration
	// Tracker, if set, records the restarted server's processes.
	Tracker *target.Tracker
}

// Check refuses the recovery mode for a target whose server kvbench
// cannot kill and start again on its files.
func Check(d target.Desc) error {
	if target.CanRestart(d) {
		return nil
	}
	return fmt.Errorf("mode %s: a %s target cannot be killed and started again on its files (only the kvstore and redis, which kvbench starts itself, can)", results.ModeRecovery, d.Kind)
}

// recoveryStream is what the writers of a recovery attempt had
// acknowledged when the server was killed.
type recoveryStream struct {
	// sets[c] is the number of keys connection c wrote and saw
	// acknowledged, in order (recoveryKey(c, 0..sets[c]-1)).
	sets []int64
	// counters[c] is the last acknowledged value of connection c's
	// counter (INCR); 0 when none was.
	counters []int64
	// incrs counts the acknowledged INCRs.
	incrs int64
	// setAt[c][seq] and incrAt[c][seq] are when connection c's SET of
	// key seq and its INCR to seq+1 were acknowledged, and killed when
	// the server was killed: the lost window is measured with them.
	setAt, incrAt [][]time.Time
	killed        time.Time
}

func (s *recoveryStream) acked() int64 {
	n := s.incrs
	for _, k := range s.sets {
		n += k
	}
	return n
}

func recoveryKey(conn int, seq int64) string {
	return recoveryPrefix + strconv.Itoa(conn) + ":" + strconv.FormatInt(seq, 10)
}

func recoveryValue(conn int, seq int64) string {
	return "c" + strconv.Itoa(conn) + "-s" + strconv.FormatInt(seq, 10)
}

func recoveryCounter(conn int) string { return recoveryPrefix + "counter:" + strconv.Itoa(conn) }

// recoveryProbe is the key, written right after the prefill, whose read
// tells that the restarted server has its dataset back.
const recoveryProbe = recoveryPrefix + "probe"

// Figures are what a recovery measured: the recovery_s,
// recovery_keys_per_s, recovery_mb_per_s, acked_writes, acked_lost and
// lost_window_s columns, each nil until measured (see results.Row).
type Figures struct {
	AckedWrites, AckedLost                   *int64
	LostWindowS, RecoveryS, KeysPerS, MBPerS *float64
}

// Run is the rest of a recovery attempt once inst, an instance of target
// t under strategy s, is prefilled: it writes a stream of acknowledged
// writes, kills the server amid it (and cuts the power of a lazy file
// system site), starts it again on site's directory and measures the
// recovery. It returns the instance the caller stops (the new one, or
// inst when the restart failed) and the figures measured, those before an
// error too.
func Run(ctx context.Context, t target.Target, s target.Strategy, inst target.Instance, site *Site, o Config) (_ target.Instance, f Figures, _ error) {
	d := t.Desc()
	dir := site.Dir
	info := inst.Info()
	copts := info.Control(d.Password)
	copts.Timeout = o.Timeout
	if err := o.setProbe(ctx, info.Addr, copts, d.SetCmd, s.Persistence == snapshotPolicy); err != nil {
		return inst, f, target.WithExit(inst, err)
	}
	length := Stream
	if site.fs != nil {
		length = PowerLossStream
	}
	stream, err := o.writeAndKill(ctx, d.SetCmd, inst, copts, length)
	if err != nil {
		return inst, f, err
	}
	if err := site.cut(); err != nil {
		return inst, f, err
	}
	acked := stream.acked()
	f.AckedWrites = &acked
	size, err := dataBytes(dir)
	if err != nil {
		return inst, f, fmt.Errorf("the data files: %w", err)
	}

	t0 := time.Now()
	inst2, err := target.Restart(ctx, t, s, target.Env{Dir: dir, Tracker: o.Tracker, ReadyTimeout: o.ReadyTimeout})
	if err != nil {
		return inst, f, fmt.Errorf("restart after %s (the server did not come back): %w", site.name(), err)
	}
	info2 := inst2.Info()
	copts.TLS = info2.TLS
	c, err := o.readBack(ctx, info2.Addr, copts, t0, inst2)
	if err != nil {
		return inst2, f, target.WithExit(inst2, err)
	}
	secs := time.Since(t0).Seconds() // answered: what follows is reading back, not recovering
	defer c.Close()
	back, err := readProbe(ctx, c, d.GetCmd)
	if err != nil {
		return inst2, f, target.WithExit(inst2, err)
	}
	lost, oldest, err := countLost(ctx, c, d.GetCmd, stream)
	if err != nil {
		return inst2, f, target.WithExit(inst2, fmt.Errorf("reading the acknowledged writes back: %w", err))
	}
	f.AckedLost = &lost
	if lost > 0 {
		w := stream.killed.Sub(oldest).Seconds()
		f.LostWindowS = &w
	}
	keys, err := dbsize(ctx, c)
	if err != nil {
		return inst2, f, target.WithExit(inst2, err)
	}
	// Without the probe, the server may still have the keyspace: the probe
	// went with the last writes (Redis's everysec holds its log back
	// while an fsync is slow).
	if !back && keys == 0 {
		return inst2, f, nil // the dataset is gone: no recovery to time
	}
	f.RecoveryS = &secs
	if keys > 0 {
		v := float64(keys) / secs
		f.KeysPerS = &v
	}
	if loaded := loadedBytes(ctx, c); loaded > 0 {
		size = loaded // the kvstore's own count: its files may hold space filled ahead
	}
	if size > 0 {
		v := float64(size) / 1e6 / secs
		f.MBPerS = &v
	}
	return inst2, f, nil
}

// snapshotTimeout bounds the SAVE of a recovery attempt's prefilled
// dataset: gigabytes at a disk's pace.
const snapshotTimeout = 5 * time.Minute

// snapshotPolicy is the persistence of the strategies that keep snapshots
// and no log: their recovery loads the last snapshot.
const snapshotPolicy = "rdb"

// setProbe writes the probe key, and with snapshot takes a snapshot (SAVE)
// of the prefilled dataset: the one its periodic snapshots would have
// taken by then, which the restart loads, losing the stream of writes
// that follows as the policy allows. Without it the restart would find no
// snapshot and time nothing. Writing the snapshot (and syncing it) takes
// longer than loading it: it gets snapshotTimeout.
func (o Config) setProbe(ctx context.Context, addr string, copts control.Options, setCmd string, snapshot bool) error {
	if snapshot {
		copts.Timeout = max(copts.Timeout, o.ReadyTimeout, snapshotTimeout)
	}
	c, err := control.Dial(ctx, addr, copts)
	if err != nil {
		return fmt.Errorf("recovery: %w", err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, setCmd, recoveryProbe, "probe"); err != nil {
		return fmt.Errorf("recovery: write the probe key: %w", err)
	}
	if snapshot {
		if _, err := c.Do(ctx, "SAVE"); err != nil {
			return fmt.Errorf("recovery: snapshot the prefilled dataset (SAVE): %w", err)
		}
	}
	return nil
}

// writeAndKill runs one writer per connection, each writing its keys
// (with setCmd) and incrementing its counter in turn, one request at a
// time, and kills the server once Config.Requests writes are acknowledged
// or Stream (or stream, when given) has passed. The writers then stop on their lost
// connections.
func (o Config) writeAndKill(ctx context.Context, setCmd string, inst target.Instance, copts control.Options, stream time.Duration) (*recoveryStream, error) {
	n := max(o.Connections, 1)
	addr := inst.Info().Addr
	conns := make([]*control.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := control.Dial(ctx, addr, copts)
		if err != nil {
			return nil, target.WithExit(inst, fmt.Errorf("recovery: connection %d: %w", i, err))
		}
		conns[i] = c
	}
	s := &recoveryStream{sets: make([]int64, n), counters: make([]int64, n),
		setAt: make([][]time.Time, n), incrAt: make([][]time.Time, n)}
	incrs := make([]int64, n)
	var (
		total  atomic.Int64
		enough = make(chan struct{})
		once   sync.Once
		wg     sync.WaitGroup
		errs   = make([]error, n)
	)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns[i]
			for seq := int64(0); wctx.Err() == nil; seq++ {
				if _, err := c.Do(wctx, setCmd, recoveryKey(i, seq), recoveryValue(i, seq)); err != nil {
					errs[i] = err
					return
				}
				s.sets[i] = seq + 1
				s.setAt[i] = append(s.setAt[i], time.Now())
				v, err := c.Do(wctx, "INCR", recoveryCounter(i))
				if err != nil {
					errs[i] = err
					return
				}
				if x, ok := v.(int64); ok {
					s.counters[i] = x
				}
				s.incrAt[i] = append(s.incrAt[i], time.Now())
				incrs[i]++
				if t := total.Add(2); o.Requests > 0 && t >= o.Requests {
					once.Do(func() { close(enough) })
				}
			}
		}()
	}
	timer := time.NewTimer(cmp.Or(stream, Stream))
	defer timer.Stop()
	writersDone := make(chan struct{})
	go func() { wg.Wait(); close(writersDone) }()
	select {
	case <-enough:
	case <-timer.C:
	case <-writersDone: // every writer failed before the kill
	case <-ctx.Done():
	}
	exited := inst.Err() // the server died before the kill: on its own
	s.killed = time.Now()
	kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), killWait)
	kerr := target.Kill(kctx, inst)
	kcancel()
	<-writersDone
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if exited != nil {
		return nil, fmt.Errorf("recovery: before the kill: %w", exited)
	}
	if kerr != nil {
		return nil, kerr
	}
	for _, k := range incrs {
		s.incrs += k
	}
	// An error reply is the server refusing a write; a lost connection is
	// the kill's doing.
	for i, err := range errs {
		var re *control.ReplyError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("recovery: connection %d: %w", i, err)
		}
	}
	if s.acked() == 0 {
		return nil, errors.New("recovery: no write was acknowledged before the kill")
	}
	return s, nil
}

// readBack connects to the restarted server and waits until it answers a
// read of the probe key, whether it has it or not: a server still loading
// answers with an error (Redis's LOADING) and is asked again. Reads are
// sent from t0 until the ready timeout has passed since then, at most
// recoveryPoll apart: the recovery time is known to within it.
func (o Config) readBack(ctx context.Context, addr string, copts control.Options, t0 time.Time, inst target.Instance) (*control.Conn, error) {
	timeout := o.ReadyTimeout
	if timeout <= 0 {
		timeout = target.DefaultReadyTimeout
	}
	deadline := t0.Add(timeout)
	var last error
	for wait := time.Millisecond; ; wait = min(2*wait, recoveryPoll) {
		c, err := control.Dial(ctx, addr, copts)
		if err == nil {
			if _, err = c.Do(ctx, "GET", recoveryProbe); err == nil {
				return c, nil
			}
			c.Close()
		}
		last = err
		if err := inst.Err(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: the restarted server answered no read within %v: %v", target.ErrNotReady, timeout, last)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-inst.Exited():
		case <-time.After(wait):
		}
	}
}

// recoveryPoll is the longest wait between two reads of a restarting
// server: a dial and a GET of a few microseconds each, against recoveries
// of tenths of a second.
const recoveryPoll = 5 * time.Millisecond

// readProbe reports whether the restarted server holds the probe key.
func readProbe(ctx context.Context, c *control.Conn, getCmd string) (bool, error) {
	v, err := c.Do(ctx, getCmd, recoveryProbe)
	if err != nil {
		return false, fmt.Errorf("read the probe key: %w", err)
	}
	return v == "probe", nil
}

// countLost reads every acknowledged write back: a key missing or with
// another value is one write lost, a counter below its acknowledged value
// as many as it is below. oldest is when the oldest of the lost writes
// was acknowledged.
func countLost(ctx context.Context, c *control.Conn, getCmd string, s *recoveryStream) (lost int64, oldest time.Time, err error) {
	lostAt := func(t time.Time) {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	var at []time.Time // when each write of the batch was acknowledged
	var req []byte
	var want []string
	flush := func() error {
		if len(want) == 0 {
			return nil
		}
		replies, err := c.Raw(ctx, req)
		if err != nil {
			return err
		}
		for i, raw := range replies {
			v, _, err := control.Decode(raw)
			if err != nil {
				return err
			}
			if v != want[i] {
				lost++
				lostAt(at[i])
			}
		}
		req, want, at = req[:0], want[:0], at[:0]
		return nil
	}
	for conn, n := range s.sets {
		for seq := range n {
			req = resp.AppendCommandString(req, getCmd, recoveryKey(conn, seq))
			want = append(want, recoveryValue(conn, seq))
			at = append(at, s.setAt[conn][seq])
			if len(want) == recoveryReadBatch {
				if err := flush(); err != nil {
					return 0, oldest, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return 0, oldest, err
	}
	for conn, acked := range s.counters {
		if acked == 0 {
			continue
		}
		v, err := c.Do(ctx, "GET", recoveryCounter(conn))
		if err != nil {
			return 0, oldest, err
		}
		got := int64(0)
		if str, ok := v.(string); ok {
			if got, err = strconv.ParseInt(str, 10, 64); err != nil {
				return 0, oldest, fmt.Errorf("counter %s: %q is not a number", recoveryCounter(conn), str)
			}
		}
		if got < acked {
			lost += acked - got
			// The increment to got+1 is the oldest lost.
			lostAt(s.incrAt[conn][max(got, 0)])
		}
	}
	return lost, oldest, nil
}

// dbsize is the number of keys the server holds.
func dbsize(ctx context.Context, c *control.Conn) (int64, error) {
	v, err := c.Do(ctx, "DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("DBSIZE: unexpected reply %v", v)
	}
	return n, nil
}

// loadedBytes is the kvstore's INFO persistence aof_loaded_bytes: the
// bytes of log it replayed; 0 when the server does not say (Redis).
func loadedBytes(ctx context.Context, c *control.Conn) int64 {
	info, err := c.Info(ctx, "persistence")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(info["aof_loaded_bytes"], 10, 64)
	return n
}

// dataBytes sums the sizes of the files a server keeps its data in under
// dir: everything but its configuration and TLS files.
func dataBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || notData(d.Name()) {
			return nil
		}
		st, err := d.Info()
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += st.Size()
		return nil
	})
	return n, err
}

func notData(name string) bool {
	for _, suffix := range []string{".conf", ".pem", ".crt", ".key"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}
