// Package workloadrun is what an attempt of a workload (a mix of
// commands, package workload) needs besides the load itself: the check
// that the server has the mix's commands (Check), the state its commands
// read written before the measurement (Fills, Prefill), and its detail
// rows, one per command and the whole mix's (Rows).
package workloadrun

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/pkg/bench/rbtests"
	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/loadgen"
	"github.com/kvbench/kvbench/pkg/loadgen/keyspace"
	"github.com/kvbench/kvbench/pkg/loadgen/mix"
	"github.com/kvbench/kvbench/pkg/loadgen/prefill"
	"github.com/kvbench/kvbench/pkg/measure"
	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/runner/persistjob"
	"github.com/kvbench/kvbench/pkg/runner/telemetry"
	"github.com/kvbench/kvbench/pkg/workload"
)

// Fill is one step of a workload's prefill: the state one of its commands
// reads.
type Fill struct {
	// What is what the step writes, for messages.
	What string
	// Run sends it.
	Run func(ctx context.Context, cfg loadgen.Config) error
}

// Fills lists what a workload's commands read, so that a fresh
// server holds it before the measurement, as redis-benchmark's tests get
// it when run alone (rbtests.RunTests):
//
//   - GET key: every key of the keyspace, written with SET in sequential
//     order (each index once);
//   - HGET key field: every field, written with HSET the same way;
//   - LPOP and RPOP key: a list of as many elements as the measurement has
//     requests, so that no pop finds it empty; SPOP and ZPOPMIN: a set or
//     sorted set of as many;
//   - LRANGE key: a list of rbtests.LRangeFill (600) elements.
//
// A container whose key holds a placeholder cannot be filled: its
// command reads what the mix's other commands wrote, or finds nothing.
func Fills(cfg loadgen.Config) []Fill {
	var out []Fill
	seen := make(map[string]bool)
	add := func(what string, f func(context.Context, loadgen.Config) error) {
		if !seen[what] {
			seen[what] = true
			out = append(out, Fill{what, f})
		}
	}
	container := func(lenCmd, key string, n int64, cmd ...string) {
		add(fmt.Sprintf("%s %s to %d", lenCmd, key, n), func(ctx context.Context, cfg loadgen.Config) error {
			return prefill.FillTo(ctx, cfg, lenCmd, key, n, mix.Command{Args: cmd})
		})
	}
	for _, c := range cfg.Commands {
		args := c.Args
		if len(args) < 2 {
			continue
		}
		name, key := strings.ToUpper(args[0]), args[1]
		fixed := !strings.Contains(key, "__")
		switch {
		case name == "GET" && len(args) == 2:
			add("SET "+key, func(ctx context.Context, cfg loadgen.Config) error {
				return prefill.SendN(ctx, cfg, mix.Command{Args: []string{"SET", key, mix.PlaceholderData}, KeyPattern: keyspace.Sequential}, cfg.Keyspace)
			})
		case name == "HGET" && len(args) == 3:
			field := args[2]
			add("HSET "+key+" "+field, func(ctx context.Context, cfg loadgen.Config) error {
				return prefill.SendN(ctx, cfg, mix.Command{Args: []string{"HSET", key, field, mix.PlaceholderData}, KeyPattern: keyspace.Sequential}, cfg.Keyspace)
			})
		case !fixed:
		case name == "LPOP" || name == "RPOP":
			container("LLEN", key, cfg.Requests, "LPUSH", key, mix.PlaceholderData)
		case name == "LRANGE":
			container("LLEN", key, rbtests.LRangeFill, "LPUSH", key, mix.PlaceholderData)
		case name == "SPOP":
			container("SCARD", key, cfg.Requests, "SADD", key, "element:"+mix.PlaceholderRandInt)
		case name == "ZPOPMIN":
			container("ZCARD", key, cfg.Requests, "ZADD", key, mix.PlaceholderRandInt, "element:"+mix.PlaceholderRandInt)
		}
	}
	return out
}

// Prefill sends a workload's fills, unmeasured, on cfg's
// connections with the prefill's pipeline.
func Prefill(ctx context.Context, cfg loadgen.Config, fills []Fill) error {
	for _, f := range fills {
		c := cfg
		c.Progress = nil
		if err := f.Run(ctx, c); err != nil {
			return fmt.Errorf("prefill (%s): %w", f.What, err)
		}
	}
	return nil
}

