#!/usr/bin/env bash
# The kvstore's two event loops against each other and against Redis over
# the whole load space: value size × pipeline depth × connections, GET and
# SET, three servers side by side, redis-benchmark as the client:
#
#   default   kvbench serve --io auto (io_uring where the kernel offers it)
#   other     kvbench serve with the other loop (--io epoll, or uring)
#   redis     redis-server --save "" --appendonly no
#
# Every sample of every cell is a fresh server (a GET cell's keyspace is
# written first, every key once, through redis-cli --pipe); the three
# sides of a sample run one after the other, in an order that goes through
# the six orders as the samples go on. A cell's peak RSS is the server's
# VmHWM at the end of its run (the fill included). Prints markdown: per
# cell the medians, default/redis and default/other with the one-sided
# exact U-test that the default runs below the goal (1.0 × redis, 0.9 ×
# the other loop), peak RSS and the test that the default's exceeds 1.2 ×
# the other loop's; then the cells that miss a goal.
#
#   bench/loops.sh                  (make bench-loops: 5 samples, all 60
#                                    cells; about 30 minutes on 2 vCPUs: 3
#                                    samples took 16)
#   SAMPLES=1 SIZES="1024 262144" bench/loops.sh
#                                   (make bench-loops-short: a smoke check,
#                                    about 3 minutes)
#   SIZES=262144 PIPES=16 CONNS=1 TESTS=get SAMPLES=7 bench/loops.sh
#   ROWS=loops.tsv bench/loops.sh   (every sample also kept in loops.tsv,
#                                    appended to: a run stopped half way
#                                    keeps what it measured)
#   REPORT=loops.tsv bench/loops.sh (the tables of a kept file, no run)
#   RT=1 bench/loops.sh             (servers and client at real-time
#                                    priority: steadier on a busy machine)
#   PIN=apart bench/loops.sh        (servers on the last CPU, client on
#                                    the first; PIN=same: both on the first)
#   WARM=1 bench/loops.sh           (each sample after an unmeasured run
#                                    like it on the same server: the steady
#                                    state rather than first accesses)
#
# Run lengths: 10,000 requests (P1, 1 conn), 50,000 (P1, 50), 100,000
# (P16, 1), 200,000 (P16, 50), 300,000 (P128, 1), 500,000 (P128, 50), at
# most MAX_BYTES of values (512 MiB: 512 requests of 1 MB), at least two
# pipelines per connection. Keyspace min(100,000, KEYSPACE_BYTES / size),
# KEYSPACE_BYTES 256 MiB. A cell whose pipelines hold more than
# MAX_INFLIGHT bytes of values at once (size × pipeline × connections;
# default 2 GiB, which leaves out 1 MB × 128 × 50 = 6.4 GB: redis-benchmark
# and redis-server would each buffer it) is not run, and its row says so.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SAMPLES=${SAMPLES:-5}
SIZES=${SIZES:-32 1024 16384 262144 1048576}
PIPES=${PIPES:-1 16 128}
CONNS=${CONNS:-1 50}
TESTS=${TESTS:-get set}
KEYSPACE_MAX=${KEYSPACE_MAX:-100000}
KEYSPACE_BYTES=${KEYSPACE_BYTES:-$((256 << 20))}
MAX_BYTES=${MAX_BYTES:-$((512 << 20))}
MAX_INFLIGHT=${MAX_INFLIGHT:-$((2 << 30))}

keyspace() { local k=$((KEYSPACE_BYTES / $1)); echo $((k < KEYSPACE_MAX ? k : KEYSPACE_MAX)); }

# requests SIZE PIPE CONNS: the cell's run length.
requests() {
	local size=$1 p=$2 c=$3 n
	case $p in
	1) n=$((c == 1 ? 10000 : 50000)) ;;
	16) n=$((c == 1 ? 100000 : 200000)) ;;
	*) n=$((c == 1 ? 300000 : 500000)) ;;
	esac
	local cap=$((MAX_BYTES / size)) floor=$((2 * p * c))
	((n > cap)) && n=$cap
	((n < floor)) && n=$floor
	echo "$n"
}

# The default loop (what --io auto picks here) and the other one.
probe=$(free_port)
start_kvstore "$probe"
DEFAULT=$(redis-cli -p "$probe" info server | tr -d '\r' | awk -F: '$1 == "io_loop" { print $2 }')
stop "$probe"
case $DEFAULT in
uring) OTHER=epoll ;;
epoll) OTHER=uring ;;
*) die "INFO server reports io_loop '$DEFAULT'" ;;
esac

