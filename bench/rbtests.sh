#!/usr/bin/env bash
# redis-benchmark's default tests, each run by redis-benchmark -t X and by
# kvbench bench --tests X against the same redis-server (--save ""
# --appendonly no), alternated A B B A … per test, with the same settings:
# -P 16 -c 50 -n 200000 -r 100000 -d 32 (kvbench: --pipeline 16
# --connections 50 --requests 200000 --keyspace 100000 --value-size 32
# --threads 1, redis-benchmark's one thread). Prints per test the median QPS
# of each client, their ratio, the Mann-Whitney U-test p-value of the QPS
# samples, and the median CPU seconds (user+sys, /usr/bin/time) of each
# client process; then the median ratio over the tests.
#
# The containers the pops read are filled before each pair, unmeasured, so
# that both clients pop real elements. A client's CPU seconds include its
# own unmeasured preparation: redis-benchmark's LRANGE tests first push
# -n elements ("LPUSH (needed to benchmark LRANGE)"), kvbench's GET writes
# the keyspace once when SET did not run before it in the same process.
#
# Usage: bench/rbtests.sh            (from the repository root; make bench-tests)
# Environment:
#   SAMPLES=5   runs per client and test (at least 5 for the U-test)
#   N=200000    requests per run
#   TESTS="ping_inline ping_mbulk set get ..."  the tests (default: all 19)
#   KVBENCH=path  a kvbench binary (default: bin/kvbench)
#   OUT=file      also write the per-run rows as CSV to this file
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

SAMPLES=${SAMPLES:-5}
TESTS=${TESTS:-ping_inline ping_mbulk set get incr lpush rpush lpop rpop sadd hset spop zadd zpopmin lrange_100 lrange_300 lrange_500 lrange_600 mset}
N=${N:-200000}
command -v python3 >/dev/null || die "python3 not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: apt-get install time"

port=$(free_port)
start_redis "$port" --save "" --appendonly no
rows=$WORK/rows.csv
echo "test,client,sample,qps,cpu_s" >"$rows"

cpu() { awk '{ print $1 + $2 }' "$1"; }

# kv TEST SAMPLE: one kvbench run.
kv() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" "$KVBENCH" bench --port "$port" --tests "$1" \
		--pipeline 16 --connections 50 --threads 1 --requests $N --keyspace 100000 --value-size 32 \
		--seed "$2" --output json >"$WORK/out.json"
	local qps
	qps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tests"][0]["qps"])' "$WORK/out.json")
	echo "$1,kvbench,$2,$qps,$(cpu "$WORK/time")" >>"$rows"
}

# rb TEST SAMPLE: one redis-benchmark run; its QPS is that of the test's
# own line (the LRANGE tests print their LPUSH fill first).
rb() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" redis-benchmark -p "$port" -P 16 -c 50 -n $N \
		-r 100000 -d 32 -t "$1" --csv >"$WORK/out.csv" 2>"$WORK/rb.err" ||
		die "redis-benchmark -t $1 failed: $(tail -n 3 "$WORK/rb.err")"
	local qps
	qps=$(awk -F'"' -v t="${1^^}" '$2 == t || index($2, t " ") == 1 { print $4 }' "$WORK/out.csv")
	[ -n "$qps" ] || die "redis-benchmark -t $1: no line for the test in $(cat "$WORK/out.csv")"
	echo "$1,redis-benchmark,$2,$qps,$(cpu "$WORK/time")" >>"$rows"
}

# fill TEST: gives a pop test at least 2 N elements to pop (unmeasured).
fill() {
	local cmd
	case $1 in
	lpop | rpop) cmd='LPUSH mylist __data__' ;;
	spop) cmd='SADD myset element:__key__' ;;
	zpopmin) cmd='ZADD myzset 1 element:__key__' ;;
	*) return 0 ;;
	esac
	"$KVBENCH" bench --port "$port" --command "$cmd" --command-key-pattern P --keyspace 1000000000 \
		--requests $((2 * N)) --pipeline 64 --connections 4 --seed "$RANDOM$RANDOM" >/dev/null
}

for t in $TESTS; do
	for s in $(seq "$SAMPLES"); do
		echo "$t: sample $s/$SAMPLES" >&2
		fill "$t"
		for side in $(alternate "$s" kv rb); do "$side" "$t" "$s"; done
	done
done
[ -z "${OUT:-}" ] || cp "$rows" "$OUT"

python3 - "$rows" <<'PY'
import csv, itertools, statistics, sys

from utest import utest as u_test

rows = list(csv.DictReader(open(sys.argv[1])))
print("| test | redis-benchmark QPS | kvbench QPS | ratio | U-test p | redis-benchmark CPU s | kvbench CPU s |")
print("|---|---:|---:|---:|---:|---:|---:|")
ratios, slower = [], []
for t in dict.fromkeys(r["test"] for r in rows):
    q = {c: [float(r["qps"]) for r in rows if r["test"] == t and r["client"] == c] for c in ("redis-benchmark", "kvbench")}
    cpu = {c: statistics.median(float(r["cpu_s"]) for r in rows if r["test"] == t and r["client"] == c) for c in q}
    mr, mk = statistics.median(q["redis-benchmark"]), statistics.median(q["kvbench"])
    p = u_test(q["kvbench"], q["redis-benchmark"])
    ratios.append(mk / mr)
    if mk < mr and p <= 0.05:
        slower.append(t)
    print(f"| {t} | {mr:,.0f} | {mk:,.0f} | {mk / mr:.2f} | {p:.3f} | {cpu['redis-benchmark']:.2f} | {cpu['kvbench']:.2f} |")
print()
print(f"median ratio kvbench / redis-benchmark over {len(ratios)} tests: {statistics.median(ratios):.2f}")
print("significantly slower (p <= 0.05):", ", ".join(slower) or "none")
PY
