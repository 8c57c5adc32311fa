package kvstore

import (
	"path"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/pkg/resp"
)

// configParam is one CONFIG GET parameter.
type configParam struct {
	name string
	get  func(s *Server) string
}

var configParams = []configParam{
	{"bind", func(s *Server) string { host, _, _ := strings.Cut(s.cfg.Addr, ":"); return host }},
	{"port", func(s *Server) string { return s.port() }},
	{"maxclients", func(s *Server) string { return strconv.Itoa(s.cfg.MaxClients) }},
	{"requirepass", func(s *Server) string { return s.cfg.RequirePass }},
	{"proto-max-bulk-len", func(s *Server) string { return strconv.FormatInt(s.limits().MaxBulkLen, 10) }},
	{"client-query-buffer-limit", func(s *Server) string { return strconv.FormatInt(s.limits().MaxQueryBuffer, 10) }},
	{"databases", func(*Server) string { return "1" }},
	{"maxmemory", func(*Server) string { return "0" }},
	{"save", func(*Server) string { return "" }},
	{"appendonly", func(s *Server) string { return yesNo(s.cfg.Persist != PersistNone) }},
	{"appendfsync", appendfsync},
	{"dir", func(s *Server) string { return s.cfg.Dir }},
	{"auto-aof-rewrite-percentage", func(s *Server) string { return strconv.Itoa(max(s.cfg.AutoRewritePercentage, 0)) }},
	{"auto-aof-rewrite-min-size", func(s *Server) string { return strconv.FormatInt(s.cfg.AutoRewriteMinSize, 10) }},
	{"kvstore-persist", func(s *Server) string { return s.cfg.Persist }},
	{"kvstore-alloc", func(s *Server) string { return s.cfg.Alloc }},
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
	case equalFold(sub, "set"):
		c.out = resp.AppendError(c.out, "ERR CONFIG SET is not supported: restart kvbench serve with the setting as a flag")
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

func (st *stats) reset() {
	st.commands.Store(0)
	st.connections.Store(0)
	st.rejected.Store(0)
	st.hits.Store(0)
	st.misses.Store(0)
	st.protoErrors.Store(0)
	st.netOut.Store(0)
}