// ProbePrefix starts the keys on which a server without COMMAND is asked
// whether it has a workload's commands: each command is sent once on a
// key of its own under it, then the key deleted.
const ProbePrefix = "kvbench:probe:"

// Check fails, wrapping mix.ErrUnsupported, when the server
// lacks a command of the workload: it asks COMMAND INFO; a server without
// COMMAND gets each command once, on a key under ProbePrefix (deleted
// after), and lacks those it calls unknown.
func Check(ctx context.Context, cfg loadgen.Config) error {
	var names []string
	for _, c := range cfg.Commands {
		names = append(names, c.Args[0])
	}
	o := cfg.Control()
	o.Timeout = max(cfg.ConnectTimeout, loadgen.DefaultConnectTimeout)
	c, err := control.Dial(ctx, cfg.Addr, o)
	if err != nil {
		return err
	}
	defer c.Close()
	var re *control.ReplyError
	if _, err := c.Do(ctx, "COMMAND", "COUNT"); !errors.As(err, &re) {
		if err != nil {
			return err
		}
		return mix.CheckCommands(ctx, cfg.Addr, o, names)
	}
	var lack []string
	for i, cmd := range cfg.Commands {
		key := fmt.Sprintf("%s%d", ProbePrefix, i)
		args := []string{cmd.Args[0]}
		for j, a := range cmd.Args[1:] {
			if j == 0 {
				a = key // by Redis's convention the first argument is the key
			} else {
				a = strings.NewReplacer(mix.PlaceholderKey, "1", mix.PlaceholderRandInt, "1", mix.PlaceholderData, "x").Replace(a)
			}
			args = append(args, a)
		}
		_, err := c.Do(ctx, args...)
		switch {
		case errors.As(err, &re):
			if strings.HasPrefix(strings.ToUpper(re.Msg), "ERR UNKNOWN COMMAND") {
				lack = append(lack, strings.ToUpper(cmd.Args[0]))
			}
		case err != nil:
			return err
		}
		if _, err := c.Do(ctx, "DEL", key); err != nil {
			return err
		}
	}
	if len(lack) > 0 {
		return fmt.Errorf("%w: %s has no %s", mix.ErrUnsupported, cfg.Addr, strings.Join(lack, ", "))
	}
	return nil
}

// Rows are the detail rows of a workload's attempt: one per
// command, with the command's own requests, QPS, latencies, errors and
// server time per call (tel's commandstats), then the total row
// (results.CommandTotal), the whole mix, which is total as the attempt
// measured it. Every row carries the attempt's status and error. A failed
// attempt without per-command results gets one row per command of the
// workload all the same, its figures empty.
func Rows(total results.Row, w *workload.Workload, cfg loadgen.Config, cmds []measure.Command, tel *telemetry.Phase) []results.Row {
	total.Mode, total.Workload, total.Command = results.ModeWorkload, w.Name, results.CommandTotal
	each, _ := telemetry.WorkloadCommands(cfg)
	names := make([]string, 0, len(cfg.Commands)+1)
	for _, c := range cfg.Commands {
		names = append(names, c.Name)
	}
	if cfg.Wait.Enabled() { // the WAITs after its writes: a row of their own
		names, each = append(names, mix.WaitName), append(each, []string{"wait"})
	}
	var out []results.Row
	for i, name := range names {
		row := total
		row.Command = name
		cmd := measure.Command{Name: name}
		if i < len(cmds) {
			cmd = cmds[i]
		}
		row.MeasuredCommand(&cmd)
		// The CPU and memory figures are the attempt's, and so are the
		// persistence job's (its name stays): only the total row has them.
		row.ClientCPUS, row.ServerCPUS, row.QPSPerServerCPUS = 0, 0, 0
		row.ServerRSSBytes, row.ServerUsedMemoryBytes = 0, 0
		row.ServerUsecPerCall, row.ServerCalls = 0, 0
		persistjob.ClearColumns(&row)
		switch {
		case row.OK() && !(row.QPS > 0):
			// A command the mix never drew (a tiny ratio in a short run)
			// measured nothing: its row says so rather than hold a QPS of 0.
			row.Status, row.Error = results.StatusFailed, "the mix sent no "+name
		case row.OK():
			row.ServerUsecPerCall, row.ServerCalls = tel.Commands(each[i])
		}
		out = append(out, row)
	}
	return append(out, total)
}
