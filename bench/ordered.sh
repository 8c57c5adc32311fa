#!/usr/bin/env bash
# The kvstore's ordered engine (RSET/RGET, what `kvbench run` measures the
# kvstore with) against its own string family (SET/GET) and against
# redis-server's SET/GET, driven by the same client (kvbench bench:
# pipeline 128, one connection, 32-byte values, keys bench:key:000000…).
# Each sample is a fresh server: a load of 1,000,000 distinct keys in
# random order (the write figure), RSS after an idle second, then
# 1,000,000 reads of random keys (the read figure). The three sides
# alternate, in reverse order every other round.
#
#   bench/ordered.sh [rounds]       (default 5; make bench-ordered)
#   RT=1 bench/ordered.sh 7         (servers and client at real-time
#                                    priority: steadier on a busy machine)
#   PROFILE=1 bench/ordered.sh 0    (only a CPU profile of one RSET load)
#   KVBENCH=/path/to/old/kvbench bench/ordered.sh   (another build)
#   REPLAY=/path/to/old/kvbench bench/ordered.sh [rounds]
#       startup and compaction instead, this build against the old one,
#       alternating (default 3 rounds): each loads the keys with RSET under
#       --persist everysec, restarts (replaying the log), compacts it
#       (BGREWRITEAOF) and restarts again (replaying the base); the times
#       are the server's own log lines.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROUNDS=${1:-5}
ALLOC=${ALLOC:-pool}
KEYS=1000000
declare -A R

# qps PORT ARGS... runs kvbench bench and prints its requests per second.
qps() {
	local port=$1 out; shift
	out=$("${CLI[@]}" "$KVBENCH" bench --port "$port" --pipeline 128 --connections 1 --keyspace $KEYS \
		--requests $KEYS --value-size 32 --output json "$@" 2>"$WORK/bench.err") ||
		die "kvbench bench -p $port $* failed: $(tail -n 3 "$WORK/bench.err")"
	awk -F': ' '/"qps"/ { sub(/,$/, "", $2); printf "%d\n", $2; exit }' <<<"$out" # the run's, not its series'
}

run() { # ordered|strings|redis
	local port set=SET get=GET
	port=$(free_port)
	if [ "$1" = redis ]; then
		start_redis "$port" --save "" --appendonly no
	else
		start_kvstore "$port" --alloc "$ALLOC"
	fi
	[ "$1" = ordered ] && set=RSET get=RGET
	local pid=${PORT_PID[$port]} before
	before=$(cpu_ns "$pid")
	R[$1,set]+=" $(qps "$port" --mode set --set-cmd $set)"
	R[$1,cpu]+=" $(awk -v a="$before" -v b="$(cpu_ns "$pid")" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew
	R[$1,rss]+=" $(rss "$port")"
	R[$1,used]+=" $(redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')"
	R[$1,get]+=" $(qps "$port" --mode get --get-cmd $get)"
	stop "$port"
}

# took LOG MSG prints, in milliseconds, the took= of LOG's last MSG line.
took() {
	grep "msg=\"$2\"" "$1" | tail -n 1 | sed 's/.* took=\([^ ]*\).*/\1/' |
		awk '/ms$/ { print $0 + 0; next } /s$/ { print $0 * 1000; next } { print $0 * 1000 }'
}

replay() { # BUILD
	local port dir flags
	port=$(free_port)
	dir=$(mktemp -d "$WORK/replay.XXXXXX")
	flags=(--alloc "$ALLOC" --persist everysec --dir "$dir" --auto-aof-rewrite-percentage -1 --log-level info)
	KVBENCH=$1 start_kvstore "$port" "${flags[@]}"
	qps "$port" --mode set --set-cmd RSET >/dev/null
	stop "$port"
	KVBENCH=$1 start_kvstore "$port" "${flags[@]}"
	R[$1,log]+=" $(took "$WORK/kvstore.log" "operation log loaded")"
	redis-cli -p "$port" bgrewriteaof >/dev/null
	for _ in $(seq 600); do
		grep -q 'msg="log rewritten"' "$WORK/kvstore.log" && break
		sleep 0.05
	done
	R[$1,rewrite]+=" $(took "$WORK/kvstore.log" "log rewritten")"
	stop "$port"
	KVBENCH=$1 start_kvstore "$port" "${flags[@]}"
	R[$1,base]+=" $(took "$WORK/kvstore.log" "operation log loaded")"
	stop "$port"
	: >"$WORK/kvstore.log"
	rm -rf "$dir"
}

