package loadgen

import (
	"sort"
	"time"

	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/replay"
	"github.com/kvbench/kvbench/pkg/loadgen/schedule"
)

// A replay (Config.Replay) sends a capture's commands instead of a mix:
// the capture's clients are dealt to the connections (replay.Capture.Assign),
// each connection sends its stream in the capture's order, and the run
// ends when every connection has sent its stream (Config.ReplayLoops
// times), its share of Config.Requests, or at Config.Duration. The
// commands are reported per name through the mix's accounting: the plan
// has one mix.Plan per name, with nothing to verify, and a request's
// slot carries its name's index.

// replayPlans are a replay's commands as the mix's accounting knows
// them: one per name.
func replayPlans(cp *replay.Capture) []mix.Plan {
	out := make([]mix.Plan, len(cp.Names))
	for i, n := range cp.Names {
		out[i] = mix.Plan{Name: n, Text: n}
	}
	return out
}

// replayConn is a connection's stream of a replay.
type replayConn struct {
	stream []uint32 // its commands' indices in the capture, ascending
	pos    int      // the next one
	loop   int64    // passes over the stream done
	left   int64    // commands still to send in the run
}

// initReplay gives connection id (global index) its stream, and the
// number of commands it sends: all of it, each loop, or with
// Config.Requests (and no Duration) its part of the capture's first
// Requests commands.
func (c *conn) initReplay(id int) {
	p := c.p
	rp := &replayConn{stream: p.streams[id]}
	loops := int64(max(p.cfg.ReplayLoops, 1))
	rp.left = int64(len(rp.stream)) * loops
	if n := p.cfg.Requests; p.cfg.Duration <= 0 && n > 0 && n < p.cfg.ReplayTotal() {
		l := int64(p.cfg.Replay.Len())
		full, rem := n/l, uint32(n%l)
		part := sort.Search(len(rp.stream), func(i int) bool { return rp.stream[i] >= rem })
		rp.left = full*int64(len(rp.stream)) + int64(part)
	}
	c.rp = rp
}

// buildReplay is build for a replay: the next n commands of the
// connection's stream, copied as they are.
func (c *conn) buildReplay(dst []byte, n int, t int64) []byte {
	rp, cp := c.rp, c.p.cfg.Replay
	mask := len(c.ring) - 1
	i := c.head + c.inflight + c.pre
	for range n {
		k := int(rp.stream[rp.pos])
		dst = append(dst, cp.Command(k)...)
		c.ring[i&mask] = slot{t: t, op: uint8(cp.Name(k))}
		i++
		if rp.pos++; rp.pos == len(rp.stream) {
			rp.pos = 0
			rp.loop++
		}
	}
	rp.left -= int64(n)
	c.pre += n
	return dst
}

// replayDue is the intended send time of the connection's next command
// at the captured pace: its time in the capture (plus the capture's span
// per loop done) divided by the speed.
func (c *conn) replayDue(ph *schedule.Phase) int64 {
	cp := c.p.cfg.Replay
	at := cp.At(int(c.rp.stream[c.rp.pos])) + cp.Span()*time.Duration(c.rp.loop)
	return ph.Paced(int64(at))
}