# fill PORT SIZE: every key of the cell's keyspace (redis-benchmark's key
# names, key:%012d) written once with a SIZE-byte value.
fill() {
	local k
	k=$(keyspace "$2")
	python3 - "$k" "$2" <<'EOF' | redis-cli -p "$1" --pipe >/dev/null || die "fill of port $1 failed"
import sys
k, size = int(sys.argv[1]), int(sys.argv[2])
val = b"x" * size
out = sys.stdout.buffer
for i in range(k):
    key = b"key:%012d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, size, val))
EOF
}

# hwm PORT: the server's peak resident set size in bytes.
hwm() { awk '$1 == "VmHWM:" { print $2 * 1024 }' "/proc/${PORT_PID[$1]}/status"; }

# run SIDE TEST SIZE PIPE CONNS: one sample on a fresh server; appends
# "req/s peak-rss" to the cell's samples.
ROWS=${ROWS:-$WORK/loops.tsv} # test size pipe conns side rps rss
run() {
	local side=$1 t=$2 size=$3 p=$4 c=$5 port r
	port=$(free_port)
	case $side in
	default) start_kvstore "$port" --io auto ;;
	other) start_kvstore "$port" --io "$OTHER" ;;
	redis) start_redis "$port" --save "" --appendonly no ;;
	esac
	[ "$t" = set ] || fill "$port" "$size"
	local args=(-t "$t" -d "$size" -P "$p" -c "$c" -r "$(keyspace "$size")" -n "$(requests "$size" "$p" "$c")")
	[ "${WARM:-}" != 1 ] || rps "$port" "${args[@]}" >/dev/null
	r=$(rps "$port" "${args[@]}")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$size" "$p" "$c" "$side" "$r" "$(hwm "$port")" >>"$ROWS"
	stop "$port"
}

# order I: the sides of sample I, going through the six orders.
order() {
	case $(((${1} - 1) % 6)) in
	0) echo default other redis ;;
	1) echo redis other default ;;
	2) echo other redis default ;;
	3) echo default redis other ;;
	4) echo redis default other ;;
	5) echo other default redis ;;
	esac
}

began=$(date +%s)
load=$(cut -d' ' -f1-3 /proc/loadavg)
SKIPPED="$WORK/skipped.tsv"
: >"$SKIPPED"
if [ "${REPORT:-}" ]; then
	[ -f "$REPORT" ] || die "REPORT=$REPORT: no such file"
	ROWS=$REPORT TESTS=none load="(of the run that wrote $REPORT)"
fi
for size in $SIZES; do
	for t in $TESTS; do
		[ "$t" != none ] || continue
		for p in $PIPES; do
			for c in $CONNS; do
				if ((size * p * c > MAX_INFLIGHT)); then
					printf '%s\t%s\t%s\t%s\n' "$t" "$size" "$p" "$c" >>"$SKIPPED"
					continue
				fi
				for i in $(seq "$SAMPLES"); do
					for side in $(order "$i"); do
						run "$side" "$t" "$size" "$p" "$c"
					done
				done
				echo "$t size=$size P=$p c=$c: $(awk -F'\t' -v t="$t" -v s="$size" -v p="$p" -v c="$c" '$1 == t && $2 == s && $3 == p && $4 == c { printf "%s %s  ", $5, $6 }' "$ROWS")" >&2
			done
		done
	done
done
took=$(($(date +%s) - began))

echo
echo "Event loops: kvbench serve --io auto ($DEFAULT) and --io $OTHER against redis-server $(redis-server --version | awk '{sub(/^v=/, "", $3); print $3}'), redis-benchmark as the client; a fresh server per sample, medians; $(nproc) CPUs${PIN:+, servers and client pinned $PIN}$([ "${WARM:-}" != 1 ] || echo ", each sample after an unmeasured run like it"), load average $load at the start, $((took / 60)) min"
echo
python3 - "$ROWS" "$SKIPPED" "$DEFAULT" "$OTHER" "$SAMPLES" "$MAX_INFLIGHT" <<'EOF'
import collections, statistics, sys
from utest import pbelow