if [ "${REPLAY:-}" ]; then
	[ -x "$REPLAY" ] || die "REPLAY=$REPLAY is not an executable kvbench"
	for i in $(seq "${1:-3}"); do
		for b in $(alternate "$i" "$KVBENCH" "$REPLAY"); do
			echo "round $i: $b" >&2
			replay "$b"
		done
	done
	echo
	echo "Startup and compaction of $KEYS RSET keys (--persist everysec), ${1:-3} rounds, medians (ms)"
	echo
	echo "| | this build | $REPLAY | ratio |"
	echo "|---|---:|---:|---:|"
	for k in log rewrite base; do
		case $k in
		log) what="replaying the log" ;;
		rewrite) what="BGREWRITEAOF" ;;
		base) what="replaying the rewritten base" ;;
		esac
		echo "| $what | $(median ${R[$KVBENCH,$k]}) | $(median ${R[$REPLAY,$k]}) | $(ratio "$(median ${R[$KVBENCH,$k]})" "$(median ${R[$REPLAY,$k]})") |"
	done
	echo
	for b in "$KVBENCH" "$REPLAY"; do echo "samples $b: log${R[$b,log]} | rewrite${R[$b,rewrite]} | base${R[$b,base]}"; done
	exit 0
fi

if [ "${PROFILE:-}" ]; then
	port=$(free_port)
	start_kvstore "$port" --alloc "$ALLOC" --cpuprofile "$WORK/cpu.prof"
	echo "RSET load: $(qps "$port" --mode set --set-cmd RSET) req/s"
	stop "$port"
	go tool pprof -top -nodecount 15 "$KVBENCH" "$WORK/cpu.prof" 2>/dev/null | sed -n '/flat%/,$p'
fi

for i in $(seq "$ROUNDS"); do
	for a in $(alternate "$i" ordered strings redis); do
		echo "round $i: $a" >&2
		run "$a"
	done
done
[ "$ROUNDS" -gt 0 ] || exit 0

m() { median ${R[$1,$2]}; } # shellcheck disable=SC2086
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo
echo "Ordered engine (--alloc $ALLOC): $ROUNDS fresh servers each, medians; kvbench bench -P 128 -c 1, $KEYS keys × 32 B"
echo
echo "| | kvstore RSET/RGET | kvstore SET/GET | redis SET/GET | ordered/strings | ordered/redis |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| writes (req/s) | $(m ordered set) | $(m strings set) | $(m redis set) | $(ratio "$(m ordered set)" "$(m strings set)") | $(ratio "$(m ordered set)" "$(m redis set)") |"
echo "| reads (req/s) | $(m ordered get) | $(m strings get) | $(m redis get) | $(ratio "$(m ordered get)" "$(m strings get)") | $(ratio "$(m ordered get)" "$(m redis get)") |"
echo "| RSS after the load | $(mib "$(m ordered rss)") | $(mib "$(m strings rss)") | $(mib "$(m redis rss)") | $(ratio "$(m ordered rss)" "$(m strings rss)") | $(ratio "$(m ordered rss)" "$(m redis rss)") |"
perkey() { awk -v b="$1" -v n=$KEYS 'BEGIN { printf "%.0f", b / n }'; }
echo "| RSS per key (bytes) | $(perkey "$(m ordered rss)") | $(perkey "$(m strings rss)") | $(perkey "$(m redis rss)") | | |"
echo "| used_memory per key (bytes) | $(perkey "$(m ordered used)") | $(perkey "$(m strings used)") | $(perkey "$(m redis used)") | $(ratio "$(m ordered used)" "$(m strings used)") | $(ratio "$(m ordered used)" "$(m redis used)") |"
echo "| server CPU per load (s) | $(m ordered cpu) | $(m strings cpu) | $(m redis cpu) | $(ratio "$(m ordered cpu)" "$(m strings cpu)") | $(ratio "$(m ordered cpu)" "$(m redis cpu)") |"
echo
for w in set cpu rss; do
	python3 -c 'import sys; from utest import utest; a, b, c = (list(map(float, x.split())) for x in sys.argv[2:5]); print(f"p (two-sided U-test) {sys.argv[1]}: ordered vs strings {utest(a, b):.3f}, ordered vs redis {utest(a, c):.3f}" if len(a) > 1 else "")' \
		"$w" "${R[ordered,$w]}" "${R[strings,$w]}" "${R[redis,$w]}"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for a in ordered strings redis; do echo "samples $a: set${R[$a,set]} | get${R[$a,get]} | cpu${R[$a,cpu]} | rss${R[$a,rss]} | used${R[$a,used]}"; done
