package target

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/control"
	"github.com/kvbench/kvbench/pkg/tlsconf"
)

// Placeholders substituted in a command target's command line and strategy
// arguments.
const (
	// PlaceholderPort is the port kvbench chose for the instance.
	PlaceholderPort = "{port}"
	// PlaceholderDir is the instance's fresh directory.
	PlaceholderDir = "{dir}"
	// PlaceholderStrategy is the strategy's name.
	PlaceholderStrategy = "{strategy}"
)

// CommandConfig configures a Command target.
type CommandConfig struct {
	// Name is the target's name (required).
	Name string
	// Command is the server's command line; it must contain {port}
	// (here or in every strategy's Args). {dir} and {strategy} are
	// substituted too, and the strategy's Args appended.
	Command []string
	// SetCmd and GetCmd are the load generator's commands; SET and GET
	// when empty.
	SetCmd, GetCmd string
	// Password, if set, is sent with AUTH (for a server whose command line
	// sets one).
	Password string
	// DB, when positive, is the database every connection selects.
	DB int
	// RESP3 makes every connection switch to RESP3 with HELLO 3.
	RESP3 bool
	// TLS, when set, reaches the server over TLS with this client
	// configuration: its command line makes {port} a TLS port.
	TLS *tls.Config
	// TLSFiles are the settings TLS was made from (Info.TLSFiles).
	TLSFiles tlsconf.Options
	// Baseline names the strategy whose persistence is "none".
	Baseline string
	// Strategies lists the strategies, in order (at least one). A
	// strategy's Persistence, when empty, is "none" for the baseline and
	// otherwise derived from Redis-style arguments (--appendonly yes and
	// --appendfsync X give X, a non-empty --save gives rdb), else its name.
	// Its Expect, when nil, is derived from the --save, --appendonly and
	// --appendfsync arguments it passes.
	Strategies []Strategy
	// Defaults names the strategies run by default; all of them when nil.
	Defaults []string
	// PersistJobs are the commands that set off the server's persistence
	// jobs (ParsePersistJobs); none when nil.
	PersistJobs map[string][]string
}

// Command is a server started from a command line, on a free port chosen
// by kvbench, in a fresh directory per instance.
type Command struct {
	cfg  CommandConfig
	desc Desc
}

// NewCommand returns the command target.
func NewCommand(cfg CommandConfig) (*Command, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("command target: a name is required")
	}
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, fmt.Errorf("%s: a command is required", cfg.Name)
	}
	if cfg.DB < 0 {
		return nil, fmt.Errorf("%s: db %d: want a database number >= 0", cfg.Name, cfg.DB)
	}
	strategies, err := labelStrategies(cfg.Name, cfg.Baseline, cfg.Strategies, true)
	if err != nil {
		return nil, err
	}
	for _, s := range strategies {
		if !slices.ContainsFunc(append(slices.Clone(cfg.Command), s.Args...), func(a string) bool { return strings.Contains(a, PlaceholderPort) }) {
			return nil, fmt.Errorf("%s: strategy %s: the command line has no %s: kvbench must choose the port", cfg.Name, s.Name, PlaceholderPort)
		}
	}
	cfg.Strategies = strategies
	desc, err := describe(cfg.Name, KindCommand, cfg.SetCmd, cfg.GetCmd, cfg.Password, strategies, cfg.Defaults)
	if err != nil {
		return nil, err
	}
	desc.DB, desc.RESP3, desc.PersistJobs = cfg.DB, cfg.RESP3, cfg.PersistJobs
	return &Command{cfg: cfg, desc: desc}, nil
}

// describe builds a Desc, with SET and GET for empty commands, checking
// the default strategies.
func describe(name string, kind Kind, setCmd, getCmd, password string, strategies []Strategy, defaults []string) (Desc, error) {
	d := Desc{Name: name, Kind: kind, SetCmd: cmp.Or(setCmd, "SET"), GetCmd: cmp.Or(getCmd, "GET"), Password: password, Strategies: strategies}
	if defaults == nil {
		for _, s := range strategies {
			d.Defaults = append(d.Defaults, s.Name)
		}
		return d, nil
	}
	sel, unknown := d.Select(defaults)
	if len(unknown) > 0 {
		return d, fmt.Errorf("%s: %w %s", name, ErrUnknownStrategy, strings.Join(unknown, ", "))
	}
	for _, s := range sel {
		d.Defaults = append(d.Defaults, s.Name)
	}
	return d, nil
}