rows, skipped, default, other, nsamples, maxinflight = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
rps = collections.defaultdict(list)
rss = collections.defaultdict(list)
cells = []
for line in open(rows):
    t, size, p, c, side, r, m = line.rstrip("\n").split("\t")
    cell = (t, int(size), int(p), int(c))
    if cell not in cells:
        cells.append(cell)
    rps[cell, side].append(float(r))
    rss[cell, side].append(float(m))
skip = [tuple(int(x) if i else x for i, x in enumerate(l.rstrip("\n").split("\t"))) for l in open(skipped)]

def size_name(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB" if n >= 1 << 10 else f"{n} B"

def pv(x):
    return f"{x:.3f}" if x is not None else "—"

misses, shortfalls = [], []
d, o = default, other
print(f"| test | value | pipeline | conns | {d} (req/s) | {o} (req/s) | redis (req/s) | {d}/redis | p({d} < redis) | {d}/{o} | p({d} < 0.9 {o}) | peak RSS {d} / {o} / redis (MiB) | RSS {d}/{o} | p({d} > 1.2 {o}) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for cell in sorted(cells + skip, key=lambda x: (x[0], x[1], x[2], x[3])):
    t, size, p, c = cell
    name = f"{t.upper()} {size_name(size)} P{p} c{c}"
    if cell in skip:
        print(f"| {t.upper()} | {size_name(size)} | {p} | {c} | not run: {size * p * c / 1e9:.1f} GB of values in flight at once, over MAX_INFLIGHT ({maxinflight / 1e9:.1f} GB) | | | | | | | | | |")
        continue
    a, b, r = rps[cell, "default"], rps[cell, "other"], rps[cell, "redis"]
    ma, mb, mr = statistics.median(a), statistics.median(b), statistics.median(r)
    many = len(a) > 1 and len(b) > 1 and len(r) > 1
    p_r = pbelow(a, r, 1.0) if many else None
    p_o = pbelow(a, b, 0.9) if many else None
    ra, rb, rr = rss[cell, "default"], rss[cell, "other"], rss[cell, "redis"]
    mra, mrb, mrr = statistics.median(ra), statistics.median(rb), statistics.median(rr)
    p_m = pbelow([1.2 * x for x in rb], ra, 1.0) if many else None
    print(f"| {t.upper()} | {size_name(size)} | {p} | {c} | {ma:,.0f} | {mb:,.0f} | {mr:,.0f} | {ma / mr:.2f} | {pv(p_r)} | {ma / mb:.2f} | {pv(p_o)} | {mra / 2**20:,.0f} / {mrb / 2**20:,.0f} / {mrr / 2**20:,.0f} | {mra / mrb:.2f} | {pv(p_m)} |")
    for what, ratio, goal, p_ in ((f"below redis", ma / mr, 1.0, p_r), (f"below 0.9 × {o}", ma / mb, 0.9, p_o)):
        if p_ is not None and p_ <= 0.05:
            misses.append(f"{name}: {what} ({ratio:.2f}, p = {p_:.3f})")
        elif ratio < goal:
            shortfalls.append(f"{name}: median {what} ({ratio:.2f}, p = {pv(p_)}: not significant)")
    if p_m is not None and p_m <= 0.05:
        misses.append(f"{name}: peak RSS over 1.2 × {o}'s ({mra / mrb:.2f}, p = {p_m:.3f})")
    elif mra > 1.2 * mrb:
        shortfalls.append(f"{name}: median peak RSS over 1.2 × {o}'s ({mra / mrb:.2f}, p = {pv(p_m)}: not significant)")

print()
nsamples = min((len(v) for v in rps.values()), default=0)
if nsamples < 3:
    print(f"{nsamples} sample(s) per side in some cell: no U-test there; the lists below go by medians alone.")
    print()
print(f"Cells where {d} misses a goal, significantly (one-sided exact U-test, p ≤ 0.05):")
print("\n".join(f"- {m}" for m in misses) or "- none")
print()
print("Medians short of a goal without significance:")
print("\n".join(f"- {m}" for m in shortfalls) or "- none")
print()
print("Samples (req/s; peak RSS MiB), in run order:")
for cell in cells:
    t, size, p, c = cell
    parts = []
    for side, label in (("default", d), ("other", o), ("redis", "redis")):
        parts.append(f"{label} " + " ".join(f"{x:.0f}" for x in rps[cell, side]) + " (" + " ".join(f"{x / 2**20:.0f}" for x in rss[cell, side]) + ")")
    print(f"- {t.upper()} {size_name(size)} P{p} c{c}: " + "; ".join(parts))
EOF
