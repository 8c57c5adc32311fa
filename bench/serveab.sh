#!/usr/bin/env bash
# Two kvbench binaries' servers, A B B A …: a fresh `kvbench serve` of
# each binary per sample, driven by the same client (redis-benchmark):
# SET and GET of 32 B at pipeline 128 over one connection and at pipeline
# 1 over 50 connections. Per case, the requests per second and the
# server's CPU nanoseconds per request (all its threads, from
# /proc/PID/task/*/schedstat: steadier than throughput on a busy machine).
# Prints the medians of each binary, B/A and the U test's p. What a change
# of the server costs (or gains).
#
# Usage: A=old/kvbench B=new/kvbench bench/serveab.sh      (make bench-serve-ab)
# Environment:
#   PAIRS=6        alternating pairs (at least 4 for the U test)
#   N=1000000      requests of a pipeline-128 run
#   N1=200000      requests of a pipeline-1 run
#   PERSIST        a --persist policy for both (no, everysec, always), each
#                  server with a fresh --dir
#   SERVE_ARGS     more serve flags for both
#   A_ARGS, B_ARGS more serve flags for one (A=B=kvbench A_ARGS="--io epoll":
#                  one binary's two event loops)
#   CASES          the cases, "op pipeline connections requests [size
#                  [keys]]" separated by commas: values of size bytes
#                  (default 32) over keys keys (default 1000000); default
#                  "set 128 1 $N,get 128 1 $N,set 1 50 $N1,get 1 50 $N1".
#                  A GET case reads what the cases before it wrote
set -euo pipefail
cd "$(dirname "$0")/.."
A=${A:?A=path of the first kvbench binary}
B=${B:?B=path of the second kvbench binary}
KVBENCH=$A
. bench/lib.sh
[ -x "$B" ] || die "$B: not an executable"

PAIRS=${PAIRS:-6}
N=${N:-1000000}
N1=${N1:-200000}
IFS=, read -r -a CASES <<<"${CASES:-set 128 1 $N,get 128 1 $N,set 1 50 $N1,get 1 50 $N1}"

# cpu PID prints the CPU time of every thread of process PID, in ns.
cpu() {
	local s=0 run _
	for f in /proc/"$1"/task/*/schedstat; do
		read -r run _ <"$f" && s=$((s + run))
	done
	echo "$s"
}

declare -A QPS CPU
echo "load before: $(uptime)" >&2
for i in $(seq "$PAIRS"); do
	for side in $(alternate "$i" A B); do
		bin=$A args=${A_ARGS:-}
		[ "$side" = B ] && bin=$B args=${B_ARGS:-}
		port=$(free_port)
		persist=()
		if [ -n "${PERSIST:-}" ]; then
			mkdir -p "$WORK/dir-$i-$side"
			persist=(--persist "$PERSIST" --dir "$WORK/dir-$i-$side")
		fi
		# shellcheck disable=SC2086 # the flags are words
		KVBENCH=$bin start_kvstore "$port" "${persist[@]}" ${SERVE_ARGS:-} $args
		pid=${PORT_PID[$port]}
		for c in "${CASES[@]}"; do
			read -r op pipe conns n size keys <<<"$c"
			before=$(cpu "$pid")
			r=$(rps "$port" -t "$op" -P "$pipe" -c "$conns" -n "$n" -d "${size:-32}" -r "${keys:-1000000}")
			after=$(cpu "$pid")
			QPS[$side:$c]+="$r "
			CPU[$side:$c]+="$(((after - before) / n)) "
		done
		stop "$port"
		rm -rf "$WORK/dir-$i-$side"
	done
done
echo "load after: $(uptime)" >&2

echo "| case | measure | A (median) | B (median) | B/A | U-test p | pairs |"
echo "|---|---|---:|---:|---:|---:|---:|"
for c in "${CASES[@]}"; do
	read -r op pipe conns _ size _ <<<"$c"
	for m in QPS CPU; do
		declare -n arr=$m
		python3 - "$op ${size:-32} B P$pipe c$conns" "$m" "${arr[A:$c]}" "${arr[B:$c]}" <<'PY'
import sys
from utest import ab_row
case, m, a, b = sys.argv[1:]
ab_row([case, "requests/s" if m == "QPS" else "server CPU ns/request"], f"{case} {m}", a, b)
PY
	done
done
