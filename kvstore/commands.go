package kvstore

import (
	"strings"
)

// lockMode is how much of the database lock a command needs.
type lockMode uint8

const (
	lockNone  lockMode = iota // connection state and server counters only
	lockRead                  // reads the dataset
	lockWrite                 // changes the dataset
)

// cmdFlags describe a command, for dispatch and for COMMAND's reply.
type cmdFlags uint8

const (
	flagWrite    cmdFlags = 1 << iota // changes the dataset
	flagReadonly                      // reads the dataset
	flagAdmin                         // server administration
	flagFast                          // O(1) or O(log n)
	flagNoAuth                        // allowed before AUTH
	flagDenyOOM                       // may take memory: refused past maxmemory (Redis's denyoom)
)

// command is one entry of the command table.
type command struct {
	name  string // lower case
	arity int    // Redis's convention: n exactly, or -n for at least n (name included)
	max   int    // most arguments (name included), 0 for no limit
	flags cmdFlags
	lock  lockMode
	// Key positions, for COMMAND: first and last key argument and the step
	// between keys (0 0 0 for commands without keys; last -1 is the end).
	first, last, step int
	group             string // COMMAND DOCS group
	summary           string // COMMAND DOCS summary
	fn                func(c *conn, args [][]byte)
	// keys is the table that args[1] is looked up in, for prefetching a
	// batch; nil when there is nothing to prefetch.
	keys func(db *DB, args [][]byte) table
	// index is the command's place in commandList, where its
	// commandstats are kept (cmdStats).
	index int
}

func (cmd *command) arityOK(n int) bool {
	if cmd.arity >= 0 {
		return n == cmd.arity
	}
	return n >= -cmd.arity && (cmd.max == 0 || n <= cmd.max)
}

// maxNameLen is the longest command name; longer names are unknown.
const maxNameLen = 32

// commands is the command table, by lower-case name. It is filled by init
// from commandList so that handlers may refer to the table (COMMAND does).
var commands map[string]*command

func init() {
	commands = make(map[string]*command, len(commandList))
	for i := range commandList {
		cmd := &commandList[i]
		cmd.index = i
		if len(cmd.name) > maxNameLen || cmd.name != strings.ToLower(cmd.name) {
			panic("kvstore: bad command name " + cmd.name)
		}
		commands[cmd.name] = cmd
	}
}

// lookup finds a command by name, case-insensitively, without allocating.
func lookup(name []byte) *command {
	if len(name) > maxNameLen {
		return nil
	}
	var buf [maxNameLen]byte
	for i, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return commands[string(buf[:len(name)])]
}

