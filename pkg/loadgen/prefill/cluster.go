package prefill

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/keyslot"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/cluster"
	"github.com/kvbench/kvbench/pkg/measure"
)

// prefillCluster is Prefill for a cluster: each key is written with the
// write command to its slot's master (an MSET may only name keys of one
// slot), cfg.Pipeline keys per round trip to a master, and the masters'
// DBSIZE must sum to 0 before and to the keyspace after.
func prefillCluster(ctx context.Context, cfg loadgen.Config) (loadgen.Result, error) {
	res := loadgen.Result{Config: cfg}
	res.Histogram, res.Errors = measure.NewHistogram(), map[string]int64{}
	topo, err := cluster.FetchTopology(ctx, cfg.Seeds(), cfg.Control())
	if err != nil {
		return res, fmt.Errorf("prefill: %w", err)
	}
	res.Shards = len(topo.Masters)
	nodes := make([]*control.Conn, len(topo.Masters))
	defer func() {
		for _, cl := range nodes {
			if cl != nil {
				cl.Close()
			}
		}
	}()
	dbsize := func() (int64, error) {
		var sum int64
		for i, cl := range nodes {
			v, err := cl.Do(ctx, "DBSIZE")
			if err != nil {
				return 0, fmt.Errorf("on %s: %w", topo.Masters[i], err)
			}
			n, ok := v.(int64)
			if !ok {
				return 0, fmt.Errorf("DBSIZE on %s: got %v", topo.Masters[i], v)
			}
			sum += n
		}
		return sum, nil
	}
	for i, addr := range topo.Masters {
		o := cfg.Control()
		o.Timeout = cfg.Timeout
		if nodes[i], err = control.Dial(ctx, addr, o); err != nil {
			return res, fmt.Errorf("prefill: connect to %s: %w", addr, err)
		}
	}
	lo, hi := PrefillRange(cfg)
	checked := cfg.Segments <= 1
	if checked {
		before, err := dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: %w", err)
		}
		if before != 0 {
			return res, fmt.Errorf("prefill: %w: the masters' DBSIZE sums to %d before the prefill, want 0", ErrNotEmpty, before)
		}
	}
	w := loadgen.NewSetWriter(cfg)
	bufs := make([][]byte, len(nodes))
	pending := make([]int, len(nodes))
	start := time.Now()
	send := func(i int) error {
		if pending[i] == 0 {
			return nil
		}
		replies, err := nodes[i].Raw(ctx, bufs[i])
		if err != nil {
			return fmt.Errorf("prefill: %s: %w", topo.Masters[i], err)
		}
		for _, raw := range replies {
			res.Requests++
			res.Sent++
			res.Sets++
			if len(raw) > 0 && raw[0] == '-' {
				msg := string(bytes.TrimRight(raw[1:], "\r\n"))
				word, _, _ := strings.Cut(msg, " ")
				if word == "EXIST" {
					res.Conflicts++
					continue
				}
				res.Errors[word]++
				if !cfg.ContinueOnError {
					return fmt.Errorf("prefill: %w", &loadgen.ReplyError{Command: cfg.SetCmd, Key: "(on " + topo.Masters[i] + ")", Msg: msg})
				}
			}
		}
		bufs[i], pending[i] = bufs[i][:0], 0
		return nil
	}
	var key []byte
	keys := cfg.Keys()
	for pos := lo; pos < hi; pos++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		k := keys.Key(pos)
		key = keys.AppendName(key[:0], cfg.KeyPrefix, k)
		i := int(topo.Owner[keyslot.Of(key)])
		bufs[i] = w.Append(bufs[i], k)
		if pending[i]++; pending[i] >= cfg.Pipeline {
			if err := send(i); err != nil {
				return res, err
			}
		}
	}
	for i := range nodes {
		if err := send(i); err != nil {
			return res, err
		}
	}
	res.Elapsed = time.Since(start)
	res.Finish()
	if cfg.Progress != nil {
		cfg.Progress(loadgen.Progress{Phase: "prefill", Done: res.Requests, Total: hi - lo, Elapsed: res.Elapsed, Final: true})
	}
	if checked {
		after, err := dbsize()
		if err != nil {
			return res, fmt.Errorf("prefill: %w", err)
		}
		if after != cfg.Keyspace {
			return res, fmt.Errorf("prefill: the masters' DBSIZE sums to %d after writing %d keys, want %d", after, res.Sets, cfg.Keyspace)
		}
	}
	return res, nil
}
