#!/usr/bin/env bash
# The dry run's estimate against the run it estimates: for each case, the
# estimate of "kvbench run --dry-run" (its probe of this machine), then the
# real run's wall time, and their ratio, with the load average beside it.
# CASES (default: the recovery mode, a power loss when FUSE is there, the
# profile rounds when perf is) are kvbench run flags, one case a line; SIZES
# the requests and keyspace of each (default 100000 1000000).
#
#   make bench-estimate
#   SIZES=200000 CASES='--modes recovery' bench/estimate.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export KVBENCH_HISTORY=off

SIZES=${SIZES:-100000 1000000}
if [ -z "${CASES:-}" ]; then
	CASES='--modes recovery'
	[ -c /dev/fuse ] && [ "$(id -u)" = 0 ] && CASES+=$'\n--modes recovery --power-loss'
	command -v perf >/dev/null && CASES+=$'\n--modes set,get --profile'
fi

# secs turns kvbench's durations (850ms, 9.7s, 1m20s) into seconds.
secs() {
	python3 -c 'import re,sys
s=sys.argv[1]; t=0.0
for n,u in re.findall(r"([0-9.]+)(h|ms|m|s)", s): t+=float(n)*{"h":3600,"m":60,"s":1,"ms":0.001}[u]
print(t)' "$1"
}

printf '%-34s %8s %10s %10s %7s  %s\n' case size estimate actual ratio 'load average'
while IFS= read -r c; do
	[ -n "$c" ] || continue
	for n in $SIZES; do
		out="$WORK/out-$RANDOM"
		# shellcheck disable=SC2086 # a case is several flags
		est=$("$KVBENCH" run --dry-run --rounds 1 --requests "$n" --keyspace "$n" $c --out "$out" 2>/dev/null |
			sed -n 's/^estimated time: \([^ ]*\) .*/\1/p')
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		"$KVBENCH" run --rounds 1 --requests "$n" --keyspace "$n" $c --out "$out-run" >/dev/null 2>&1 || true
		t1=$(date +%s.%N)
		e=$(secs "$est")
		a=$(python3 -c "print(round($t1 - $t0, 1))")
		printf '%-34s %8s %9ss %9ss %7s  %s\n' "$c" "$n" "$e" "$a" "$(python3 -c "print(round($a / $e, 2))")" "$load"
	done
done <<<"$CASES"
