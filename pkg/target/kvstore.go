package target

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The kvstore's allocators, as the reference script names them, and "both".
const (
	// AllocMypool packs records outside the Go heap ("serve --alloc pool"),
	// the C kvstore's mypool.
	AllocMypool = "mypool"
	// AllocMalloc makes one Go allocation per key and value
	// ("serve --alloc go"), the C kvstore's malloc.
	AllocMalloc = "malloc"
	// AllocBoth measures every strategy with each allocator, as the
	// reference script's variants (nopersist_mypool, persist_malloc, ...).
	AllocBoth = "both"
	// DefaultAlloc is the reference script's ALLOC.
	DefaultAlloc = AllocMypool
)

// Kvstore defaults (the reference script's KV_PORT, SET_CMD, GET_CMD and strategies).
const (
	// DefaultKvstoreName is the kvstore target's name.
	DefaultKvstoreName = "kvstore"
	// DefaultKvstorePort is the port tried first; any free port is used
	// when it is taken.
	DefaultKvstorePort = 8888
	// DefaultKvstoreSetCmd and DefaultKvstoreGetCmd are the kvstore's
	// commands: its ordered engine's insert and read.
	DefaultKvstoreSetCmd = "RSET"
	DefaultKvstoreGetCmd = "RGET"
	// DefaultKvstoreStrategies are the strategies run by default.
	DefaultKvstoreStrategies = "persist_no persist_everysec nopersist"
)

// kvstoreStrategies are the kvstore's strategies: name, the name of the
// allocator variant's prefix, and serve's --persist.
var kvstoreStrategies = []struct{ name, variant, persist string }{
	{"persist_no", "persist", "no"},
	{"persist_everysec", "everysec", "everysec"},
	{"persist_always", "always", "always"},
	{"nopersist", "nopersist", "none"},
}

// serveAlloc maps the reference script's allocator names to serve's --alloc.
var serveAlloc = map[string]string{AllocMypool: "pool", AllocMalloc: "go"}

// ParseAlloc accepts mypool, malloc, both, and serve's own names pool and
// go, and returns the reference script's name.
func ParseAlloc(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case AllocMypool, "pool":
		return AllocMypool, nil
	case AllocMalloc, "go":
		return AllocMalloc, nil
	case AllocBoth:
		return AllocBoth, nil
	}
	return "", fmt.Errorf("alloc %q: want mypool, malloc or both", s)
}

// KvstoreConfig configures a Kvstore target. Zero fields take the defaults.
type KvstoreConfig struct {
	// Name is the target's name; DefaultKvstoreName when empty.
	Name string
	// Bin is the kvbench binary whose "serve" runs the kvstore; the
	// running executable when empty.
	Bin string
	// Alloc is AllocMypool, AllocMalloc or AllocBoth; DefaultAlloc when
	// empty.
	Alloc string
	// Port is the port tried first (the reference script's KV_PORT); when it is taken
	// the server gets any free port. 0 goes straight to a free port.
	Port int
	// SetCmd and GetCmd are the load generator's commands;
	// DefaultKvstoreSetCmd and DefaultKvstoreGetCmd when empty.
	SetCmd, GetCmd string
	// Defaults names the strategies run by default;
	// DefaultKvstoreStrategies when nil.
	Defaults []string
	// Args are more "serve" flags for every instance.
	Args []string
}

// Kvstore is the embedded kvstore, run as "kvbench serve" in a fresh
// directory per instance.
type Kvstore struct {
	cfg  KvstoreConfig
	desc Desc
	args map[string][]string // strategy → serve flags
}

