#!/usr/bin/env bash
# kvbench serve against redis-server --save "" --appendonly no, driven by the
# same neutral client (redis-benchmark), alternating A B A B with a fresh
# server for every run. Prints medians and kvstore/redis ratios as markdown.
#
#   bench/serve.sh [pairs]          (default 3; make bench-serve)
#   ALLOC=go bench/serve.sh         (the go allocator instead of pool)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PAIRS=${1:-3}
ALLOC=${ALLOC:-pool}
N=${N:-1000000}          # requests for the pipelined runs
N1=${N1:-200000}         # requests for the pipeline-1 runs
KEYS=1000000

declare -A R # R[target,metric] = space-separated samples

run_one() { # target
	local t=$1 port
	port=$(free_port)
	if [ "$t" = kvstore ]; then start_kvstore "$port" --alloc "$ALLOC"; else start_redis "$port" --save "" --appendonly no; fi
	R[$t,set128]+=" $(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t set)"
	redis-cli -p "$port" flushall >/dev/null
	prefill "$port" $KEYS
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew (see alloc.sh)
	R[$t,rss]+=" $(rss "$port")"
	R[$t,get128]+=" $(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t get)"
	R[$t,set1]+=" $(rps "$port" -P 1 -c 50 -d 32 -r $KEYS -n "$N1" -t set)"
	R[$t,get1]+=" $(rps "$port" -P 1 -c 50 -d 32 -r $KEYS -n "$N1" -t get)"
	stop "$port"
}

for i in $(seq "$PAIRS"); do
	for t in $(alternate "$i" kvstore redis); do
		echo "pair $i: $t" >&2
		run_one "$t"
	done
done

echo
echo "kvbench serve (--alloc $ALLOC) vs redis-server $(redis-server --version | awk '{print $3}'), $PAIRS pairs, medians"
echo
echo "| test | kvstore | redis | kvstore/redis | kvstore samples | redis samples |"
echo "|---|---:|---:|---:|---|---|"
for m in set128 get128 set1 get1 rss; do
	case $m in
	set128) name="SET -P 128 -c 1 (req/s)" ;;
	get128) name="GET -P 128 -c 1 (req/s)" ;;
	set1) name="SET -P 1 -c 50 (req/s)" ;;
	get1) name="GET -P 1 -c 50 (req/s)" ;;
	rss) name="RSS after $KEYS keys × 32 B (bytes)" ;;
	esac
	# shellcheck disable=SC2086
	k=$(median ${R[kvstore,$m]}) r=$(median ${R[redis,$m]})
	echo "| $name | $k | $r | $(ratio "$k" "$r") | ${R[kvstore,$m]# } | ${R[redis,$m]# } |"
done
