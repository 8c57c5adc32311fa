package kvstore

import (
	"errors"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/pkg/resp"
)

// configParam is one CONFIG GET parameter, and CONFIG SET's if set is
// not nil: it checks and applies a value, or says what is wrong with it.
type configParam struct {
	name string
	get  func(s *Server) string
	set  func(s *Server, v string) error
}

var configParams = []configParam{
	{"bind", func(s *Server) string { host, _, _ := strings.Cut(s.cfg.Addr, ":"); return host }, nil},
	{"port", func(s *Server) string { return s.port() }, nil},
	{"maxclients", func(s *Server) string { return strconv.Itoa(s.cfg.MaxClients) }, nil},
	{"requirepass", func(s *Server) string { return s.cfg.RequirePass }, nil},
	{"protected-mode", func(s *Server) string { return yesNo(s.protected.Load()) }, setProtectedMode},
	{"timeout", func(s *Server) string { return strconv.FormatInt(s.timeout.Load()/int64(time.Second), 10) }, setTimeout},
	{"proto-max-bulk-len", func(s *Server) string { return strconv.FormatInt(s.limits().MaxBulkLen, 10) }, nil},
	{"client-query-buffer-limit", func(s *Server) string { return strconv.FormatInt(s.limits().MaxQueryBuffer, 10) }, nil},
	{"databases", func(*Server) string { return "1" }, nil},
	{"maxmemory", func(s *Server) string { return strconv.FormatInt(s.mem.max.Load(), 10) }, setMaxMemory},
	{"maxmemory-policy", func(s *Server) string { return s.cfg.MaxMemoryPolicy }, setMaxMemoryPolicy},
	{"save", func(*Server) string { return "" }, nil},
	{"appendonly", func(s *Server) string { return yesNo(s.cfg.Persist != PersistNone) }, nil},
	{"appendfsync", appendfsync, nil},
	{"dir", func(s *Server) string { return s.cfg.Dir }, nil},
	{"auto-aof-rewrite-percentage", func(s *Server) string { return strconv.Itoa(max(s.cfg.AutoRewritePercentage, 0)) }, nil},
	{"auto-aof-rewrite-min-size", func(s *Server) string { return strconv.FormatInt(s.cfg.AutoRewriteMinSize, 10) }, nil},
	{"kvstore-persist", func(s *Server) string { return s.cfg.Persist }, nil},
	{"kvstore-alloc", func(s *Server) string { return s.cfg.Alloc }, nil},
}

// appendfsync answers as Redis would: its default, everysec, when there is
// no log.
func appendfsync(s *Server) string {
	if s.cfg.Persist == PersistNone {
		return PersistEverysec
	}
	return s.cfg.Persist
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (s *Server) limits() resp.Limits { return s.cfg.Limits.WithDefaults() }

// cmdConfig is CONFIG GET pattern [pattern ...] and CONFIG RESETSTAT.
// Settings are flags of kvbench serve; CONFIG SET refuses.
func cmdConfig(c *conn, args [][]byte) {
	sub := args[1]
	switch {
	case equalFold(sub, "get") && len(args) >= 3:
		var pairs []string
		for _, p := range configParams {
			for _, pat := range args[2:] {
				if ok, _ := path.Match(string(toLower(pat)), p.name); ok {
					pairs = append(pairs, p.name, p.get(c.s))
					break
				}
			}
		}
		c.out = resp.AppendArray(c.out, len(pairs))
		for _, s := range pairs {
			c.out = resp.AppendBulkString(c.out, s)
		}
	case equalFold(sub, "set") && len(args) >= 4 && len(args)%2 == 0:
		c.out = configSet(c.s, args[2:], c.out)
	case equalFold(sub, "set"):
		c.out = resp.AppendError(c.out, "ERR wrong number of arguments for 'config|set' command")
	case equalFold(sub, "resetstat") && len(args) == 2:
		c.s.stats.reset()
		c.s.cmdStats.reset()
		c.out = resp.AppendOK(c.out)
	case equalFold(sub, "get"), equalFold(sub, "resetstat"):
		c.out = resp.AppendError(c.out, "ERR wrong number of arguments for 'config|"+string(toLower(sub))+"' command")
	default:
		c.out = resp.AppendError(c.out, unknownSubcommand(sub, "config"))
	}
}

// configSet applies CONFIG SET's parameter-value pairs, in order, once
// every name is known and settable, and appends the reply to out.
func configSet(s *Server, pairs [][]byte, out []byte) []byte {
	type change struct {
		name, val string
		set       func(s *Server, v string) error
	}
	var changes []change
	for i := 0; i < len(pairs); i += 2 {
		name := string(toLower(truncate(pairs[i], 128)))
		j := slices.IndexFunc(configParams, func(p configParam) bool { return p.name == name })
		switch {
		case j < 0:
			return resp.AppendError(out, "ERR Unknown option or number of arguments for CONFIG SET - '"+name+"'")
		case configParams[j].set == nil:
			return resp.AppendError(out, "ERR CONFIG SET is not supported for '"+name+"': restart kvbench serve with the setting as a flag")
		}
		changes = append(changes, change{name, string(pairs[i+1]), configParams[j].set})
	}
	for _, ch := range changes {
		if err := ch.set(s, ch.val); err != nil {
			return resp.AppendError(out, "ERR CONFIG SET failed (possibly related to argument '"+ch.name+"') - "+err.Error())
		}
	}
	return resp.AppendOK(out)
}

func setProtectedMode(s *Server, v string) error {
	switch strings.ToLower(v) {
	case "yes":
		s.protected.Store(true)
	case "no":
		s.protected.Store(false)
	default:
		return errors.New("argument must be 'yes' or 'no'")
	}
	return nil
}

func setTimeout(s *Server, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return errors.New("argument must be a whole number of seconds, 0 for none")
	}
	s.timeout.Store(n * int64(time.Second))
	return nil
}

func setMaxMemory(s *Server, v string) error {
	n, err := ParseMemory(v)
	if err != nil {
		return err
	}
	s.mem.setMax(n)
	return nil
}

func setMaxMemoryPolicy(s *Server, v string) error {
	if strings.ToLower(v) != PolicyNoEviction {
		return errors.New("the only policy is " + PolicyNoEviction + ": writes past maxmemory are refused")
	}
	return nil
}

func (st *stats) reset() {
	st.commands.Store(0)
	st.connections.Store(0)
	st.rejected.Store(0)
	st.hits.Store(0)
	st.misses.Store(0)
	st.protoErrors.Store(0)
	st.netOut.Store(0)
}