// NewKvstore returns the kvstore target.
func NewKvstore(cfg KvstoreConfig) (*Kvstore, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultKvstoreName
	}
	if cfg.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("kvstore: find the kvbench binary: %w", err)
		}
		cfg.Bin = exe
	}
	if cfg.Alloc == "" {
		cfg.Alloc = DefaultAlloc
	}
	alloc, err := ParseAlloc(cfg.Alloc)
	if err != nil {
		return nil, fmt.Errorf("kvstore: %w", err)
	}
	cfg.Alloc = alloc
	if cfg.Port < 0 || cfg.Port > 65535 {
		return nil, fmt.Errorf("kvstore: port %d: want 0 to 65535", cfg.Port)
	}
	if cfg.SetCmd == "" {
		cfg.SetCmd = DefaultKvstoreSetCmd
	}
	if cfg.GetCmd == "" {
		cfg.GetCmd = DefaultKvstoreGetCmd
	}
	if cfg.Defaults == nil {
		cfg.Defaults = strings.Fields(DefaultKvstoreStrategies)
	}
	k := &Kvstore{cfg: cfg, args: make(map[string][]string)}
	k.desc = Desc{Name: cfg.Name, Kind: KindKvstore, SetCmd: cfg.SetCmd, GetCmd: cfg.GetCmd, PersistJobs: serverJobs()}
	allocs := []string{alloc}
	if alloc == AllocBoth {
		allocs = []string{AllocMypool, AllocMalloc}
	}
	for _, a := range allocs {
		for _, st := range kvstoreStrategies {
			s := Strategy{Name: st.name, Persistence: st.persist, Alloc: a, Expect: kvstoreExpect(st.persist, serveAlloc[a])}
			if alloc == AllocBoth {
				s.Name, s.Alias = st.variant+"_"+a, st.name
			}
			k.desc.Strategies = append(k.desc.Strategies, s)
			k.args[s.Name] = []string{"--persist", st.persist, "--alloc", serveAlloc[a]}
		}
	}
	sel, unknown := k.desc.Select(cfg.Defaults)
	if len(unknown) > 0 {
		return nil, fmt.Errorf("kvstore: %w %s", ErrUnknownStrategy, strings.Join(unknown, ", "))
	}
	for _, s := range sel {
		k.desc.Defaults = append(k.desc.Defaults, s.Name)
	}
	return k, nil
}

// kvstoreExpect is the effective configuration serve reports for a
// persistence setting and allocator.
func kvstoreExpect(persist, alloc string) map[string]string {
	m := map[string]string{
		"save":            "",
		"appendonly":      "yes",
		"appendfsync":     persist,
		"kvstore-persist": persist,
		"kvstore-alloc":   alloc,
	}
	if persist == "none" {
		m["appendonly"], m["appendfsync"] = "no", "everysec"
	}
	return m
}

// kvstoreParams are the kvstore's CONFIG GET parameters.
var kvstoreParams = []string{"save", "appendonly", "appendfsync", "kvstore-persist", "kvstore-alloc"}

// Desc describes the target.
func (k *Kvstore) Desc() Desc { return k.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (k *Kvstore) Config() KvstoreConfig { return k.cfg }

// readyLine matches serve's log line once it listens, and captures the
// address.
var readyLine = regexp.MustCompile(`ready to accept connections"? addr=(\S+)`)

// Start runs "serve" for strategy s in env.Dir, on the preferred port if
// it is free, else on any free port (serve picks it and logs it in its
// ready line).
func (k *Kvstore) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	flags, ok := k.args[s.Name]
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", k.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	env, err := env.abs()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	ports := []int{0}
	if k.cfg.Port > 0 {
		ports = []int{k.cfg.Port, 0}
	}
	for _, port := range ports {
		argv := append([]string{k.cfg.Bin, "serve", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", env.Dir}, flags...)
		argv = append(argv, k.cfg.Args...)
		addrs := make(chan string, 1)
		log := newLogTail(func(line string) bool {
			if m := readyLine.FindStringSubmatch(line); m != nil {
				addrs <- m[1]
				return true
			}
			return false
		})
		p, serr := startProc(ctx, k.cfg.Name, argv, env.Dir, log, env.Tracker, true)
		if serr != nil {
			return nil, serr
		}
		timer := time.NewTimer(time.Until(started.Add(env.readyTimeout())))
		select {
		case addr := <-addrs:
			timer.Stop()
			return ready(ctx, p, s, addr, creds{}, kvstoreParams, env, mustOwn, started)
		case <-p.exited:
			err = p.Err() // the preferred port may be taken: try any port
		case <-ctx.Done():
			p.stopWithin(ctx, failedStartGrace)
			return nil, ctx.Err()
		case <-timer.C:
			p.stopWithin(ctx, failedStartGrace)
			return nil, fmt.Errorf("%w: %s logged no ready line within %v%s", ErrNotReady, k.cfg.Name, env.readyTimeout(), log.quote())
		}
		timer.Stop()
	}
	return nil, err
}
