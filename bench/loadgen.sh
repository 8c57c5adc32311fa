#!/usr/bin/env bash
# Side-by-side benchmark of kvbench's load generator against redis-benchmark:
# one redis-server --save "" --appendonly no on a free loopback
# port, the two clients alternated A B A B with the same settings, medians
# and ratios of QPS and of client CPU seconds (user+sys) per million
# requests.
#
# Usage: bench/loadgen.sh            (from the repository root)
# Environment:
#   PAIRS=3        A/B pairs per scenario (at least 3)
#   N_PIPE=3000000 requests per pipelined run, N_P1=500000 per pipeline-1 run
#   SCENARIOS="set-P128-c1 get-P128-c1 set-P1-c50 get-P1-c50"  the ones to run
#   KVBENCH=path   a kvbench binary (default: built into the temp dir)
#   OUT=file       also append the per-run rows as CSV to this file
set -euo pipefail

PAIRS=${PAIRS:-3}
SCENARIOS=${SCENARIOS:-set-P128-c1 get-P128-c1 set-P1-c50 get-P1-c50}
N_PIPE=${N_PIPE:-3000000}
N_P1=${N_P1:-500000}
KEYSPACE=1000000
VALUE=32

for tool in redis-server redis-benchmark redis-cli python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "loadgen.sh: $tool is required" >&2; exit 1; }
done

tmp=$(mktemp -d)
redis_pid=
cleanup() {
	if [[ -n $redis_pid ]]; then
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -z ${KVBENCH:-} ]]; then
	go build -o "$tmp/kvbench" ./cmd/kvbench
	KVBENCH=$tmp/kvbench
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
	--daemonize no --logfile "$tmp/redis.log" &
redis_pid=$!
for _ in $(seq 200); do
	[[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]] && break
	kill -0 "$redis_pid" 2>/dev/null || { echo "redis-server exited" >&2; cat "$tmp/redis.log" >&2; exit 1; }
	sleep 0.05
done
[[ $(redis-cli -p "$port" ping) == PONG ]] || { echo "redis-server not ready" >&2; exit 1; }

rows=$tmp/rows.csv
echo "scenario,client,pair,requests,qps,cpu_s" >"$rows"

# cpu FILE: user+sys seconds from /usr/bin/time -f "%U %S".
cpu() { awk '{print $1 + $2}' "$1"; }

# kv SCENARIO PAIR N ARGS...: one kvbench run.
kv() {
	local scenario=$1 pair=$2 n=$3
	shift 3
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$KVBENCH" bench --port "$port" --requests "$n" \
		--value-size $VALUE --keyspace $KEYSPACE --threads 1 --seed 1 --output json "$@" >"$tmp/out.json"
	local qps
	qps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["qps"])' "$tmp/out.json")
	echo "$scenario,kvbench,$pair,$n,$qps,$(cpu "$tmp/time")" >>"$rows"
}

# rb SCENARIO PAIR N ARGS...: one redis-benchmark run.
rb() {
	local scenario=$1 pair=$2 n=$3
	shift 3
	/usr/bin/time -f "%U %S" -o "$tmp/time" redis-benchmark -p "$port" -n "$n" \
		-d $VALUE -r $KEYSPACE -q --csv "$@" >"$tmp/out.csv"
	local qps
	qps=$(awk -F'","' 'END {print $2}' "$tmp/out.csv")
	echo "$scenario,redis-benchmark,$pair,$n,$qps,$(cpu "$tmp/time")" >>"$rows"
}

# pairs SCENARIO N KVBENCH_ARGS -- REDIS_BENCHMARK_ARGS
pairs() {
	local scenario=$1 n=$2
	shift 2
	[[ " $SCENARIOS " == *" $scenario "* ]] || return 0
	local kvargs=() rbargs=()
	while [[ $1 != -- ]]; do kvargs+=("$1"); shift; done
	shift
	rbargs=("$@")
	for p in $(seq "$PAIRS"); do
		echo "$scenario: pair $p/$PAIRS" >&2
		kv "$scenario" "$p" "$n" "${kvargs[@]}"
		rb "$scenario" "$p" "$n" "${rbargs[@]}"
	done
}

# Keys are the same length for both clients: kvbench's bench:key:NNNNNN
# and redis-benchmark's key:NNNNNNNNNNNN (16 bytes), values 32 bytes.
# redis-benchmark picks keys uniformly at random (-r): kvbench does the same.
pairs set-P128-c1 "$N_PIPE" --mode set --key-pattern random --pipeline 128 --connections 1 \
	-- -t set -P 128 -c 1

# Prefill both key sets so that every GET of either client hits.
"$KVBENCH" bench --port "$port" --mode set --key-pattern sequential --requests $KEYSPACE \
	--keyspace $KEYSPACE --value-size $VALUE --pipeline 128 --seed 1 >/dev/null
"$KVBENCH" bench --port "$port" --mode set --key-pattern sequential --requests $KEYSPACE \
	--keyspace $KEYSPACE --value-size $VALUE --pipeline 128 --seed 1 --key-prefix key:000000 >/dev/null

pairs get-P128-c1 "$N_PIPE" --mode get --pipeline 128 --connections 1 -- -t get -P 128 -c 1
pairs set-P1-c50 "$N_P1" --mode set --key-pattern random --pipeline 1 --connections 50 -- -t set -P 1 -c 50
pairs get-P1-c50 "$N_P1" --mode get --pipeline 1 --connections 50 -- -t get -P 1 -c 50

[[ -n ${OUT:-} ]] && cat "$rows" >>"$OUT"

python3 - "$rows" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| scenario | client | QPS (median) | QPS runs | CPU s / Mreq (median) | CPU runs |")
print("|---|---|---:|---|---:|---|")
summary = {}
for sc in dict.fromkeys(r["scenario"] for r in rows):
    for cl in ("kvbench", "redis-benchmark"):
        rs = [r for r in rows if r["scenario"] == sc and r["client"] == cl]
        qps = [float(r["qps"]) for r in rs]
        cpm = [float(r["cpu_s"]) / int(r["requests"]) * 1e6 for r in rs]
        summary[sc, cl] = (statistics.median(qps), statistics.median(cpm))
        print(f"| {sc} | {cl} | {statistics.median(qps):,.0f} | {' '.join(f'{q:,.0f}' for q in qps)} "
              f"| {statistics.median(cpm):.2f} | {' '.join(f'{c:.2f}' for c in cpm)} |")
print()
print("| scenario | QPS ratio kvbench / redis-benchmark | CPU/Mreq ratio kvbench / redis-benchmark |")
print("|---|---:|---:|")
for sc in dict.fromkeys(r["scenario"] for r in rows):
    (kq, kc), (rq, rc) = summary[sc, "kvbench"], summary[sc, "redis-benchmark"]
    print(f"| {sc} | {kq / rq:.2f} | {kc / rc:.2f} |")
EOF
