# Shared helpers for the side-by-side benchmark scripts. Source it.
# Servers started here are killed on exit.

KVBENCH=${KVBENCH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/kvbench}
WORK=$(mktemp -d /tmp/kvbench-bench.XXXXXX)
# The scripts' Python finds bench/utest.py, the U test they share.
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
PIDS=()
declare -A PORT_PID PORT_LOG # the server on a port: its process, its log
# RT=1 runs the servers and the clients at real-time priority (chrt -f
# 10): on a machine others keep busy, their samples then vary far less.
# Root only; the kernel's real-time throttling keeps a share for the rest.
PRIO=()
[ "${RT:-}" != 1 ] || PRIO=(chrt -f 10)

cleanup() {
	# Under set -e, a kill of a server that already exited must not end
	# the cleanup before the work directory is gone.
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "$*" >&2; exit 1; }

# PIN places the servers and the clients (redis-benchmark, kvbench bench)
# on CPUs of their own, where the scheduler would otherwise choose:
# PIN=apart puts the servers on the last CPU and the clients on the first,
# PIN=same all of them on the first. Unset, nothing is pinned.
SRV=("${PRIO[@]}") CLI=("${PRIO[@]}")
case ${PIN:-} in
'') ;;
apart)
	[ "$(nproc)" -gt 1 ] || die "PIN=apart needs 2 CPUs or more"
	SRV=(taskset -c "$(($(nproc) - 1))" "${PRIO[@]}") CLI=(taskset -c 0 "${PRIO[@]}")
	;;
same) SRV=(taskset -c 0 "${PRIO[@]}") CLI=(taskset -c 0 "${PRIO[@]}") ;;
*) die "PIN=$PIN: want apart or same" ;;
esac

for tool in redis-server redis-cli redis-benchmark; do
	command -v "$tool" >/dev/null || die "$tool not found: apt-get install redis-server redis-tools (or make deps)"
done
[ -x "$KVBENCH" ] || die "$KVBENCH not built: make build"

# free_port prints a TCP port nothing listens on, below Linux's ephemeral
# range (32768 and up), where a client's socket may hold it.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; return; }
	done
}

# wait_ping PORT PID LOG waits until the server on PORT answers PING; if
# its process PID exits first, it quotes the end of LOG.
wait_ping() {
	for _ in $(seq 100); do
		[ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
		kill -0 "$2" 2>/dev/null || die "server on port $1 exited: $(tail -n 3 "$3")"
		sleep 0.05
	done
	die "server on port $1 did not answer PING"
}

# start_kvstore PORT [serve flags...] starts kvbench serve.
start_kvstore() {
	local port=$1; shift
	"${SRV[@]}" "$KVBENCH" serve --port "$port" --log-level warn "$@" 2>>"$WORK/kvstore.log" &
	PIDS+=($!)
	PORT_PID[$port]=$! PORT_LOG[$port]=$WORK/kvstore.log
	wait_ping "$port" $! "$WORK/kvstore.log"
}

# start_redis PORT [redis-server args...] starts redis-server in a fresh dir.
start_redis() {
	local port=$1; shift
	local dir="$WORK/redis-$port-$RANDOM"
	mkdir -p "$dir"
	"${SRV[@]}" redis-server --port "$port" --dir "$dir" --logfile "$WORK/redis.log" "$@" &
	PIDS+=($!)
	PORT_PID[$port]=$! PORT_LOG[$port]=$WORK/redis.log
	wait_ping "$port" $! "$WORK/redis.log"
}

# stop PORT shuts the server on PORT down and waits for its process to
# exit (it may still be writing its files after it stops listening).
stop() {
	redis-cli -p "$1" shutdown nosave >/dev/null 2>&1
	local pid=${PORT_PID[$1]:-}
	[ -n "$pid" ] || return 0
	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# server_log PORT prints, for an error message, the end of the log of the
# server on PORT (a kvbench server logs warnings: a client dropped, and
# why), and whether its process is gone.
server_log() {
	local log=${PORT_LOG[$1]:-} pid=${PORT_PID[$1]:-}
	[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && printf '\n(the server exited)'
	[ -s "$log" ] && printf '\n(%s ends: %s)' "${log##*/}" "$(tail -n 5 "$log")"
	return 0
}

# rps PORT ARGS... runs redis-benchmark and prints the requests per second
# of its only test. Its -n is rounded up to whole pipelines (-P):
# redis-benchmark sends whole pipelines, so its count of replies would end
# past -n, and its progress timer, every 250 ms, aborts a run that it
# finds with no client left and that count not -n ("All clients
# disconnected... aborting"), as it did now and then at SET 32 B P128 c1,
# a run of about 250 ms.
rps() {
	local port=$1 out i p=1; shift
	local args=("$@")
	for ((i = 0; i + 1 < ${#args[@]}; i++)); do
		[ "${args[i]}" = -P ] && p=${args[i + 1]}
	done
	for ((i = 0; i + 1 < ${#args[@]}; i++)); do
		[ "${args[i]}" = -n ] && args[i + 1]=$(((args[i + 1] + p - 1) / p * p))
	done
	out=$("${CLI[@]}" redis-benchmark -p "$port" "${args[@]}" --csv 2>"$WORK/rps.err") ||
		die "redis-benchmark -p $port ${args[*]} failed: $(tail -n 3 "$WORK/rps.err")$(server_log "$port")"
	awk -F'"' 'NR == 2 { print $4 }' <<<"$out"
}

# prefill PORT N writes keys key:000000000000 … (redis-benchmark's -r key
# names) with 32-byte values through redis-cli --pipe.
prefill() {
	local file="$WORK/prefill-$2.resp"
	[ -f "$file" ] || awk -v n="$2" 'BEGIN {
		v = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		for (i = 0; i < n; i++) {
			k = sprintf("key:%012d", i)
			printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$32\r\n%s\r\n", length(k), k, v
		}
	}' >"$file"
	redis-cli -p "$1" --pipe <"$file" >/dev/null || die "prefill of port $1 failed"
}

# cpu_ns PID prints the CPU time of every thread of process PID, in ns.
cpu_ns() {
	local s=0 run _
	for f in /proc/"$1"/task/*/schedstat; do
		read -r run _ <"$f" && s=$((s + run))
	done
	echo "$s"
}

# rss PORT prints used_memory_rss from INFO memory.
rss() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1 == "used_memory_rss" { print $2 }'; }

# alternate I A B… prints the sides of pair I in order, or reversed when I
# is even, so that no side always runs first.
alternate() {
	local i=$1; shift
	if ((i % 2)); then echo "$@"; else printf '%s\n' "$@" | tac | paste -sd' '; fi
}

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# ratio A B prints A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", a / b }'; }