var commandList = []command{
	// Connection and server.
	{name: "ping", arity: -1, max: 2, flags: flagFast, group: "connection", summary: "Returns the server's liveliness response.", fn: cmdPing},
	{name: "echo", arity: 2, flags: flagFast, group: "connection", summary: "Returns the given string.", fn: cmdEcho},
	{name: "quit", arity: -1, flags: flagFast | flagNoAuth, group: "connection", summary: "Closes the connection.", fn: cmdQuit},
	{name: "select", arity: 2, flags: flagFast, group: "connection", summary: "Changes the selected database (only 0 exists).", fn: cmdSelect},
	{name: "auth", arity: -2, max: 3, flags: flagFast | flagNoAuth, group: "connection", summary: "Authenticates the connection.", fn: cmdAuth},
	{name: "hello", arity: -1, flags: flagFast | flagNoAuth, group: "connection", summary: "Handshakes with the server (RESP2 only).", fn: cmdHello},
	{name: "client", arity: -2, group: "connection", summary: "A container for client connection commands.", fn: cmdClient},
	{name: "command", arity: -1, lock: lockNone, group: "server", summary: "Returns detailed information about commands.", fn: cmdCommand},
	{name: "info", arity: -1, lock: lockRead, group: "server", summary: "Returns information and statistics about the server.", fn: cmdInfo},
	{name: "config", arity: -2, flags: flagAdmin, lock: lockRead, group: "server", summary: "CONFIG GET answers; settings are changed by restarting with flags.", fn: cmdConfig},
	{name: "dbsize", arity: 1, flags: flagReadonly | flagFast, lock: lockRead, group: "server", summary: "Returns the number of keys in every keyspace.", fn: cmdDBSize},
	{name: "flushall", arity: -1, max: 2, flags: flagWrite, lock: lockWrite, group: "server", summary: "Removes all keys from every keyspace.", fn: cmdFlushAll},
	{name: "flushdb", arity: -1, max: 2, flags: flagWrite, lock: lockWrite, group: "server", summary: "Removes all keys from every keyspace.", fn: cmdFlushAll},
	{name: "shutdown", arity: -1, max: 2, flags: flagAdmin, lock: lockWrite, group: "server", summary: "Stops the server (SAVE rewrites the log first).", fn: cmdShutdown},
	{name: "bgrewriteaof", arity: 1, flags: flagAdmin, lock: lockWrite, group: "server", summary: "Compacts the operation log in the background.", fn: cmdBGRewriteAOF},
	{name: "cluster", arity: -2, group: "cluster", summary: "CLUSTER SLOTS, SHARDS, NODES, INFO, MYID and KEYSLOT, from --cluster-config.", fn: cmdCluster},
	{name: "readonly", arity: 1, flags: flagFast, group: "cluster", summary: "Accepted for cluster clients; every node is a master.", fn: cmdOK},
	{name: "readwrite", arity: 1, flags: flagFast, group: "cluster", summary: "Accepted for cluster clients; every node is a master.", fn: cmdOK},
	{name: "save", arity: 1, flags: flagAdmin, lock: lockWrite, group: "server", summary: "Compacts the operation log and waits for it.", fn: cmdSave},
	{name: "bgsave", arity: -1, max: 2, flags: flagAdmin, lock: lockWrite, group: "server", summary: "Writes a snapshot of the dataset (dump.kvb) in the background.", fn: cmdBGSave},
	{name: "lastsave", arity: 1, flags: flagFast, lock: lockNone, group: "server", summary: "Returns the Unix time of the last snapshot written.", fn: cmdLastSave},

	// Redis strings.
	{name: "get", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "string", summary: "Returns the string value of a key.", fn: cmdGet, keys: stringKeys},
	{name: "set", arity: -3, flags: flagWrite | flagDenyOOM, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Sets the string value of a key (NX, XX, GET).", fn: cmdSet, keys: stringKeys},
	{name: "del", arity: -2, flags: flagWrite, lock: lockWrite, first: 1, last: -1, step: 1, group: "keyspace", summary: "Deletes one or more keys.", fn: cmdDel},
	{name: "exists", arity: -2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: -1, step: 1, group: "keyspace", summary: "Counts how many of the given keys exist.", fn: cmdExists},
	{name: "mod", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Replaces the value of an existing string key.", fn: cmdMod, keys: stringKeys},
	{name: "exist", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "keyspace", summary: "Returns 1 if the key exists, 0 if not.", fn: cmdExist},
	{name: "incr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Increments the integer value of a key by one.", fn: cmdIncr, keys: stringKeys},
	{name: "decr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Decrements the integer value of a key by one.", fn: cmdDecr, keys: stringKeys},
	{name: "incrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Increments the integer value of a key by a number.", fn: cmdIncrBy, keys: stringKeys},
	{name: "decrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Decrements the integer value of a key by a number.", fn: cmdDecrBy, keys: stringKeys},
	{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM, lock: lockWrite, first: 1, last: -1, step: 2, group: "string", summary: "Sets the string values of one or more keys.", fn: cmdMSet},
	{name: "mget", arity: -2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: -1, step: 1, group: "string", summary: "Returns the string values of one or more keys.", fn: cmdMGet},
	{name: "strlen", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "string", summary: "Returns the length of a string value.", fn: cmdStrlen, keys: stringKeys},
	{name: "append", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "string", summary: "Appends a string to the value of a key.", fn: cmdAppend, keys: stringKeys},

	// The kvstore's hash engine (two-argument HSET, one-argument HGET/HDEL)
	// shares HSET/HGET/HDEL with Redis hashes (more arguments): the
	// handlers dispatch on the argument count.
	{name: "hset", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "hash", summary: "HSET key value: inserts into the hash engine; HSET key field value...: sets Redis hash fields.", fn: cmdHSet, keys: engineKeys},
	{name: "hget", arity: -2, max: 3, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "hash", summary: "HGET key: reads the hash engine; HGET key field: reads a Redis hash field.", fn: cmdHGet, keys: engineKeys},
	{name: "hdel", arity: -2, flags: flagWrite | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "hash", summary: "HDEL key: deletes from the hash engine; HDEL key field...: deletes Redis hash fields.", fn: cmdHDel, keys: engineKeys},
	{name: "hmod", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "hash", summary: "Replaces the value of an existing hash-engine key.", fn: cmdHMod, keys: hashKeys},
	{name: "hexist", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "hash", summary: "Returns 1 if the hash-engine key exists, 0 if not.", fn: cmdHExist, keys: hashKeys},
	{name: "hlen", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "hash", summary: "Returns the number of fields in a Redis hash.", fn: cmdHLen},
	{name: "hgetall", arity: 2, flags: flagReadonly, lock: lockRead, first: 1, last: 1, step: 1, group: "hash", summary: "Returns all fields and values of a Redis hash.", fn: cmdHGetAll},
	{name: "hexists", arity: 3, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "hash", summary: "Returns 1 if a Redis hash field exists, 0 if not.", fn: cmdHExists},

	// The kvstore's ordered engine.
	{name: "rset", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "generic", summary: "Inserts a key into the ordered engine; -EXIST if it is there.", fn: cmdRSet, keys: treeKeys},
	{name: "rget", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "generic", summary: "Returns the value of an ordered-engine key.", fn: cmdRGet, keys: treeKeys},
	{name: "rdel", arity: 2, flags: flagWrite | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "generic", summary: "Deletes an ordered-engine key.", fn: cmdRDel, keys: treeKeys},
	{name: "rmod", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, lock: lockWrite, first: 1, last: 1, step: 1, group: "generic", summary: "Replaces the value of an existing ordered-engine key.", fn: cmdRMod, keys: treeKeys},
	{name: "rexist", arity: 2, flags: flagReadonly | flagFast, lock: lockRead, first: 1, last: 1, step: 1, group: "generic", summary: "Returns 1 if the ordered-engine key exists, 0 if not.", fn: cmdRExist, keys: treeKeys},
}

func stringKeys(db *DB, _ [][]byte) table { return db.strs }
func hashKeys(db *DB, _ [][]byte) table   { return db.hash }
func treeKeys(db *DB, _ [][]byte) table   { return db.tree }

// engineKeys is the hash engine for the two-argument HSET and one-argument
// HGET and HDEL; Redis hashes (more arguments) are not prefetched.
func engineKeys(db *DB, args [][]byte) table {
	if len(args) == 3 && equalFold(args[0], "hset") || len(args) == 2 {
		return db.hash
	}
	return nil
}

// Error replies shared by several commands.
const (
	errWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInteger  = "ERR value is not an integer or out of range"
	errOverflow    = "ERR increment or decrement would overflow"
	errSyntax      = "ERR syntax error"
	errExist       = "EXIST key already exists"
	errNoExist     = "NOEXIST key does not exist"
	errNoPassword  = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errWrongPass   = "WRONGPASS invalid username-password pair or user is disabled."
	errNoExpiry    = "ERR kvstore keeps no expirations: EX, PX, EXAT, PXAT and KEEPTTL are not supported"
	errDBIndex     = "ERR DB index is out of range"
	errClientName  = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoProto     = "NOPROTO unsupported protocol version"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
)

func wrongArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// unknownCommand words the error as Redis 7 does, quoting at most 128 bytes
// of the name and of the arguments.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	budget := 128
	for _, a := range args[1:] {
		if budget <= 0 {
			break
		}
		a = truncate(a, budget)
		budget -= len(a)
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
	}
	return b.String()
}

func unknownSubcommand(sub []byte, cmd string) string {
	return "ERR unknown subcommand '" + string(truncate(sub, 128)) + "'. Try " + strings.ToUpper(cmd) + " HELP."
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
