package mix

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Wait makes a mix's writes durable acknowledgements, as
// memtier_benchmark's --wait-ratio, --num-slaves and --wait-timeout do:
// on each connection, Waits of every Writes writes (the mix's commands
// that are not reads, Reads) are followed by WAIT Replicas Timeout, which
// the server answers once that many replicas acknowledged the
// connection's writes so far, or the timeout passed. The WAIT is one of
// the connection's requests, counted as the command WaitName, its
// latency the wait for the replicas.
type Wait struct {
	// Waits and Writes are the ratio: Waits WAITs per Writes writes,
	// spread evenly (1 and 10: a WAIT after every tenth write); 0 Waits
	// sends none.
	Waits  int `json:"waits,omitempty"`
	Writes int `json:"writes,omitempty"`
	// Replicas is WAIT's numreplicas, Timeout its timeout (whole
	// milliseconds; 0 would wait for ever, and is refused).
	Replicas int           `json:"replicas,omitempty"`
	Timeout  time.Duration `json:"timeout_ns,omitempty"`
}

// WaitName is the WAIT's command name in results: its own row.
const WaitName = "wait"

// DefaultWaitTimeout is WAIT's timeout when none is given: memtier's
// --wait-timeout default.
const DefaultWaitTimeout = 100 * time.Millisecond

// Enabled reports whether WAITs are sent.
func (w Wait) Enabled() bool { return w.Waits > 0 }

// ParseWaitRatio reads --wait-ratio WAITS:WRITES ("1:10": a WAIT after
// every tenth write). memtier_benchmark writes its ratio the other way
// round (SET:WAIT, "10:1"); kvbench's names the WAITs first, as it is
// read.
func ParseWaitRatio(s string) (waits, writes int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, fmt.Errorf("--wait-ratio %q: want WAITS:WRITES, e.g. 1:10 for a WAIT after every tenth write", s)
	}
	waits, err1 := strconv.Atoi(a)
	writes, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || waits < 1 || writes < 1 {
		return 0, 0, fmt.Errorf("--wait-ratio %q: want two whole numbers of at least 1, WAITS:WRITES", s)
	}
	if waits > writes {
		return 0, 0, fmt.Errorf("--wait-ratio %q: at most one WAIT per write (a second WAIT would have nothing new to acknowledge)", s)
	}
	return waits, writes, nil
}

// Check says what of w cannot be sent.
func (w Wait) Check() []error {
	if !w.Enabled() {
		return nil
	}
	var errs []error
	if w.Writes < w.Waits {
		errs = append(errs, fmt.Errorf("--wait-ratio %d:%d: at most one WAIT per write", w.Waits, w.Writes))
	}
	if w.Replicas < 1 {
		errs = append(errs, fmt.Errorf("--num-replicas %d: want at least 1 replica to wait for", w.Replicas))
	}
	if w.Timeout < time.Millisecond || w.Timeout%time.Millisecond != 0 {
		errs = append(errs, fmt.Errorf("--wait-timeout %v: want whole milliseconds, at least 1ms (WAIT's timeout is in milliseconds, and 0 would wait for ever)", w.Timeout))
	}
	return errs
}

// Command is the WAIT as a command of the mix, named WaitName.
func (w Wait) Command() Command {
	return Command{Name: WaitName, Args: []string{"WAIT", strconv.Itoa(w.Replicas), strconv.FormatInt(w.Timeout.Milliseconds(), 10)}}
}

// Due reports whether a WAIT follows a connection's writes-th write: the
// count of WAITs due, writes·Waits/Writes, grows at it.
func (w Wait) Due(writes int64) bool {
	return writes > 0 && writes*int64(w.Waits)/int64(w.Writes) > (writes-1)*int64(w.Waits)/int64(w.Writes)
}

// ModeCommands is a mode's load as a mix (a mix's WAITs need one): the
// set mode's write, the get mode's read, or the mixed mode's both, by
// setRatio percent. Keys and values are the mode's (__key__, __data__).
func ModeCommands(mode, setCmd, getCmd string, setRatio int) []Command {
	set := Command{Args: []string{setCmd, PlaceholderKey, PlaceholderData}}
	get := Command{Args: []string{getCmd, PlaceholderKey}}
	switch mode {
	case "set":
		return []Command{set}
	case "get":
		return []Command{get}
	}
	switch setRatio {
	case 0:
		return []Command{get}
	case 100:
		return []Command{set}
	}
	set.Ratio, get.Ratio = setRatio, 100-setRatio
	return []Command{set, get}
}
