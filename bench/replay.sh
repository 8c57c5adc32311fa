#!/usr/bin/env bash
# kvbench bench --replay of a 1,000,000-command MONITOR capture against
# redis-benchmark sending the same commands, against one redis-server
# (--save "" --appendonly no), alternated A B B A …
#
# The capture is generated, not recorded (deterministic, and MONITOR is
# never on while measuring): redis-benchmark -t set,get -n 500000 -r 100000
# as MONITOR would show it: 500,000 SETs of key:NNNNNNNNNNNN (12 digits,
# random below 100000, seed 1) with redis-benchmark's 3-byte value "xxx",
# then 500,000 GETs of such keys, dealt round robin over 50 client
# addresses, one microsecond apart. kvbench replays it with
# --connections 50 --pipeline 16 --threads 1 (one client per connection,
# redis-benchmark's one thread); redis-benchmark runs -t set,get
# -n 500000 -r 100000 -P 16 -c 50. Its QPS for the pair is the whole's:
# 1,000,000 / (500,000 / SET's rps + 500,000 / GET's rps). Prints the
# median QPS of each client, their ratio, the Mann-Whitney U-test p-value
# of the samples, and the median CPU seconds (user+sys, /usr/bin/time)
# of each client process; kvbench's include reading the capture.
#
# Usage: bench/replay.sh         (from the repository root; make bench-replay)
# Environment:
#   SAMPLES=5     runs per client (at least 5 for the U-test)
#   KVBENCH=path  a kvbench binary (default: bin/kvbench)
#   OUT=file      also write the per-run rows as CSV to this file
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

SAMPLES=${SAMPLES:-5}
HALF=500000
command -v python3 >/dev/null || die "python3 not found"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: apt-get install time"

capture=$WORK/monitor.txt
python3 - "$capture" "$HALF" <<'PY'
import random, sys
path, half = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1)
with open(path, "w") as f:
    f.write("OK\n")
    for i in range(2 * half):
        t = 1733412345000000 + i
        client = f"127.0.0.1:{40000 + i % 50}"
        key = f"key:{rnd.randrange(100000):012d}"
        cmd = f'"SET" "{key}" "xxx"' if i < half else f'"GET" "{key}"'
        f.write(f"{t // 1000000}.{t % 1000000:06d} [0 {client}] {cmd}\n")
PY

port=$(free_port)
start_redis "$port" --save "" --appendonly no
rows=$WORK/rows.csv
echo "client,sample,qps,cpu_s" >"$rows"

cpu() { awk '{ print $1 + $2 }' "$1"; }

# kv SAMPLE: one kvbench replay.
kv() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" "$KVBENCH" bench --port "$port" --replay "$capture" \
		--connections 50 --pipeline 16 --threads 1 --output json >"$WORK/out.json"
	local qps
	qps=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["requests"] == 1000000 and d["replay"]["commands"] == 1000000, d["replay"]
print(d["qps"])' "$WORK/out.json")
	echo "kvbench,$1,$qps,$(cpu "$WORK/time")" >>"$rows"
}

# rb SAMPLE: one redis-benchmark run of both tests.
rb() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" redis-benchmark -p "$port" -P 16 -c 50 -n $HALF \
		-r 100000 -t set,get --csv >"$WORK/out.csv" 2>"$WORK/rb.err" ||
		die "redis-benchmark failed: $(tail -n 3 "$WORK/rb.err")"
	local qps
	qps=$(awk -F'"' -v n=$HALF '$2 == "SET" || $2 == "GET" { t += n / $4; k++ } END { if (k == 2) printf "%.2f\n", 2 * n / t }' "$WORK/out.csv")
	[ -n "$qps" ] || die "redis-benchmark: no SET and GET lines in $(cat "$WORK/out.csv")"
	echo "redis-benchmark,$1,$qps,$(cpu "$WORK/time")" >>"$rows"
}

for s in $(seq "$SAMPLES"); do
	echo "sample $s/$SAMPLES" >&2
	for side in $(alternate "$s" kv rb); do "$side" "$s"; done
done
[ -z "${OUT:-}" ] || cp "$rows" "$OUT"

python3 - "$rows" <<'PY'
import csv, statistics, sys

from utest import utest as u_test

rows = list(csv.DictReader(open(sys.argv[1])))
q = {c: [float(r["qps"]) for r in rows if r["client"] == c] for c in ("redis-benchmark", "kvbench")}
cpu = {c: statistics.median(float(r["cpu_s"]) for r in rows if r["client"] == c) for c in q}
mr, mk = statistics.median(q["redis-benchmark"]), statistics.median(q["kvbench"])
print("| client | QPS (median of %d) | CPU s |" % len(q["kvbench"]))
print("|---|---:|---:|")
print(f"| redis-benchmark -t set,get | {mr:,.0f} | {cpu['redis-benchmark']:.2f} |")
print(f"| kvbench bench --replay | {mk:,.0f} | {cpu['kvbench']:.2f} |")
print()
print(f"ratio kvbench / redis-benchmark: {mk / mr:.2f}, U-test p = {u_test(q['kvbench'], q['redis-benchmark']):.3f}")
PY
