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
#   PROFILE=1 bench/ordered.sh 0    (only a CPU profile of one RSET load)
#   KVBENCH=/path/to/old/kvbench bench/ordered.sh   (another build)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROUNDS=${1:-5}
ALLOC=${ALLOC:-pool}
KEYS=1000000
declare -A R

# qps PORT ARGS... runs kvbench bench and prints its requests per second.
qps() {
	local port=$1 out; shift
	out=$("$KVBENCH" bench --port "$port" --pipeline 128 --connections 1 --keyspace $KEYS \
		--requests $KEYS --value-size 32 --output json "$@" 2>"$WORK/bench.err") ||
		die "kvbench bench -p $port $* failed: $(tail -n 3 "$WORK/bench.err")"
	awk -F': ' '/"qps"/ { sub(/,$/, "", $2); printf "%d\n", $2 }' <<<"$out"
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
	R[$1,set]+=" $(qps "$port" --mode set --set-cmd $set)"
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew
	R[$1,rss]+=" $(rss "$port")"
	R[$1,get]+=" $(qps "$port" --mode get --get-cmd $get)"
	stop "$port"
}

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
echo
for a in ordered strings redis; do echo "samples $a: set${R[$a,set]} | get${R[$a,get]} | rss${R[$a,rss]}"; done
