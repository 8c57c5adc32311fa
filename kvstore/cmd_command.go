package kvstore

import (
	"slices"

	"github.com/kvbench/kvbench/pkg/resp"
)

// cmdCommand is COMMAND, COMMAND COUNT | LIST | INFO name ... | DOCS [name ...],
// in Redis 7's reply shapes.
func cmdCommand(c *conn, args [][]byte) {
	if len(args) == 1 {
		names := sortedCommandNames()
		c.out = resp.AppendArray(c.out, len(names))
		for _, n := range names {
			c.out = appendCommandInfo(c.out, commands[n])
		}
		return
	}
	sub := args[1]
	switch {
	case equalFold(sub, "count") && len(args) == 2:
		c.out = resp.AppendInt(c.out, int64(len(commands)))
	case equalFold(sub, "list") && len(args) == 2:
		names := sortedCommandNames()
		c.out = resp.AppendArray(c.out, len(names))
		for _, n := range names {
			c.out = resp.AppendBulkString(c.out, n)
		}
	case equalFold(sub, "info"):
		c.out = resp.AppendArray(c.out, len(args)-2)
		for _, name := range args[2:] {
			if cmd := lookup(name); cmd != nil {
				c.out = appendCommandInfo(c.out, cmd)
			} else {
				c.out = resp.AppendNullArray(c.out)
			}
		}
	case equalFold(sub, "docs"):
		var cmds []*command
		if len(args) == 2 {
			for _, n := range sortedCommandNames() {
				cmds = append(cmds, commands[n])
			}
		}
		for _, name := range args[2:] {
			if cmd := lookup(name); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
		c.out = resp.AppendArray(c.out, 2*len(cmds))
		for _, cmd := range cmds {
			c.out = resp.AppendBulkString(c.out, cmd.name)
			c.out = resp.AppendArray(c.out, 8)
			c.out = resp.AppendBulkString(c.out, "summary")
			c.out = resp.AppendBulkString(c.out, cmd.summary)
			c.out = resp.AppendBulkString(c.out, "since")
			c.out = resp.AppendBulkString(c.out, "1.0.0")
			c.out = resp.AppendBulkString(c.out, "group")
			c.out = resp.AppendBulkString(c.out, cmd.group)
			c.out = resp.AppendBulkString(c.out, "complexity")
			c.out = resp.AppendBulkString(c.out, complexity(cmd))
		}
	case equalFold(sub, "count"), equalFold(sub, "list"):
		c.out = resp.AppendError(c.out, "ERR wrong number of arguments for 'command|"+string(toLower(sub))+"' command")
	default:
		c.out = resp.AppendError(c.out, unknownSubcommand(sub, "command"))
	}
}

func sortedCommandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func complexity(cmd *command) string {
	if cmd.flags&flagFast != 0 {
		return "O(1)"
	}
	return "O(N)"
}

// appendCommandInfo appends one COMMAND entry: name, arity, flags, first
// key, last key, step, ACL categories, tips, key specs, subcommands.
func appendCommandInfo(dst []byte, cmd *command) []byte {
	var flags, cats []string
	for _, f := range []struct {
		bit       cmdFlags
		flag, cat string
	}{
		{flagWrite, "write", "@write"},
		{flagReadonly, "readonly", "@read"},
		{flagAdmin, "admin", "@admin"},
		{flagFast, "fast", "@fast"},
		{flagNoAuth, "no_auth", ""},
	} {
		if cmd.flags&f.bit != 0 {
			flags = append(flags, f.flag)
			if f.cat != "" {
				cats = append(cats, f.cat)
			}
		}
	}
	if cmd.flags&flagFast == 0 {
		cats = append(cats, "@slow")
	}
	cats = append(cats, "@"+cmd.group)
	dst = resp.AppendArray(dst, 10)
	dst = resp.AppendBulkString(dst, cmd.name)
	dst = resp.AppendInt(dst, int64(cmd.arity))
	dst = resp.AppendArray(dst, len(flags))
	for _, f := range flags {
		dst = resp.AppendSimple(dst, f)
	}
	dst = resp.AppendInt(dst, int64(cmd.first))
	dst = resp.AppendInt(dst, int64(cmd.last))
	dst = resp.AppendInt(dst, int64(cmd.step))
	dst = resp.AppendArray(dst, len(cats))
	for _, cat := range cats {
		dst = resp.AppendSimple(dst, cat)
	}
	dst = resp.AppendArray(dst, 0) // tips
	dst = resp.AppendArray(dst, 0) // key specs
	dst = resp.AppendArray(dst, 0) // subcommands
	return dst
}
