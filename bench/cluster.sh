#!/usr/bin/env bash
# Clusters, on loopback, every comparison alternated A B A B:
#
#  1. the load generator: "kvbench bench --cluster --connections 1" (one
#     socket per master, one thread, each request to its key's master)
#     against "redis-benchmark --cluster -c 3 --threads 3" (one client
#     per master, each sending keys tagged for its master), both at
#     pipeline 128 on the same three-master Redis Cluster (no
#     persistence), SET then GET (the GETs read a keyspace kvbench wrote;
#     redis-benchmark's own key names miss, a shorter reply); the ratios
#     of QPS and of client CPU per request, and a SET with zipf keys that
#     shows the requests still follow their keys (the masters' shares);
#  2. the servers and the cost of routing: one "kvbench run" of
#     kvstore-cluster, redis-cluster (3 masters each), kvstore and redis
#     (one server each) in interleaved rounds, set mode, no persistence and
#     everysec; medians of QPS and of QPS per server CPU-second, ratios,
#     and the report's side-by-side tables (U test).
#
# Usage: bench/cluster.sh           (from the repository root; make bench-cluster)
# Environment:
#   SAMPLES=5        pairs in part 1, rounds in part 2 (at least 5)
#   N=2000000        requests per part-1 run; RUN_N=1000000 per part-2 round
#   PARTS="1 2"      the parts to run
#   KVBENCH_BASE=path  another kvbench build: part 1 alternates it too
#                    (A B C, then C B A) and prints this build against it
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SAMPLES=${SAMPLES:-5}
N=${N:-2000000}
RUN_N=${RUN_N:-1000000}
PARTS=${PARTS:-1 2}
KEYSPACE=200000

# start_cluster: three redis-server masters, cluster-enabled, no
# persistence, formed by redis-cli --cluster create; sets PORTS.
start_cluster() {
	local ports=() p
	while ((${#ports[@]} < 3)); do
		p=$(free_port)
		(exec 3<>/dev/tcp/127.0.0.1/$((p + 10000))) 2>/dev/null && continue
		[[ " ${ports[*]} " == *" $p "* ]] && continue
		local dir="$WORK/node-$p"
		mkdir -p "$dir"
		redis-server --port "$p" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
			--cluster-enabled yes --cluster-config-file nodes.conf --logfile "$WORK/cluster.log" </dev/null >/dev/null 2>&1 &
		PIDS+=($!)
		PORT_PID[$p]=$!
		wait_ping "$p" $! "$WORK/cluster.log"
		ports+=("$p")
	done
	redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-yes >"$WORK/create.log" 2>&1 ||
		die "redis-cli --cluster create failed: $(tail -n 3 "$WORK/create.log")"
	for _ in $(seq 200); do
		local ok=0
		for p in "${ports[@]}"; do
			redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
		done
		((ok == 3)) && { PORTS="${ports[*]}"; return; }
		sleep 0.05
	done
	die "the cluster did not reach cluster_state:ok"
}

flushall() { for p in $PORTS; do redis-cli -p "$p" flushall >/dev/null; done; }

# kv MODE [BINARY]: one kvbench run, prints its QPS; its CPU seconds
# (user+sys) per million requests go to $WORK/cpu.
kv() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" "${2:-$KVBENCH}" bench --cluster --port "${PORTS%% *}" --mode "$1" --connections 1 --pipeline 128 \
		--keyspace $KEYSPACE --requests "$N" --value-size 32 --key-pattern random --output json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["qps"])'
	cpu_per_m
}

# cpu_per_m: the CPU seconds in $WORK/time per million requests, to $WORK/cpu.
cpu_per_m() { awk -v n="$N" '{ printf "%.3f\n", ($1 + $2) * 1e6 / n }' "$WORK/time" >"$WORK/cpu"; }

# rb TEST: one redis-benchmark run, prints its requests per second (CPU
# as kv's).
rb() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" redis-benchmark --cluster -p "${PORTS%% *}" -t "$1" -c 3 --threads 3 -P 128 -r $KEYSPACE -n "$N" -d 32 --csv 2>"$WORK/rb.err" |
		awk -F'"' 'NF > 4 && $2 != "test" { print $4 }'
	cpu_per_m
}

# summarize NAME A-VALUES B-VALUES: medians, ratio of medians, U test.
summarize() {
	python3 - "$@" <<'PY'
import sys
name, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
med = lambda xs: sorted(xs)[len(xs)//2] if len(xs) % 2 else sum(sorted(xs)[len(xs)//2-1:len(xs)//2+1])/2
from utest import utest
p = utest(a, b)
fmt = (lambda x: f"{x:,.0f}") if med(a) > 100 else (lambda x: f"{x:.3f}")
print(f"| {name} | {fmt(med(a))} | {fmt(med(b))} | {med(a)/med(b):.2f} | {p:.3f} | {len(a)} |")
PY
}

if [[ " $PARTS " == *" 1 "* ]]; then
	start_cluster
	echo "## 1. load generator on one 3-master Redis Cluster (ports $PORTS), P128, $SAMPLES pairs of $N requests"
	echo
	echo "| test | kvbench (median) | redis-benchmark or KVBENCH_BASE (median) | ratio | U-test p | pairs |"
	echo "|:--|--:|--:|--:|--:|--:|"
	for mode in set get; do
		flushall
		if [[ $mode == get ]]; then
			# Both clients read keys that exist: kvbench's keyspace written
			# once, redis-benchmark's key:{tag}:… mostly covered by 10 passes.
			"$KVBENCH" bench --cluster --port "${PORTS%% *}" --mode set --key-pattern permutation --keyspace $KEYSPACE \
				--requests $KEYSPACE --pipeline 128 >/dev/null
			redis-benchmark --cluster -p "${PORTS%% *}" -t set -c 3 --threads 3 -P 128 -r $KEYSPACE -n $((10 * KEYSPACE)) -d 32 -q >/dev/null 2>&1
		fi
		A=() B=() CA=() CB=() O=() CO=()
		sides=(kv rb)
		[[ -n ${KVBENCH_BASE:-} ]] && sides=(kv base rb)
		for i in $(seq "$SAMPLES"); do
			for side in $(alternate "$i" "${sides[@]}"); do
				case $side in
				kv)
					A+=("$(kv $mode)")
					CA+=("$(cat "$WORK/cpu")")
					;;
				base)
					O+=("$(kv $mode "$KVBENCH_BASE")")
					CO+=("$(cat "$WORK/cpu")")
					;;
				rb)
					B+=("$(rb $mode)")
					CB+=("$(cat "$WORK/cpu")")
					;;
				esac
			done
		done
		echo "samples $mode: kvbench QPS ${A[*]}, CPU s/Mreq ${CA[*]}; redis-benchmark QPS ${B[*]}, CPU s/Mreq ${CB[*]}" >&2
		summarize "${mode^^} QPS" "${A[*]}" "${B[*]}"
		summarize "${mode^^} client CPU s per Mreq" "${CA[*]}" "${CB[*]}"
		if [[ -n ${KVBENCH_BASE:-} ]]; then
			echo "samples $mode: KVBENCH_BASE QPS ${O[*]}, CPU s/Mreq ${CO[*]}" >&2
			summarize "${mode^^} QPS, this build / KVBENCH_BASE" "${A[*]}" "${O[*]}"
			summarize "${mode^^} client CPU s per Mreq, this build / KVBENCH_BASE" "${CA[*]}" "${CO[*]}"
		fi
	done
	echo
	flushall
	/usr/bin/time -f "%U %S" -o "$WORK/time" "$KVBENCH" bench --cluster --port "${PORTS%% *}" --mode set --connections 1 --pipeline 128 \
		--keyspace $KEYSPACE --requests "$N" --value-size 32 --key-pattern zipf --zipf 0.99 --output json >"$WORK/zipf.json"
	cpu_per_m
	python3 - "$WORK/zipf.json" "$(cat "$WORK/cpu")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
