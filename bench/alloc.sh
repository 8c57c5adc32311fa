#!/usr/bin/env bash
# The two allocators of kvbench serve side by side (--alloc pool, the C
# kvstore's mypool; --alloc go, its malloc), alternating run by run, with
# redis-server's memory for the same data as the yardstick: SET and GET
# throughput (redis-benchmark -P 128 -c 1 -d 32 -r 1000000), RSS after
# 1,000,000 distinct keys × 32-byte values (right after the last one, and
# after an idle second, once the kvstore has unmapped the index arrays it
# outgrew; Redis gets the same second), and the Go collector's CPU share
# and pause p99 over the run (runtime/metrics, via INFO memory).
#
#   bench/alloc.sh [pairs]          (default 3; make bench-alloc)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PAIRS=${1:-3}
N=${N:-1000000}
KEYS=1000000
declare -A R

info() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }

run() { # pool|go|redis
	local port
	port=$(free_port)
	if [ "$1" = redis ]; then start_redis "$port" --save "" --appendonly no; else start_kvstore "$port" --alloc "$1"; fi
	R[$1,set]+=" $(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t set)"
	redis-cli -p "$port" flushall >/dev/null
	prefill "$port" $KEYS
	R[$1,rss0]+=" $(rss "$port")"
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew
	R[$1,rss]+=" $(rss "$port")"
	R[$1,get]+=" $(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t get)"
	if [ "$1" != redis ]; then
		R[$1,gccpu]+=" $(info "$port" gc_cpu_fraction)"
		R[$1,p99]+=" $(info "$port" gc_pause_p99_us)"
		R[$1,cycles]+=" $(info "$port" gc_cycles)"
	fi
	stop "$port"
}

for i in $(seq "$PAIRS"); do
	for a in $(alternate "$i" pool go redis); do
		echo "pair $i: $a" >&2
		run "$a"
	done
done

m() { median ${R[$1,$2]}; } # shellcheck disable=SC2086
echo
echo "Allocators: $PAIRS runs each, medians; redis-benchmark -P 128 -c 1 -d 32 -r $KEYS -n $N"
echo
echo "| | pool | go | redis-server | pool/redis | go/redis |"
echo "|---|---:|---:|---:|---:|---:|"
for x in set get rss rss0; do
	case $x in
	set) name="SET req/s" ;;
	get) name="GET req/s" ;;
	rss) name="RSS after $KEYS keys × 32 B, one idle second later" ;;
	rss0) name="RSS right after the last key" ;;
	esac
	echo "| $name | $(m pool $x) | $(m go $x) | $(m redis $x) | $(ratio "$(m pool $x)" "$(m redis $x)") | $(ratio "$(m go $x)" "$(m redis $x)") |"
done
echo "| GC CPU share (of the process's CPU) | $(m pool gccpu) | $(m go gccpu) | – | | |"
echo "| GC pause p99 (µs) | $(m pool p99) | $(m go p99) | – | | |"
echo "| GC cycles | $(m pool cycles) | $(m go cycles) | – | | |"
echo
for a in pool go redis; do echo "samples $a: set${R[$a,set]} | get${R[$a,get]} | rss${R[$a,rss]} | rss at once${R[$a,rss0]}"; done
