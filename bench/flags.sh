#!/usr/bin/env bash
# One kvbench binary with a flag against the same binary without it, A B
# B A …, against one redis-server (--save "" --appendonly no): kvbench
# bench --pipeline 16 --connections 50 --requests N, GET over a prefilled
# keyspace and SET, for each flag of FLAGS. Prints per flag and mode the
# median QPS without (A) and with (B) the flag, their ratio B/A and the U
# test's p. What a client option costs end to end: RESP3 (--resp3) and
# random values (--random-data) by default.
#
# Usage: bench/flags.sh                   (from the repository root; make bench-flags)
# Environment:
#   FLAGS="--resp3 --random-data"  the flags, each compared alone
#   MODES="get set"  the modes
#   PAIRS=8     alternating pairs per flag and mode (at least 4 for the U test)
#   N=1000000   requests per run
#   KEYSPACE=100000  keys (the GET runs read them after one prefill)
#   KVBENCH=path  a kvbench binary (default: bin/kvbench)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
command -v python3 >/dev/null || die "python3 not found"

FLAGS=${FLAGS:---resp3 --random-data}
MODES=${MODES:-get set}
PAIRS=${PAIRS:-8}
N=${N:-1000000}
KEYSPACE=${KEYSPACE:-100000}

port=$(free_port)
start_redis "$port" --save "" --appendonly no
"$KVBENCH" bench --port "$port" --mode get --prefill --keyspace "$KEYSPACE" --requests 1 --seed 1 -q >/dev/null 2>&1

# qps MODE [FLAGS...]: one run's QPS.
qps() {
	local mode=$1
	shift
	"$KVBENCH" bench --port "$port" --mode "$mode" --pipeline 16 --connections 50 \
		--requests "$N" --keyspace "$KEYSPACE" --seed 1 --output json "$@" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["qps"])'
}

echo "| flag | mode | without (median QPS) | with (median QPS) | with/without | U-test p | pairs |"
echo "|---|---|---:|---:|---:|---:|---:|"
for flag in $FLAGS; do
	for mode in $MODES; do
		as=() bs=()
		for i in $(seq "$PAIRS"); do
			if ((i % 2)); then
				as+=("$(qps "$mode")")
				bs+=("$(qps "$mode" "$flag")")
			else
				bs+=("$(qps "$mode" "$flag")")
				as+=("$(qps "$mode")")
			fi
		done
		python3 - "$flag" "$mode" "${as[*]}" "${bs[*]}" <<'PY'
import sys
from utest import ab_row
flag, mode, a, b = sys.argv[1:]
ab_row([f"`{flag}`", mode], f"{flag} {mode}", a, b, ("without", "with"))
PY
	done
done
