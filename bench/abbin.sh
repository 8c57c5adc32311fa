#!/usr/bin/env bash
# Two kvbench binaries' load generators against the same servers, A B B A
# …: kvbench bench of each, SET and GET at pipeline 128 with one
# connection and at pipeline 1 with 50 connections, against a fresh
# `kvbench serve` (of binary A) and a fresh redis-server. Prints per case
# the median QPS of each binary, their ratio B/A and the U test's p.
# What a change of the load generator costs (or gains) end to end.
#
# Usage: A=old/kvbench B=new/kvbench bench/abbin.sh      (make bench-ab)
# Environment:
#   PAIRS=8     alternating pairs per case (at least 4 for the U test)
#   N=1000000   requests of a pipeline-128 run (pipeline 1: N/5)
#   A_ARGS, B_ARGS  more bench flags for A's or B's runs ("--interval 0")
set -euo pipefail
cd "$(dirname "$0")/.."
A=${A:?A=path of the first kvbench binary}
B=${B:?B=path of the second kvbench binary}
KVBENCH=$A
. bench/lib.sh
[ -x "$B" ] || die "$B: not an executable"

PAIRS=${PAIRS:-8}
N=${N:-1000000}

# qps BIN PORT MODE PIPELINE CONNECTIONS REQUESTS [FLAGS...]
qps() {
	local bin=$1 port=$2 mode=$3 pipe=$4 conns=$5 n=$6
	shift 6
	"$bin" bench --port "$port" --mode "$mode" --pipeline "$pipe" --connections "$conns" --threads 1 \
		--requests "$n" --keyspace "$n" --seed 1 --output json "$@" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["qps"])'
}

echo "| server | case | A (median) | B (median) | B/A | U-test p | pairs |"
echo "|---|---|---:|---:|---:|---:|---:|"
for server in kvstore redis; do
	for c in "set 128 1 $N" "get 128 1 $N" "set 1 50 $((N / 5))" "get 1 50 $((N / 5))"; do
		read -r mode pipe conns n <<<"$c"
		as=() bs=()
		for i in $(seq "$PAIRS"); do
			port=$(free_port)
			if [ "$server" = kvstore ]; then start_kvstore "$port"; else start_redis "$port" --save "" --appendonly no; fi
			if [ "$mode" = get ]; then qps "$A" "$port" set 128 1 "$n" >/dev/null; fi
			# shellcheck disable=SC2086 # the flags are words
			if ((i % 2)); then
				as+=("$(qps "$A" "$port" "$mode" "$pipe" "$conns" "$n" ${A_ARGS:-})")
				bs+=("$(qps "$B" "$port" "$mode" "$pipe" "$conns" "$n" ${B_ARGS:-})")
			else
				bs+=("$(qps "$B" "$port" "$mode" "$pipe" "$conns" "$n" ${B_ARGS:-})")
				as+=("$(qps "$A" "$port" "$mode" "$pipe" "$conns" "$n" ${A_ARGS:-})")
			fi
			stop "$port"
		done
		python3 - "$server" "$mode P$pipe c$conns" "${as[*]}" "${bs[*]}" <<'PY'
import sys
from utest import ab_row
server, case, a, b = sys.argv[1:]
ab_row([server, case], f"{server} {case}", a, b)
PY
	done
done
