package kvstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// wantErr checks that err is a server error reply starting with prefix.
func wantErr(t *testing.T, what string, err error, prefix string) {
	t.Helper()
	var re redis.Error
	if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("%s: err = %v, want an error reply starting with %q", what, err, prefix)
	}
}

// must(f())(t, what) fails the test if f returned an error.
func must[T any](v T, err error) func(*testing.T, string) T {
	return func(t *testing.T, what string) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func TestStrings(t *testing.T) {
	srv := startServer(t, Config{})
	rdb := newClient(t, srv)
	c := ctx(t)

	if got := must(rdb.Set(c, "k", "v1", 0).Result())(t, "SET"); got != "OK" {
		t.Fatalf("SET = %q", got)
	}
	must(rdb.Set(c, "k", "v2", 0).Result())(t, "SET overwrite")
	if got := must(rdb.Get(c, "k").Result())(t, "GET"); got != "v2" {
		t.Fatalf("GET = %q, want v2", got)
	}
	if _, err := rdb.Get(c, "missing").Result(); err != redis.Nil {
		t.Fatalf("GET missing: %v, want nil", err)
	}
	if ok := must(rdb.SetNX(c, "k", "x", 0).Result())(t, "SET NX"); ok {
		t.Fatal("SET NX on an existing key succeeded")
	}
	if ok := must(rdb.SetXX(c, "new", "x", 0).Result())(t, "SET XX"); ok {
		t.Fatal("SET XX on a missing key succeeded")
	}
	if got := must(rdb.SetArgs(c, "k", "v3", redis.SetArgs{Get: true}).Result())(t, "SET GET"); got != "v2" {
		t.Fatalf("SET GET = %q, want v2", got)
	}
	wantErr(t, "SET EX", rdb.Set(c, "k", "v", 10e9).Err(), "ERR kvstore keeps no expirations")
	wantErr(t, "SET junk", rdb.Do(c, "SET", "k", "v", "junk").Err(), "ERR syntax error")
	wantErr(t, "SET NX XX", rdb.Do(c, "SET", "k", "v", "NX", "XX").Err(), "ERR syntax error")

	// Binary-safe values.
	bin := "a\r\nb\x00c\xff"
	must(rdb.Set(c, "bin", bin, 0).Result())(t, "SET bin")
	if got := must(rdb.Get(c, "bin").Result())(t, "GET bin"); got != bin {
		t.Fatalf("GET bin = %q", got)
	}
	must(rdb.Set(c, "empty", "", 0).Result())(t, "SET empty")
	if got, err := rdb.Get(c, "empty").Result(); err != nil || got != "" {
		t.Fatalf("GET empty = %q, %v; want an empty string, not nil", got, err)
	}

	if n := must(rdb.Exists(c, "k", "k", "missing", "bin").Result())(t, "EXISTS"); n != 3 {
		t.Fatalf("EXISTS = %d, want 3", n)
	}
	if n := must(rdb.Do(c, "EXIST", "k").Int())(t, "EXIST"); n != 1 {
		t.Fatalf("EXIST = %d", n)
	}
	if n := must(rdb.Do(c, "exist", "missing").Int())(t, "EXIST missing"); n != 0 {
		t.Fatalf("EXIST missing = %d", n)
	}
	if n := must(rdb.Del(c, "k", "bin", "missing").Result())(t, "DEL"); n != 2 {
		t.Fatalf("DEL = %d, want 2", n)
	}

	// MOD changes existing keys only.
	wantErr(t, "MOD missing", rdb.Do(c, "MOD", "k", "v").Err(), "NOEXIST")
	must(rdb.Set(c, "k", "v", 0).Result())(t, "SET")
	if got := must(rdb.Do(c, "MOD", "k", "w").Text())(t, "MOD"); got != "OK" {
		t.Fatalf("MOD = %q", got)
	}
	if got := must(rdb.Get(c, "k").Result())(t, "GET"); got != "w" {
		t.Fatalf("GET after MOD = %q", got)
	}

	// Counters.
	if n := must(rdb.Incr(c, "n").Result())(t, "INCR"); n != 1 {
		t.Fatalf("INCR = %d", n)
	}
	if n := must(rdb.IncrBy(c, "n", 41).Result())(t, "INCRBY"); n != 42 {
		t.Fatalf("INCRBY = %d", n)
	}
	if n := must(rdb.Decr(c, "n").Result())(t, "DECR"); n != 41 {
		t.Fatalf("DECR = %d", n)
	}
	if n := must(rdb.DecrBy(c, "n", 50).Result())(t, "DECRBY"); n != -9 {
		t.Fatalf("DECRBY = %d", n)
	}
	wantErr(t, "INCR text", rdb.Incr(c, "k").Err(), "ERR value is not an integer or out of range")
	wantErr(t, "INCRBY text", rdb.Do(c, "INCRBY", "n", "1.5").Err(), "ERR value is not an integer")
	must(rdb.Set(c, "z", "007", 0).Result())(t, "SET")
	wantErr(t, "INCR leading zeros", rdb.Incr(c, "z").Err(), "ERR value is not an integer")
	must(rdb.Set(c, "max", "9223372036854775807", 0).Result())(t, "SET")
	wantErr(t, "INCR overflow", rdb.Incr(c, "max").Err(), "ERR increment or decrement would overflow")
	wantErr(t, "DECRBY min", rdb.Do(c, "DECRBY", "n", "-9223372036854775808").Err(), "ERR value is not an integer")

	// MSET, MGET, STRLEN, APPEND.
	must(rdb.MSet(c, "a", "1", "b", "22").Result())(t, "MSET")
	wantErr(t, "MSET odd", rdb.Do(c, "MSET", "a", "1", "b").Err(), "ERR wrong number of arguments for 'mset' command")
	vals := must(rdb.MGet(c, "a", "missing", "b").Result())(t, "MGET")
	if len(vals) != 3 || vals[0] != "1" || vals[1] != nil || vals[2] != "22" {
		t.Fatalf("MGET = %q", vals)
	}
	if n := must(rdb.StrLen(c, "b").Result())(t, "STRLEN"); n != 2 {
		t.Fatalf("STRLEN = %d", n)
	}
	if n := must(rdb.StrLen(c, "missing").Result())(t, "STRLEN missing"); n != 0 {
		t.Fatalf("STRLEN missing = %d", n)
	}
	for i, want := range []int64{3, 6, 9} {
		if n := must(rdb.Append(c, "app", "abc").Result())(t, "APPEND"); n != want {
			t.Fatalf("APPEND %d = %d, want %d", i, n, want)
		}
	}
	if got := must(rdb.Get(c, "app").Result())(t, "GET app"); got != "abcabcabc" {
		t.Fatalf("GET after APPEND = %q", got)
	}
}

func TestEngines(t *testing.T) {
	srv := startServer(t, Config{})
	rdb := newClient(t, srv)
	c := ctx(t)
	for _, p := range []string{"H", "R"} {
		t.Run(p, func(t *testing.T) {
			if got := must(rdb.Do(c, p+"SET", "k", "v").Text())(t, p+"SET"); got != "OK" {
				t.Fatalf("%sSET = %q", p, got)
			}
			wantErr(t, p+"SET again", rdb.Do(c, p+"SET", "k", "other").Err(), "EXIST")
			if got := must(rdb.Do(c, p+"GET", "k").Text())(t, p+"GET"); got != "v" {
				t.Fatalf("%sGET after a refused %sSET = %q, want v", p, p, got)
			}
			if err := rdb.Do(c, p+"GET", "missing").Err(); err != redis.Nil {
				t.Fatalf("%sGET missing: %v, want nil", p, err)
			}
			wantErr(t, p+"MOD missing", rdb.Do(c, p+"MOD", "missing", "v").Err(), "NOEXIST")
			must(rdb.Do(c, p+"MOD", "k", "w").Text())(t, p+"MOD")
			if got := must(rdb.Do(c, strings.ToLower(p)+"get", "k").Text())(t, p+"GET"); got != "w" {
				t.Fatalf("%sGET after %sMOD = %q", p, p, got)
			}
			for _, x := range []struct {
				cmd, key string
				want     int
			}{{"EXIST", "k", 1}, {"EXIST", "missing", 0}, {"DEL", "k", 1}, {"DEL", "k", 0}, {"EXIST", "k", 0}} {
				if n := must(rdb.Do(c, p+x.cmd, x.key).Int())(t, p+x.cmd); n != x.want {
					t.Errorf("%s%s %s = %d, want %d", p, x.cmd, x.key, n, x.want)
				}
			}
			wantErr(t, p+"SET arity", rdb.Do(c, p+"SET", "k").Err(), "ERR wrong number of arguments")
		})
	}
	// Each engine is a keyspace of its own.
	rdb.Do(c, "HSET", "same", "hash")
	rdb.Do(c, "RSET", "same", "tree")
	rdb.Set(c, "same", "string", 0)
	for cmd, want := range map[string]string{"HGET": "hash", "RGET": "tree", "GET": "string"} {
		if got := must(rdb.Do(c, cmd, "same").Text())(t, cmd); got != want {
			t.Errorf("%s same = %q, want %q", cmd, got, want)
		}
	}
	if n := must(rdb.DBSize(c).Result())(t, "DBSIZE"); n != 3 {
		t.Fatalf("DBSIZE = %d, want 3 (one key in each keyspace)", n)
	}
}

func TestRedisHashes(t *testing.T) {
	srv := startServer(t, Config{})
	rdb := newClient(t, srv)
	c := ctx(t)
	if n := must(rdb.HSet(c, "h", "f1", "v1", "f2", "v2").Result())(t, "HSET"); n != 2 {
		t.Fatalf("HSET = %d, want 2", n)
	}
	if n := must(rdb.HSet(c, "h", "f1", "x", "f3", "v3").Result())(t, "HSET again"); n != 1 {
		t.Fatalf("HSET again = %d, want 1", n)
	}
	if got := must(rdb.HGet(c, "h", "f1").Result())(t, "HGET"); got != "x" {
		t.Fatalf("HGET = %q", got)
	}
	if err := rdb.HGet(c, "h", "nope").Err(); err != redis.Nil {
		t.Fatalf("HGET missing field: %v", err)
	}
	if n := must(rdb.HLen(c, "h").Result())(t, "HLEN"); n != 3 {
		t.Fatalf("HLEN = %d", n)
	}
	all := must(rdb.HGetAll(c, "h").Result())(t, "HGETALL")
	if len(all) != 3 || all["f2"] != "v2" {
		t.Fatalf("HGETALL = %v", all)
	}
	if ok := must(rdb.HExists(c, "h", "f3").Result())(t, "HEXISTS"); !ok {
		t.Fatal("HEXISTS f3 = false")
	}
	if n := must(rdb.HDel(c, "h", "f1", "f2", "nope").Result())(t, "HDEL"); n != 2 {
		t.Fatalf("HDEL = %d", n)
	}
	wantErr(t, "HSET odd", rdb.Do(c, "HSET", "h", "f", "v", "g").Err(), "ERR wrong number of arguments for 'hset' command")
	wantErr(t, "HGET arity", rdb.Do(c, "HGET", "h", "f", "g").Err(), "ERR wrong number of arguments for 'hget' command")

	// Strings and Redis hashes share the keyspace.
	rdb.Set(c, "s", "v", 0)
	wantErr(t, "HSET on string", rdb.HSet(c, "s", "f", "v").Err(), "WRONGTYPE")
	wantErr(t, "HGET on string", rdb.HGet(c, "s", "f").Err(), "WRONGTYPE")
	wantErr(t, "HLEN on string", rdb.HLen(c, "s").Err(), "WRONGTYPE")
	for _, cmd := range [][]any{{"GET", "h"}, {"INCR", "h"}, {"APPEND", "h", "x"}, {"STRLEN", "h"}, {"MOD", "h", "x"}, {"SET", "h", "x", "GET"}} {
		wantErr(t, cmd[0].(string)+" on hash", rdb.Do(c, cmd...).Err(), "WRONGTYPE")
	}
	if n := must(rdb.Exists(c, "h", "s").Result())(t, "EXISTS"); n != 2 {
		t.Fatalf("EXISTS = %d", n)
	}
	// SET replaces a hash, as in Redis; DEL removes either type.
	must(rdb.Set(c, "h", "now a string", 0).Result())(t, "SET over hash")
	if got := must(rdb.Get(c, "h").Result())(t, "GET"); got != "now a string" {
		t.Fatalf("GET = %q", got)
	}
	rdb.HSet(c, "h2", "f", "v")
	if n := must(rdb.Del(c, "h2", "s").Result())(t, "DEL"); n != 2 {
		t.Fatalf("DEL = %d", n)
	}
	// A hash whose last field is deleted is gone.
	rdb.HSet(c, "h3", "f", "v")
	rdb.HDel(c, "h3", "f")
	if n := must(rdb.Exists(c, "h3").Result())(t, "EXISTS"); n != 0 {
		t.Fatal("an empty hash still exists")
	}
}

func TestServerCommands(t *testing.T) {
	srv := startServer(t, Config{})
	rdb := newClient(t, srv)
	c := ctx(t)
	if got := must(rdb.Ping(c).Result())(t, "PING"); got != "PONG" {
		t.Fatalf("PING = %q", got)
	}
	if got := must(rdb.Do(c, "PING", "hi").Text())(t, "PING msg"); got != "hi" {
		t.Fatalf("PING hi = %q", got)
	}
	if got := must(rdb.Echo(c, "e\r\n").Result())(t, "ECHO"); got != "e\r\n" {
		t.Fatalf("ECHO = %q", got)
	}
	must(rdb.Do(c, "SELECT", "0").Text())(t, "SELECT 0")
	wantErr(t, "SELECT 1", rdb.Do(c, "SELECT", "1").Err(), "ERR DB index is out of range")
	wantErr(t, "SELECT x", rdb.Do(c, "SELECT", "x").Err(), "ERR value is not an integer")

	rdb.Set(c, "a", "1", 0)
	rdb.HSet(c, "h", "f", "v")
	rdb.Do(c, "HSET", "e", "v")
	rdb.Do(c, "RSET", "r", "v")
	if n := must(rdb.DBSize(c).Result())(t, "DBSIZE"); n != 4 {
		t.Fatalf("DBSIZE = %d, want 4", n)
	}
	info := must(rdb.Info(c).Result())(t, "INFO")
	for _, want := range []string{"# Server\r\n", "redis_version:", "kvstore_version:", "# Clients\r\n", "connected_clients:1",
		"# Memory\r\n", "used_memory:", "used_memory_rss:", "# Persistence\r\n", "# Stats\r\n",
		"total_commands_processed:", "instantaneous_ops_per_sec:", "# Keyspace\r\n", "db0:keys=4,expires=0,avg_ttl=0"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	mem := must(rdb.Info(c, "MEMORY").Result())(t, "INFO memory")
	if !strings.HasPrefix(mem, "# Memory\r\n") || strings.Contains(mem, "# Server") || !strings.Contains(mem, "pool_ready_chunk_bytes:") {
		t.Errorf("INFO memory = %q", mem)
	}
	cfg := must(rdb.ConfigGet(c, "*").Result())(t, "CONFIG GET")
	for k, want := range map[string]string{"save": "", "appendonly": "no", "appendfsync": "everysec", "maxclients": "10000", "kvstore-persist": "none"} {
		if got, ok := cfg[k]; !ok || got != want {
			t.Errorf("CONFIG GET %s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	if got := must(rdb.ConfigGet(c, "save").Result())(t, "CONFIG GET save"); len(got) != 1 {
		t.Errorf("CONFIG GET save = %v", got)
	}
	wantErr(t, "CONFIG SET", rdb.ConfigSet(c, "save", "").Err(), "ERR CONFIG SET is not supported for 'save'")
	wantErr(t, "CONFIG junk", rdb.Do(c, "CONFIG", "junk").Err(), "ERR unknown subcommand 'junk'")

	n := must(rdb.Do(c, "COMMAND", "COUNT").Int())(t, "COMMAND COUNT")
	if n != len(commands) {
		t.Fatalf("COMMAND COUNT = %d", n)
	}
	info2 := must(rdb.Command(c).Result())(t, "COMMAND")
	if got := info2["rset"]; got == nil || got.Arity != 3 || got.FirstKeyPos != 1 {
		t.Fatalf("COMMAND rset = %+v", got)
	}
	docs := must(rdb.Do(c, "COMMAND", "DOCS", "get").Slice())(t, "COMMAND DOCS")
	if len(docs) != 2 || docs[0] != "get" {
		t.Fatalf("COMMAND DOCS get = %v", docs)
	}

	must(rdb.Do(c, "CLIENT", "SETNAME", "me").Text())(t, "CLIENT SETNAME")
	if got := must(rdb.Do(c, "CLIENT", "GETNAME").Text())(t, "CLIENT GETNAME"); got != "me" {
		t.Fatalf("CLIENT GETNAME = %q", got)
	}
	wantErr(t, "CLIENT SETNAME space", rdb.Do(c, "CLIENT", "SETNAME", "a b").Err(), "ERR Client names cannot contain spaces")
	if id := must(rdb.Do(c, "CLIENT", "ID").Int64())(t, "CLIENT ID"); id <= 0 {
		t.Fatalf("CLIENT ID = %d", id)
	}
	must(rdb.Do(c, "CLIENT", "SETINFO", "LIB-NAME", "x").Text())(t, "CLIENT SETINFO")
	wantErr(t, "CLIENT junk", rdb.Do(c, "CLIENT", "junk").Err(), "ERR unknown subcommand")

	infoReply := must(rdb.Do(c, "COMMAND", "INFO", "get", "nosuch").Slice())(t, "COMMAND INFO")
	if len(infoReply) != 2 || infoReply[1] != nil {
		t.Fatalf("COMMAND INFO get nosuch = %v", infoReply)
	}
	if names := must(rdb.Do(c, "COMMAND", "LIST").StringSlice())(t, "COMMAND LIST"); len(names) != len(commands) {
		t.Fatalf("COMMAND LIST has %d names", len(names))
	}
	if list := must(rdb.ClientList(c).Result())(t, "CLIENT LIST"); !strings.Contains(list, "name=me") || !strings.Contains(list, "lib-name=x") {
		t.Fatalf("CLIENT LIST = %q", list)
	}
	if ci := must(rdb.Do(c, "CLIENT", "INFO").Text())(t, "CLIENT INFO"); !strings.HasPrefix(ci, "id=") {
		t.Fatalf("CLIENT INFO = %q", ci)
	}
	must(rdb.ConfigResetStat(c).Result())(t, "CONFIG RESETSTAT")
	if st := must(rdb.Info(c, "stats").Result())(t, "INFO stats"); !strings.Contains(st, "total_commands_processed:0\r\n") && !strings.Contains(st, "total_commands_processed:1\r\n") {
		t.Fatalf("INFO stats after CONFIG RESETSTAT:\n%s", st)
	}
	wantErr(t, "BGREWRITEAOF without a log", rdb.Do(c, "BGREWRITEAOF").Err(), "ERR no operation log")
	wantErr(t, "SAVE without a log", rdb.Do(c, "SAVE").Err(), "ERR no operation log")

	must(rdb.FlushDB(c).Result())(t, "FLUSHDB")
	if n := must(rdb.DBSize(c).Result())(t, "DBSIZE"); n != 0 {
		t.Fatalf("DBSIZE after FLUSHDB = %d", n)
	}
	rdb.Set(c, "a", "1", 0)
	must(rdb.FlushAll(c).Result())(t, "FLUSHALL")
	if n := must(rdb.DBSize(c).Result())(t, "DBSIZE"); n != 0 {
		t.Fatalf("DBSIZE after FLUSHALL = %d", n)
	}
}

func TestErrorsAndCase(t *testing.T) {
	srv := startServer(t, Config{})
	rc := dialRaw(t, srv)
	runExchanges(t, rc, []exchange{
		{[]string{"NOSUCH", "a", "b"}, "-ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' \r\n"},
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command\r\n"},
		{[]string{"ping", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"sEt", "k", "v"}, "+OK\r\n"},
		{[]string{"GeT", "k"}, "$1\r\nv\r\n"},
		{[]string{"rSeT", "k", "v"}, "+OK\r\n"},
		{[]string{"RSET", "k", "v"}, "-EXIST key already exists\r\n"},
		{[]string{"RMOD", "nope", "v"}, "-NOEXIST key does not exist\r\n"},
		{[]string{"HELLO", "3"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"HELLO", "2"}, "*14\r\n$6\r\nserver\r\n$7\r\nkvstore\r\n*"},
		{[]string{"AUTH", "pw"}, "-ERR AUTH <password> called without any password configured*"},
		{[]string{"QUIT"}, "+OK\r\n"},
	})
	if !rc.closed() {
		t.Fatal("connection open after QUIT")
	}
}

func TestAuth(t *testing.T) {
	srv := startServer(t, Config{RequirePass: "s3cret"})
	rc := dialRaw(t, srv)
	runExchanges(t, rc, []exchange{
		{[]string{"GET", "k"}, "-NOAUTH Authentication required.\r\n"},
		{[]string{"HELLO", "2"}, "-NOAUTH HELLO must be called with the client already authenticated*"},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{[]string{"AUTH", "bob", "s3cret"}, "-WRONGPASS*"},
		{[]string{"AUTH", "s3cret"}, "+OK\r\n"},
		{[]string{"GET", "k"}, "$-1\r\n"},
	})
	rc2 := dialRaw(t, srv)
	runExchanges(t, rc2, []exchange{
		{[]string{"HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "n"}, "*14\r\n*"},
		{[]string{"CLIENT", "GETNAME"}, "$1\r\nn\r\n"},
	})
	// go-redis authenticates in its handshake.
	rdb := newClient(t, srv, func(o *redis.Options) { o.Password = "s3cret" })
	if err := rdb.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatalf("go-redis with a password: %v", err)
	}
	bad := newClient(t, srv, func(o *redis.Options) { o.Password = "nope" })
	wantErr(t, "go-redis with a wrong password", bad.Ping(ctx(t)).Err(), "WRONGPASS")
}

func TestMaxClients(t *testing.T) {
	srv := startServer(t, Config{MaxClients: 2})
	a, b := dialRaw(t, srv), dialRaw(t, srv)
	runExchanges(t, a, []exchange{{[]string{"PING"}, "+PONG\r\n"}})
	runExchanges(t, b, []exchange{{[]string{"PING"}, "+PONG\r\n"}})
	c := dialRaw(t, srv)
	if got := c.reply(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client got %q", got)
	}
	if !c.closed() {
		t.Fatal("rejected client left open")
	}
	runExchanges(t, a, []exchange{{[]string{"PING"}, "+PONG\r\n"}})
}

func TestPipelineAndInline(t *testing.T) {
	srv := startServer(t, Config{})
	rc := dialRaw(t, srv)
	var req []byte
	var want strings.Builder
	for i := range 1000 {
		k := "k" + strings.Repeat("x", i%7)
		req = appendCmd(req, "SET", k, "v")
		want.WriteString("+OK\r\n")
		req = appendCmd(req, "GET", k)
		want.WriteString("$1\r\nv\r\n")
	}
	req = append(req, "PING\r\nECHO \"a b\"\r\n"...)
	want.WriteString("+PONG\r\n$3\r\na b\r\n")
	rc.send(req)
	var got strings.Builder
	for got.Len() < want.Len() {
		got.WriteString(rc.reply())
	}
	if got.String() != want.String() {
		t.Fatal("pipelined replies differ from the requests' order")
	}
	// go-redis pipelines too.
	rdb := newClient(t, srv)
	c := ctx(t)
	pipe := rdb.Pipeline()
	for i := range 100 {
		pipe.Incr(c, "ctr")
		_ = i
	}
	cmds, err := pipe.Exec(c)
	if err != nil || cmds[99].(*redis.IntCmd).Val() != 100 {
		t.Fatalf("pipeline: %v", err)
	}
}