shares = ", ".join("%s %.1f%%" % (n["addr"], 100 * n["requests"] / j["requests"]) for n in j["nodes"])
print(f"kvbench SET, zipf 0.99 keys: {j['qps']:,.0f} req/s, client CPU {sys.argv[2]} s per Mreq; masters' shares {shares}, MOVED {j['moved']}")
PY
	for p in $PORTS; do stop "$p"; done
	echo
fi

if [[ " $PARTS " == *" 2 "* ]]; then
	out=$WORK/run
	echo "## 2. servers: kvbench run --targets kvstore-cluster,redis-cluster,kvstore,redis, set, $SAMPLES rounds of $RUN_N requests"
	"$KVBENCH" run --targets kvstore-cluster,redis-cluster,kvstore,redis \
		--strategies nopersist,none,persist_everysec,aof_everysec --modes set --rounds "$SAMPLES" \
		--requests "$RUN_N" --keyspace "$RUN_N" --pipeline 128 --connections 1 --chart none --reference redis-cluster \
		--out "$out" --prefix cluster >"$WORK/run.md" 2>"$WORK/run.err" ||
		die "kvbench run failed: $(tail -n 5 "$WORK/run.err")"
	python3 - "$out"/cluster_detail_*.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
med = lambda xs: sorted(xs)[len(xs)//2] if len(xs) % 2 else sum(sorted(xs)[len(xs)//2-1:len(xs)//2+1])/2
def fig(target, strategy):
    rs = [r for r in rows if r["target"] == target and r["strategy"] == strategy]
    q = [float(r["qps"]) for r in rs]
    c = [float(r["requests"]) / float(r["server_cpu_s"]) for r in rs if float(r["server_cpu_s"] or 0) > 0]
    return med(q), med(c) if c else float("nan"), len(rs)
print()
print("| persistence | A | B | A QPS | B QPS | QPS ratio | A QPS/server CPU-s | B QPS/server CPU-s | per-CPU ratio | rounds |")
print("|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|")
pairs = [("none", "kvstore-cluster", "nopersist", "redis-cluster", "none"),
         ("everysec", "kvstore-cluster", "persist_everysec", "redis-cluster", "aof_everysec"),
         ("none", "kvstore-cluster", "nopersist", "kvstore", "nopersist"),
         ("everysec", "kvstore-cluster", "persist_everysec", "kvstore", "persist_everysec"),
         ("none", "redis-cluster", "none", "redis", "none"),
         ("everysec", "redis-cluster", "aof_everysec", "redis", "aof_everysec")]
for p, ta, sa, tb, sb in pairs:
    qa, ca, na = fig(ta, sa)
    qb, cb, nb = fig(tb, sb)
    print(f"| {p} | {ta} | {tb} | {qa:,.0f} | {qb:,.0f} | {qa/qb:.2f} | {ca:,.0f} | {cb:,.0f} | {ca/cb:.2f} | {min(na, nb)} |")
PY
	echo
	echo "The run's side-by-side tables (trimmed means, U test against redis-cluster):"
	awk 'f && /^## / { exit } /^## Targets side by side/ { f = 1 } f' "$WORK/run.md"
fi
