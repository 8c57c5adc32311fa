#!/usr/bin/env bash
# kvbench serve against redis-server --save "" --appendonly no, driven by the
# same neutral client (redis-benchmark), alternating A B B A … with a fresh
# server for every sample. Prints markdown: medians, kvstore/redis ratios,
# the two-sided exact U-test of each row and every sample.
#
#   bench/serve.sh [samples]        (default 5 per side; make bench-serve)
#   ALLOC=go bench/serve.sh         (the go allocator instead of pool)
#   IO=epoll bench/serve.sh         (the kvstore's event loop: auto, epoll, uring)
#
# Per sample, on one fresh server: SET and GET of 32 B at pipeline 128 over
# one connection, RSS after a prefill of 1,000,000 keys, then SET and GET at
# pipeline 1 (one request per round trip) with 50 and with 1,000
# connections, each with the server's CPU per request: the CPU time of all
# its threads (/proc/PID/task/*/schedstat, in nanoseconds) over the run,
# divided by its requests. Then, once per side, the system calls per request
# at pipeline 1 (perf stat, raw_syscalls:sys_enter and the main calls one by
# one), in runs of their own: counting every system call slows them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SAMPLES=${1:-5}
ALLOC=${ALLOC:-pool}
IO=${IO:-auto}
N=${N:-1000000}  # requests for the pipelined runs
N1=${N1:-200000} # requests for the pipeline-1 runs
KEYS=1000000
CONNS="50 1000"

ROWS="$WORK/rows.tsv" # metric, target, sample
: >"$ROWS"
add() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$ROWS"; }

# rps_cpu PORT N ARGS... runs redis-benchmark -n N and prints its requests
# per second and the server's CPU microseconds per request.
rps_cpu() {
	local port=$1 n=$2 pid=${PORT_PID[$1]} before after r; shift 2
	before=$(cpu_ns "$pid")
	r=$(rps "$port" -n "$n" "$@")
	after=$(cpu_ns "$pid")
	echo "$r $(awk -v a="$before" -v b="$after" -v n="$n" 'BEGIN { printf "%.3f", (b - a) / 1000 / n }')"
}

start() { # target port
	if [ "$1" = kvstore ]; then start_kvstore "$2" --alloc "$ALLOC" --io "$IO"; else start_redis "$2" --save "" --appendonly no; fi
}

run_one() { # target
	local t=$1 port c r
	port=$(free_port)
	start "$t" "$port"
	[ "$t" = redis ] || KV_IO=$(redis-cli -p "$port" info server | tr -d '\r' | awk -F: '$1 == "io_loop" { print $2 }')
	add set128 "$t" "$(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t set)"
	redis-cli -p "$port" flushall >/dev/null
	prefill "$port" $KEYS
	sleep 1 # idle: the kvstore unmaps the index arrays it outgrew (see alloc.sh)
	add rss "$t" "$(rss "$port")"
	add get128 "$t" "$(rps "$port" -P 128 -c 1 -d 32 -r $KEYS -n "$N" -t get)"
	for c in $CONNS; do
		for op in set get; do
			out=$(rps_cpu "$port" "$N1" -P 1 -c "$c" -d 32 -r $KEYS -t "$op")
			read -r r cpu_us <<<"$out"
			add "${op}1c$c" "$t" "$r"
			add "${op}1c${c}cpu" "$t" "$cpu_us"
		done
	done
	stop "$port"
}

for i in $(seq "$SAMPLES"); do
	for t in $(alternate "$i" kvstore redis); do
		echo "sample $i: $t" >&2
		run_one "$t"
	done
done

# System calls per request, one run per side and cell, under perf stat.
SYSCALLS=(read write writev epoll_wait epoll_pwait io_uring_enter)
if command -v perf >/dev/null && perf list 'syscalls:sys_enter_read' 2>/dev/null | grep -q sys_enter_read; then
	for t in kvstore redis; do
		echo "system calls: $t" >&2
		port=$(free_port)
		start "$t" "$port"
		prefill "$port" 100000
		for c in $CONNS; do
			for op in set get; do
				events=raw_syscalls:sys_enter
				for s in "${SYSCALLS[@]}"; do events+=",syscalls:sys_enter_$s"; done
				perf stat -x, -e "$events" -p "${PORT_PID[$port]}" -o "$WORK/perf.csv" &
				perf_pid=$!
				sleep 0.5 # perf attached
				rps "$port" -n "$N1" -P 1 -c "$c" -d 32 -r 100000 -t "$op" >/dev/null
				kill -INT "$perf_pid"
				wait "$perf_pid" || true
				# perf's CSV: count, unit, event name.
				awk -F, -v n="$N1" -v m="${op}1c${c}sys" -v t="$t" '
					$1 ~ /^[0-9]+$/ {
						name = $3; sub(/^(raw_)?syscalls:sys_enter_?/, "", name)
						if (name == "") name = "all"
						if (name == "all" || $1 > 0) printf "%s%s\t%s\t%.3f\n", m, (name == "all" ? "" : ":" name), t, $1 / n
					}' "$WORK/perf.csv" >>"$ROWS"
			done
		done
		stop "$port"
	done
else
	echo "perf with syscall tracepoints not available: no system call counts" >&2
fi

echo
echo "kvbench serve (--alloc $ALLOC, --io $IO: io_loop $KV_IO) vs redis-server $(redis-server --version | awk '{print $3}'), $SAMPLES samples per side, medians; p: two-sided exact U-test"
echo
python3 - "$ROWS" "$KEYS" <<'EOF'
import collections, re, statistics, sys
from utest import utest

rows, keys = sys.argv[1], int(sys.argv[2])
samples = collections.defaultdict(list)
order = []
for line in open(rows):
    metric, target, value = line.rstrip("\n").split("\t")
    if metric not in order:
        order.append(metric)
    samples[metric, target].append(float(value))

def name(m):
    fixed = {"set128": "SET -P 128 -c 1 (req/s)", "get128": "GET -P 128 -c 1 (req/s)",
             "rss": f"RSS after {keys:,} keys × 32 B (bytes)"}
    if m in fixed:
        return fixed[m]
    op, conns, kind, call = re.fullmatch(r"(set|get)1c(\d+)(cpu|sys)?(?::(\w+))?", m).groups()
    what = {"cpu": "server CPU (µs/request)", "sys": "system calls per request", None: "(req/s)"}[kind]
    return f"{op.upper()} -P 1 -c {conns} {what}" + (f": {call}" if call else "")

def fmt(v):
    return f"{v:,.0f}" if v >= 1000 else f"{v:.3g}" if v < 10 else f"{v:.1f}"

print("| test | kvstore | redis | kvstore/redis | p | kvstore samples | redis samples |")
print("|---|---:|---:|---:|---:|---|---|")
for m in order:
    k, r = samples[m, "kvstore"], samples[m, "redis"]
    if not k and not r:
        continue
    km = statistics.median(k) if k else None
    rm = statistics.median(r) if r else None
    ratio = f"**{km / rm:.2f}**" if km is not None and rm else "—"
    p = f"{utest(k, r):.3f}" if len(k) > 1 and len(r) > 1 else "—"
    show = lambda xs: " ".join(f"{x:g}" for x in xs)
    print(f"| {name(m)} | {fmt(km) if km is not None else '—'} | {fmt(rm) if rm is not None else '—'} | {ratio} | {p} | {show(k)} | {show(r)} |")
EOF
