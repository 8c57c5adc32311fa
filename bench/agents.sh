#!/usr/bin/env bash
# One agent against two local agents (kvbench bench --segment I/2 with a
# common --start-at, merged by kvbench merge) on one redis-server --save ""
# --appendonly no, alternated A B A B: the merged QPS and each process's
# CPU (user+sys from /usr/bin/time), medians and ratios.
#
# Usage: make build && bench/agents.sh
# Environment:
#   PAIRS=5          A/B pairs per scenario (at least 3)
#   N=500000         requests per run (the same total for 1 or 2 agents)
#   KVBENCH=path     a kvbench binary (default: bin/kvbench; make build)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v /usr/bin/time >/dev/null || die "agents.sh: /usr/bin/time is required (apt-get install time)"

PAIRS=${PAIRS:-5}
N=${N:-500000}
KEYSPACE=1000000
tmp=$WORK

port=$(free_port)
start_redis "$port" --bind 127.0.0.1 --save "" --appendonly no

rows=$tmp/rows.csv
echo "scenario,agents,pair,requests,qps,cpu_s" >"$rows"
cpu() { awk '{printf "%.2f", $1 + $2}' "$1"; }
qps() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["qps"])' "$1"; }

# one SCENARIO PAIR ARGS...: the whole load in one process.
one() {
	local scenario=$1 pair=$2; shift 2
	/usr/bin/time -f "%U %S" -o "$tmp/t0" "$KVBENCH" bench --port "$port" --requests "$N" \
		--keyspace $KEYSPACE --threads 1 --seed 1 --output json "$@" >"$tmp/a.json"
	echo "$scenario,1,$pair,$N,$(qps "$tmp/a.json"),$(cpu "$tmp/t0")" >>"$rows"
}

# two SCENARIO PAIR ARGS...: the same load as segments 0/2 and 1/2.
two() {
	local scenario=$1 pair=$2; shift 2
	local start pids=()
	start=$(date -u -d '+1 sec' +%Y-%m-%dT%H:%M:%S.%NZ)
	for i in 0 1; do
		/usr/bin/time -f "%U %S" -o "$tmp/t$i" "$KVBENCH" bench --port "$port" --requests "$N" \
			--keyspace $KEYSPACE --threads 1 --seed 1 --output json --segment $i/2 --start-at "$start" "$@" >"$tmp/b$i.json" &
		pids+=($!)
	done
	wait "${pids[@]}"
	"$KVBENCH" merge --agents 2 --output json "$tmp/b0.json" "$tmp/b1.json" >"$tmp/m.json"
	echo "$scenario,2,$pair,$N,$(qps "$tmp/m.json"),$(cpu "$tmp/t0")+$(cpu "$tmp/t1")" >>"$rows"
}

pairs() {
	local scenario=$1; shift
	for p in $(seq "$PAIRS"); do
		echo "$scenario: pair $p/$PAIRS" >&2
		one "$scenario" "$p" "$@"
		two "$scenario" "$p" "$@"
	done
}

"$KVBENCH" bench --port "$port" --mode set --key-pattern sequential --requests $KEYSPACE \
	--keyspace $KEYSPACE --pipeline 128 --seed 1 >/dev/null
pairs get-P1-c50 --mode get --pipeline 1 --connections 50
pairs set-P16-c4 --mode set --key-pattern random --pipeline 16 --connections 4

python3 - "$rows" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| scenario | agents | merged QPS median | QPS per run | CPU s per process (median) |")
print("|---|---:|---:|---|---|")
med = {}
for sc in dict.fromkeys(r["scenario"] for r in rows):
    for a in ("1", "2"):
        rs = [r for r in rows if r["scenario"] == sc and r["agents"] == a]
        q = [float(r["qps"]) for r in rs]
        cpus = [[float(x) for x in r["cpu_s"].split("+")] for r in rs]
        per = [statistics.median(c[i] for c in cpus) for i in range(len(cpus[0]))]
        med[sc, a] = statistics.median(q)
        print(f"| {sc} | {a} | {med[sc, a]:,.0f} | {' '.join(f'{x:,.0f}' for x in q)} | {' + '.join(f'{c:.2f}' for c in per)} |")
print()
for sc in dict.fromkeys(r["scenario"] for r in rows):
    print(f"{sc}: 2 agents / 1 agent = {med[sc, '2'] / med[sc, '1']:.2f}")
EOF
