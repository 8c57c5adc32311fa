#!/usr/bin/env bash
# Memory held for large values: RSS after KEYS distinct keys × SIZE-byte
# values (default 100,000 × 16 KB, 1.6 GB of values), kvbench serve (its
# pool allocator) against redis-server, alternating server by server; RSS
# after an idle second, per byte of value, and the ratio.
#
#   bench/largerss.sh [pairs]       (default 3; make bench-largerss)
#   KEYS=10000 SIZE=262144 bench/largerss.sh 1
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PAIRS=${1:-3}
KEYS=${KEYS:-100000}
SIZE=${SIZE:-16384}
declare -A R

run() { # pool|redis
	local port
	port=$(free_port)
	if [ "$1" = redis ]; then start_redis "$port" --save "" --appendonly no; else start_kvstore "$port" --alloc "$1"; fi
	# Every key once (a permutation of the keyspace), so the data is exactly
	# KEYS × SIZE bytes of values on both sides.
	"$KVBENCH" bench --port "$port" --mode set --keyspace "$KEYS" --requests "$KEYS" \
		--value-size "$SIZE" --pipeline 16 --connections 4 --seed 1 --output json >/dev/null
	local n
	n=$(redis-cli -p "$port" dbsize)
	[ "$n" = "$KEYS" ] || die "$1: $n keys after the fill, want $KEYS"
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew
	R[$1]+=" $(rss "$port")"
	stop "$port"
}

for i in $(seq "$PAIRS"); do
	for a in $(alternate "$i" pool redis); do
		echo "pair $i: $a" >&2
		run "$a"
	done
done

m() { median ${R[$1]}; } # shellcheck disable=SC2086
per() { awk -v r="$1" -v n="$((KEYS * SIZE))" 'BEGIN { printf "%.3f\n", r / n }'; }
echo
echo "RSS after $KEYS keys × $SIZE B ($((KEYS * SIZE >> 20)) MiB of values), one idle second later; $PAIRS runs each, medians"
echo
echo "| | kvstore (pool) | redis-server | kvstore/redis |"
echo "|---|---:|---:|---:|"
echo "| RSS (MiB) | $(($(m pool) >> 20)) | $(($(m redis) >> 20)) | $(ratio "$(m pool)" "$(m redis)") |"
echo "| RSS per byte of value | $(per "$(m pool)") | $(per "$(m redis)") | |"
echo
for a in pool redis; do echo "samples $a (bytes):${R[$a]}"; done