// labelStrategies checks user-named strategies and fills in their
// persistence (and, when derive is set, their expectations from their
// arguments).
func labelStrategies(target, baseline string, in []Strategy, derive bool) ([]Strategy, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%s: at least one strategy is required", target)
	}
	out := make([]Strategy, 0, len(in))
	seen := make(map[string]bool)
	for _, s := range in {
		if s.Name == "" || strings.ContainsAny(s.Name, " \t\n,") {
			return nil, fmt.Errorf("%s: strategy name %q: want a non-empty word without commas", target, s.Name)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("%s: strategy %s given twice", target, s.Name)
		}
		seen[s.Name] = true
		s.Args = slices.Clone(s.Args)
		s.Expect = maps.Clone(s.Expect)
		if derive && s.Expect == nil {
			s.Expect = expectFromArgs(s.Args)
		}
		switch {
		case s.Name == baseline && s.Persistence != "" && s.Persistence != "none":
			return nil, fmt.Errorf("%s: strategy %s is the baseline but its persistence is %q", target, s.Name, s.Persistence)
		case s.Name == baseline:
			s.Persistence = "none"
		case s.Persistence == "":
			s.Persistence = persistenceFromArgs(s.Args)
			if s.Persistence == "" || (s.Persistence == "none" && baseline != "") {
				s.Persistence = s.Name
			}
		}
		out = append(out, s)
	}
	if baseline != "" && !seen[baseline] {
		return nil, fmt.Errorf("%s: baseline %s is not one of its strategies", target, baseline)
	}
	return out, nil
}

// expectFromArgs reads Redis-style persistence flags.
func expectFromArgs(args []string) map[string]string {
	var m map[string]string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--save", "--appendonly", "--appendfsync":
			if m == nil {
				m = make(map[string]string)
			}
			m[args[i][2:]] = args[i+1]
			i++
		}
	}
	return m
}

// persistenceFromArgs is the durability class Redis-style flags describe,
// or "" when they say nothing.
func persistenceFromArgs(args []string) string {
	e := expectFromArgs(args)
	switch {
	case e["appendonly"] == "yes" && e["appendfsync"] != "":
		return e["appendfsync"]
	case e["appendonly"] == "yes":
		return "everysec"
	case e["save"] != "":
		return "rdb"
	case len(e) > 0:
		return "none"
	}
	return ""
}

// Desc describes the target.
func (c *Command) Desc() Desc { return c.desc }

// Config is the configuration the target was made with, its defaults
// filled in.
func (c *Command) Config() CommandConfig { return c.cfg }

// Start runs the command line for strategy s on a free port.
func (c *Command) Start(ctx context.Context, s Strategy, env Env) (Instance, error) {
	s, ok := c.desc.Strategy(s.Name)
	if !ok {
		return nil, fmt.Errorf("%s: %w %q", c.cfg.Name, ErrUnknownStrategy, s.Name)
	}
	env, err := env.abs()
	if err != nil {
		return nil, err
	}
	params := configParams(redisParams, s)
	// Its shutdown may matter beyond its directory (a wrapper stopping a
	// container, say): it gets SIGTERM.
	return spawnOnFreePort(ctx, c.cfg.Name, s, env, params, mayOwn, false, creds{Options: control.Options{Password: c.cfg.Password, DB: c.cfg.DB, RESP3: c.cfg.RESP3, TLS: c.cfg.TLS}, files: c.cfg.TLSFiles}, func(port int) ([]string, error) {
		r := strings.NewReplacer(PlaceholderPort, strconv.Itoa(port), PlaceholderDir, env.Dir, PlaceholderStrategy, s.Name)
		var argv []string
		for _, a := range append(slices.Clone(c.cfg.Command), s.Args...) {
			argv = append(argv, r.Replace(a))
		}
		return argv, nil
	})
}
