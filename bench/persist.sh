#!/usr/bin/env bash
# What persistence costs: kvbench serve under --persist none/no/everysec/
# always next to redis-server with the equivalent settings, all driven by
# redis-benchmark -P 128 -c 1 -d 32 -r 1000000 -t set, alternating kvstore
# and redis run by run, a fresh server in a fresh directory every run. Then
# the start-up replay of a 1,000,000-key log. Prints markdown.
#
#   bench/persist.sh [pairs]        (default 3; make bench-persist)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PAIRS=${1:-3}
N=${N:-1000000}
KEYS=1000000
POLICIES=(none no everysec always)

declare -A R

redis_args() {
	case $1 in
	none) echo --save "" --appendonly no ;;
	*) echo --save "" --appendonly yes --appendfsync "$1" ;;
	esac
}

run() { # target policy
	local port dir
	port=$(free_port)
	dir=$(mktemp -d "$WORK/data.XXXXXX")
	if [ "$1" = kvstore ]; then
		start_kvstore "$port" --persist "$2" --dir "$dir"
	else
		# shellcheck disable=SC2046
		start_redis "$port" $(redis_args "$2")
	fi
	R[$1,$2]+=" $(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t set)"
	stop "$port"
	rm -rf "$dir"
}

for i in $(seq "$PAIRS"); do
	for p in "${POLICIES[@]}"; do
		for t in $(alternate "$i" kvstore redis); do
			echo "pair $i: $t $p" >&2
			run "$t" "$p"
		done
	done
done

echo
echo "SET throughput by persistence policy: redis-benchmark -P 128 -c 1 -d 32 -r $KEYS -n $N -t set, $PAIRS pairs, medians (req/s)"
echo
echo "| policy | kvstore | vs kvstore none | redis | vs redis none | kvstore/redis | kvstore samples | redis samples |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
# shellcheck disable=SC2086
kn=$(median ${R[kvstore,none]}) rn=$(median ${R[redis,none]})
for p in "${POLICIES[@]}"; do
	# shellcheck disable=SC2086
	k=$(median ${R[kvstore,$p]}) r=$(median ${R[redis,$p]})
	echo "| $p | $k | $(ratio "$k" "$kn") | $r | $(ratio "$r" "$rn") | $(ratio "$k" "$r") | ${R[kvstore,$p]# } | ${R[redis,$p]# } |"
done

# Start-up replay of a 1,000,000-key log, then of its compacted form (one
# base file): the time from starting the process to its first PONG.
port=$(free_port)
dir=$(mktemp -d "$WORK/replay.XXXXXX")
start_kvstore "$port" --persist no --dir "$dir" --auto-aof-rewrite-percentage -1
prefill "$port" $KEYS
stop "$port"
startup() { # what
	local times=() port start keys
	for _ in 1 2 3; do
		port=$(free_port)
		start=$(date +%s%N)
		start_kvstore "$port" --persist no --dir "$dir" --auto-aof-rewrite-percentage -1
		times+=("$((($(date +%s%N) - start) / 1000000))")
		keys=$(redis-cli -p "$port" dbsize)
		stop "$port"
	done
	echo "Start-up with $1 ($keys keys, $(du -sh "$dir" | cut -f1)): $(median "${times[@]}") ms to the first PONG (median of 3: ${times[*]} ms)"
}
echo
startup "a log of $KEYS SETs"
port=$(free_port)
start_kvstore "$port" --persist no --dir "$dir" --auto-aof-rewrite-percentage -1
redis-cli -p "$port" save >/dev/null
stop "$port"
startup "the base file SAVE wrote"
