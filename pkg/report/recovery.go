package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/pkg/results"
	"github.com/kvbench/kvbench/pkg/stats"
)

// RecoveryTable is what persistence buys on one target: for each strategy
// and crash kind measured in the recovery mode, how long its server took
// to come back after kill -9 (or a power loss) and how many acknowledged
// writes it lost, beside what its policy promises.
type RecoveryTable struct {
	Target string         `json:"target"`
	Rows   []*RecoveryRow `json:"rows"`
}

// RecoveryRow is one strategy's recovery over its ok rounds.
type RecoveryRow struct {
	Strategy    string `json:"strategy"`
	Persistence string `json:"persistence"`
	// Crash is the crash kind of its rows: results.CrashProcess (rows
	// written before the crash column included) or results.CrashPower.
	Crash string `json:"crash"`
	// Promise is what the persistence policy promises on that crash
	// (Promise, PowerPromise); empty for a policy it does not know.
	Promise string `json:"promise,omitempty"`
	// Rounds counts the ok rounds; Failed the failed attempts.
	Rounds int `json:"rounds"`
	Failed int `json:"failed,omitempty"`
	// Empty counts the rounds whose server came back without its dataset:
	// they have no recovery time.
	Empty int `json:"came_back_empty,omitempty"`
	// RecoveryS, KeysPerS and MBPerS are the medians over the rounds that
	// have them (recovery_s, recovery_keys_per_s, recovery_mb_per_s);
	// missing when none has.
	RecoveryS Figure `json:"recovery_s"`
	KeysPerS  Figure `json:"recovery_keys_per_s"`
	MBPerS    Figure `json:"recovery_mb_per_s"`
	// AckedWrites and AckedLost sum the ok rounds' acknowledged writes and
	// those lost.
	AckedWrites int64 `json:"acked_writes"`
	AckedLost   int64 `json:"acked_lost"`
	// LostWindowS is the widest lost window of its rounds (lost_window_s):
	// how long before the crash the oldest lost write was acknowledged;
	// missing when no round lost any.
	LostWindowS Figure `json:"lost_window_s"`
	// Broken is set when the strategy lost acknowledged writes its policy
	// promises to keep, or (everysec) writes older than EverysecWindow.
	Broken bool `json:"broken_promise,omitempty"`

	recovery, keys, mb []float64
	window             float64 // the widest lost window; 0 for none
	// unknownWindow: a round lost writes without a lost window (a file
	// written before the column), so the window cannot be held to its
	// bound.
	unknownWindow bool
}

// The promises of the persistence policies on a process crash (kill -9):
// a log written before the acknowledgement is in the OS's page cache,
// which outlives the process, whatever its fsync policy.
// Redis's everysec is the exception: while a background fsync is slow it
// postpones writing its log, for up to 2 s, and still acknowledges, so a
// crash then loses the writes of that wait (EverysecWindow).
const (
	PromiseAll       = "everything may be lost"
	PromiseNothing   = "nothing lost on a process crash"
	PromiseSlowFsync = "nothing lost on a process crash, unless an fsync is slow: then up to the last 2 s"
	PromiseSince     = "writes since the last snapshot may be lost"
)

// The promises of the persistence policies on a power loss, which loses
// what the OS had not written to the disk: a log fsynced before each
// acknowledgement keeps every write, one fsynced every second loses about
// the last second's, one never fsynced what the OS had not written back.
// PromiseNothingPower is checked against the writes lost, PromiseSecond
// against the lost window (EverysecWindow); what the OS had not written
// depends on the OS.
const (
	PromiseNothingPower = "nothing lost on a power loss"
	PromiseSecond       = "about the last second of writes may be lost"
	PromiseUnwritten    = "what the OS had not written may be lost"
)

// EverysecWindow is the widest lost window a log fsynced every second is
// allowed: on a power loss its second, and the second an fsync may take
// before the next one starts, as Redis documents for appendfsync everysec;
// on a process crash the 2 s Redis holds its writes back while an fsync is
// slow.
const EverysecWindow = 2.0

// PowerPromise returns what persistence policy p promises on a power
// loss; "" for a policy it does not know.
func PowerPromise(p string) string {
	switch p {
	case "always":
		return PromiseNothingPower
	case "everysec":
		return PromiseSecond
	case "no":
		return PromiseUnwritten
	}
	return Promise(p)
}

// promiseOn returns what persistence policy p promises on a crash of kind
// crash.
func promiseOn(p, crash string) string {
	if crash == results.CrashPower {
		return PowerPromise(p)
	}
	return Promise(p)
}

// Promise returns what persistence policy p promises on a process crash;
// "" for a policy it does not know.
func Promise(p string) string {
	switch p {
	case "none":
		return PromiseAll
	case "no", "always":
		return PromiseNothing
	case "everysec":
		return PromiseSlowFsync
	case "rdb":
		return PromiseSince
	}
	return ""
}

