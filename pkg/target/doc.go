// Package target owns the servers kvbench measures: starting a fresh
// instance of a server under one persistence strategy, proving it is ready
// and configured as asked, and stopping it so that nothing is left behind.
//
// A Target describes a server (Desc: its name, its strategies, its read and
// write commands) and starts instances of it (Start). There are six kinds:
//
//   - Kvstore runs this binary's "serve" (the embedded kvstore) with the
//     strategy's --persist and --alloc;
//   - Redis runs redis-server with a generated configuration file;
//   - RedisCluster runs a Redis Cluster of redis-servers, its masters in
//     Info.Nodes;
//   - KvstoreCluster runs kvstore nodes ("serve --cluster-config") on free
//     ports from a cluster file it writes, its nodes in Info.Nodes;
//   - Command runs any server described by a command line with {port},
//     {dir} and {strategy} placeholders (see package targetfile for the YAML form);
//   - Attach measures a server kvbench does not start, at host:port or a
//     Unix socket, and flushes its keyspace (FLUSHALL) before every
//     instance; with Cluster, a Redis Cluster found from seed nodes, every
//     master flushed.
//
// A target's password, ACL user (attach only) and database (redis,
// command and attach; the kvstore and clusters have only database 0) and
// protocol (RESP3: every kind but the kvstore's) are in its Desc and in
// every instance's Info: Info.Control gives the control options that
// enter the server as the load generator does.
//
// # Processes
//
// Every spawned server runs in its own process group, so that a terminal's
// Ctrl-C reaches kvbench alone and kvbench decides how its servers stop,
// with the Linux parent-death signal (SIGKILL) as a backstop should kvbench
// itself be killed. The processes are started from one goroutine locked to
// its OS thread for the life of the process, because the parent-death
// signal follows the thread that forked, not the process. Stopping a
// kvstore or redis instance sends SIGKILL to the group at once, since its
// directory is deleted next and a polite shutdown would only save or sync
// files in it; a command instance, whose shutdown may matter elsewhere,
// gets SIGTERM, then SIGKILL once the caller's context is done. Stopping
// always waits for the process; a Tracker can kill every live group at
// once (kvbench's second Ctrl-C).
//
// # Readiness and verification
//
// An instance is ready when a connection to it answers PING (a log line is
// never trusted alone, a sleep never used). Then INFO server gives the
// version and the process id, which must belong to the process group kvbench
// started: a port lost to another server between choosing it and binding it
// is caught there, and kvbench never measures a server it did not start
// (except an Attach target). CONFIG GET gives the effective persistence
// settings, which are recorded and compared with what the strategy asked
// for; a difference is ErrConfigMismatch and the instance is not measured.
// When a server exits before it is ready, the error quotes the last lines of
// its output.
//
// # TLS
//
// A redis, redis-cluster, command or attach target may be reached over TLS
// (RedisConfig.TLS, CommandConfig.TLS, AttachConfig.TLS; a target file's
// tls: block). Every
// connection to it then goes through tlsconf.Dial with that configuration,
// readiness and verification included, and Info.TLS hands it to the load
// generator. A redis target over TLS makes its CA and certificates in the
// instance's directory (tlsconf.WriteFiles) and listens on tls-port only;
// a redis-cluster's nodes share one set and also run their cluster bus and
// replication over TLS. The kvstore serves plaintext only: TLS for it is
// refused when the target file is read.
package target