// recoveryRow files a recovery row under its target and strategy.
func (b *builder) recoveryRow(r *results.Row, pos results.Pos) {
	if b.rep.recovery == nil {
		b.rep.recovery = make(map[[3]string]*RecoveryRow)
	}
	crash := cmp.Or(r.Crash, results.CrashProcess)
	k := [3]string{r.Target, r.Strategy, crash}
	rr := b.rep.recovery[k]
	if rr == nil {
		rr = &RecoveryRow{Strategy: r.Strategy, Persistence: r.Persistence, Crash: crash, Promise: promiseOn(r.Persistence, crash)}
		b.rep.recovery[k] = rr
	}
	if r.Persistence != rr.Persistence {
		b.errs.At(pos, "persistence", fmt.Errorf("%w: strategy %s of %s has persistence %q here and %q before", results.ErrBadValue, r.Strategy, r.Target, r.Persistence, rr.Persistence))
		return
	}
	b.set.add(r)
	if !r.OK() {
		rr.Failed++
		b.rep.Failed = append(b.rep.Failed, *r)
		return
	}
	rr.Rounds++
	if r.AckedWrites != nil {
		rr.AckedWrites += *r.AckedWrites
	}
	if r.AckedLost != nil {
		rr.AckedLost += *r.AckedLost
	}
	if r.LostWindowS != nil {
		rr.window = max(rr.window, *r.LostWindowS)
	} else if r.AckedLost != nil && *r.AckedLost > 0 {
		rr.unknownWindow = true
	}
	if r.RecoveryS == nil {
		rr.Empty++
		return
	}
	rr.recovery = append(rr.recovery, *r.RecoveryS)
	if r.RecoveryKeysPerS != nil {
		rr.keys = append(rr.keys, *r.RecoveryKeysPerS)
	}
	if r.RecoveryMBPerS != nil {
		rr.mb = append(rr.mb, *r.RecoveryMBPerS)
	}
}

// recoveryTables builds the recovery tables, targets by name and
// strategies by persistence as the other tables order them, and warns of
// each strategy that lost more than its policy promises.
func (b *builder) recoveryTables() {
	byTarget := make(map[string]*RecoveryTable)
	for k, rr := range b.rep.recovery {
		t := byTarget[k[0]]
		if t == nil {
			t = &RecoveryTable{Target: k[0]}
			byTarget[k[0]] = t
			b.rep.Recovery = append(b.rep.Recovery, t)
		}
		rr.RecoveryS, rr.KeysPerS, rr.MBPerS = medianFigure(rr.recovery), medianFigure(rr.keys), medianFigure(rr.mb)
		rr.LostWindowS = missing
		if rr.window > 0 {
			rr.LostWindowS = fig(rr.window)
		}
		rr.Broken = (rr.Promise == PromiseNothing || rr.Promise == PromiseNothingPower) && rr.AckedLost > 0 ||
			(rr.Promise == PromiseSecond || rr.Promise == PromiseSlowFsync) && (rr.window > EverysecWindow || rr.unknownWindow)
		t.Rows = append(t.Rows, rr)
	}
	slices.SortFunc(b.rep.Recovery, func(x, y *RecoveryTable) int { return cmp.Compare(x.Target, y.Target) })
	rank := func(p string) int {
		if i := slices.Index(persistenceOrder, p); i >= 0 {
			return i
		}
		return len(persistenceOrder)
	}
	for _, t := range b.rep.Recovery {
		slices.SortFunc(t.Rows, func(x, y *RecoveryRow) int {
			return cmp.Or(cmp.Compare(rank(x.Persistence), rank(y.Persistence)), cmp.Compare(x.Persistence, y.Persistence), cmp.Compare(x.Strategy, y.Strategy), cmp.Compare(x.Crash, y.Crash))
		})
		for _, rr := range t.Rows {
			if rr.Broken {
				what := fmt.Sprintf("%s %s (%s crash): %d of %d", t.Target, rr.Strategy, rr.Crash, rr.AckedLost, rr.AckedWrites)
				if (rr.Promise == PromiseSecond || rr.Promise == PromiseSlowFsync) && !rr.unknownWindow {
					what += fmt.Sprintf(", acknowledged up to %.2fs before the crash, past its %.0fs", rr.window, EverysecWindow)
				}
				b.warnOther("acknowledged writes lost on a crash by a strategy whose policy promises to keep them (recovery table)", what)
			}
		}
	}
}

// medianFigure is the median of xs, missing when xs is empty.
func medianFigure(xs []float64) Figure {
	if len(xs) == 0 {
		return missing
	}
	return fig(stats.Median(xs))
}
