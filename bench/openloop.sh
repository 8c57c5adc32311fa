#!/usr/bin/env bash
# The open loop of kvbench bench, against its own closed loop.
#
# bench/openloop.sh [held]   (the default; make bench-openloop)
#   For each server and each case (connections x pipeline), the closed
#   loop's peak (median of PEAKS runs), then open-loop runs at rising
#   fractions of that peak: the largest rate HELD, that is whose QPS came
#   within 5% of the rate with a send lag p99 under LAG_US, it and every
#   fraction below it. The goal: at least half of the peak in every case.
#   With BASE, another binary's open loop runs each rate too (alternated)
#   and gets its own column. Beside each figure: the client's CPU time
#   (user+sys) per request, from getrusage.
#
# bench/openloop.sh accuracy
#   --connections 1 --pipeline 1 against an idle server: the open loop's
#   latency p50 next to the closed loop's and its send lag, at rates from
#   1,000/s to half the closed loop's maximum; PAIRS closed/open pairs per
#   rate (A B, then B A); BASE adds a third side.
#
# Run from the repository root after make build. Environment:
#   SERVERS="redis kvstore"   redis (redis-server) and/or kvstore (kvbench serve)
#   CASES="1x1 4x1 50x1 1x4 4x4 50x4"   connections x pipeline
#   PEAKS=3          closed-loop runs per case (median)
#   FRACTIONS="0.25 0.5 0.6 0.7 0.8 0.9"  of the peak, tried in this order
#   LAG_US=100       the send lag p99 a held rate stays under, µs
#   DURATION=2s      length of each run
#   THREADS=         --threads of kvbench bench (default: its own)
#   BASE=path        another kvbench binary (e.g. the code before a change)
#   OUT=file         also append the per-run rows as CSV to this file
#   accuracy only: PAIRS=3, RATES="1000 2000 5000 10000 20000", SERVER=kvstore
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || die "python3 is required"

MODE=${1:-held}
DURATION=${DURATION:-2s}
BASE=${BASE:-}
[[ -z $BASE || -x $BASE ]] || die "BASE=$BASE is not an executable"

rows=$WORK/rows.csv
echo "server,case,rate,side,pair,requests,qps,p50_us,p99_us,lag_p50_us,lag_p99_us,lag_max_us,cpu_us_per_req" >"$rows"

# one SERVER CASE RATE SIDE PAIR BIN PORT [ARGS...]: one run (--mode get
# after the case's prefill), a row of $rows; prints the row.
one() {
	local server=$1 case=$2 rate=$3 side=$4 pair=$5 bin=$6 port=$7
	shift 7
	python3 - "$server" "$case" "$rate" "$side" "$pair" "$WORK/out.json" "$bin" bench --port "$port" \
		--mode get --keyspace 100000 --duration "$DURATION" --seed 1 --output json "$@" <<-'EOF' | tee -a "$rows"
		import json, resource, subprocess, sys
		server, case, rate, side, pair, path = sys.argv[1:7]
		before = resource.getrusage(resource.RUSAGE_CHILDREN)
		with open(path, "w") as out:
		    p = subprocess.run(sys.argv[7:], stdout=out, stderr=subprocess.PIPE, text=True)
		if p.returncode != 0:
		    sys.exit("kvbench bench failed: " + p.stderr[-500:])
		after = resource.getrusage(resource.RUSAGE_CHILDREN)
		cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
		j = json.load(open(path))
		lag = j.get("send_lag_us") or {}
		print(server, case, rate, side, pair, j["requests"], round(j["qps"]), j["latency_us"]["p50"], j["latency_us"]["p99"],
		      lag.get("p50", ""), lag.get("p99", ""), lag.get("max", ""), round(cpu / max(j["requests"], 1) * 1e6, 2), sep=",")
	EOF
}

# start SERVER starts a fresh server of that kind on port $port (set
# here), prefilled.
start() {
	port=$(free_port)
	case $1 in
	kvstore) start_kvstore "$port" ;;
	redis) start_redis "$port" --save "" --appendonly no ;;
	*) die "server $1: want kvstore or redis" ;;
	esac
	"$KVBENCH" bench --port "$port" --mode set --keyspace 100000 --requests 100000 --pipeline 64 --seed 1 -q >/dev/null
}

held() {
	local servers=${SERVERS:-redis kvstore} cases=${CASES:-1x1 4x1 50x1 1x4 4x4 50x4}
	local peaks=${PEAKS:-3} fractions=${FRACTIONS:-0.25 0.5 0.6 0.7 0.8 0.9}
	local lag=${LAG_US:-100} threads=()
	[[ -n ${THREADS:-} ]] && threads=(--threads "$THREADS")
	((peaks >= 1)) || die "PEAKS=$peaks: want at least 1"
	local sides="new"
	[[ -n $BASE ]] && sides="new base"
	uptime >&2
	for server in $servers; do
		local port
		start "$server"
		for case in $cases; do
			local c=${case%x*} p=${case#*x}
			[[ $c =~ ^[0-9]+$ && $p =~ ^[0-9]+$ ]] || die "case $case: want CONNECTIONSxPIPELINE, e.g. 50x1"
			local args=(--connections "$c" --pipeline "$p" "${threads[@]}")
			for i in $(seq "$peaks"); do one "$server" "$case" 0 closed "$i" "$KVBENCH" "$port" "${args[@]}" >&2; done
			local peak
			peak=$(awk -F, -v s="$server" -v c="$case" '$1 == s && $2 == c && $4 == "closed" { print $7 }' "$rows" |
				sort -g | awk '{ a[NR] = $1 } END { print int(a[int((NR + 1) / 2)]) }')
			echo "$server $case: closed-loop peak $peak req/s" >&2
			declare -A failed=()
			local i=0
			for f in $fractions; do
				local rate
				rate=$(awk -v f="$f" -v p="$peak" 'BEGIN { printf "%d", f * p }')
				i=$((i + 1))
				local any=""
				for side in $(alternate "$i" $sides); do
					[[ -n ${failed[$side]:-} ]] && continue
					any=1
					local bin=$KVBENCH
					[[ $side == base ]] && bin=$BASE
					local row
					row=$(one "$server" "$case" "$rate" "$side" 1 "$bin" "$port" "${args[@]}" --rate "$rate")
					echo "$row" >&2
					awk -F, -v r="$rate" -v l="$lag" '{ exit !($7 >= 0.95 * r && $11 != "" && $11 < l) }' <<<"$row" || failed[$side]=1
				done
				[[ -z $any ]] && break
			done
			unset failed
		done
		stop "$port"
	done
}

report_held() {
	echo "$(uname -srm), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	echo "kvbench bench --mode get (100,000 keys, prefilled), $DURATION runs; held: QPS within 5% of the rate, send lag p99 < ${LAG_US:-100} us"
	python3 - "$rows" "$BASE" "${LAG_US:-100}" <<-'EOF'
		import csv, statistics, sys
		rows, base, lag = list(csv.DictReader(open(sys.argv[1]))), sys.argv[2], float(sys.argv[3])
		sides = ["new"] + (["base"] if base else [])
		f = lambda v: float(v) if v not in ("", None) else float("nan")
		head = "%-8s %5s %9s %7s" % ("server", "case", "peak/s", "cpu/req")
		for s in sides:
		    head += " | %-4s %9s %5s %8s %8s %7s %-28s" % (s, "held/s", "share", "lag p99", "p99", "cpu/req", "first not held (qps, lag p99)")
		print(head + "   (us)")
		goal = True
		for key in dict.fromkeys((r["server"], r["case"]) for r in rows):
		    rs = [r for r in rows if (r["server"], r["case"]) == key]
		    closed = [r for r in rs if r["side"] == "closed"]
		    peak = statistics.median(f(r["qps"]) for r in closed)
		    line = "%-8s %5s %9.0f %7.2f" % (key[0], key[1], peak, statistics.median(f(r["cpu_us_per_req"]) for r in closed))
		    for s in sides:
		        held, miss = None, None
		        for r in rs:
		            if r["side"] != s:
		                continue
		            ok = f(r["qps"]) >= 0.95 * f(r["rate"]) and f(r["lag_p99_us"]) < lag
		            if ok and miss is None:
		                held = r
		            elif not ok and miss is None:
		                miss = r
		        if held:
		            share = f(held["rate"]) / peak
		            goal &= s != "new" or share >= 0.5
		            line += " | %-4s %9.0f %4.0f%% %8.1f %8.1f %7.2f" % (s, f(held["rate"]), 100 * share, f(held["lag_p99_us"]), f(held["p99_us"]), f(held["cpu_us_per_req"]))
		        else:
		            goal &= s != "new"
		            line += " | %-4s %9s %5s %8s %8s %7s" % (s, "none", "-", "-", "-", "-")
		        line += " %-28s" % ("%s/s (%s, %s)" % (miss["rate"], miss["qps"], miss["lag_p99_us"] or "-") if miss else "-")
		    print(line)
		print("goal (every case holds at least half its closed-loop peak): " + ("met" if goal else "NOT met"))
	EOF
}

accuracy() {
	local pairs=${PAIRS:-3} rates=${RATES:-1000 2000 5000 10000 20000} server=${SERVER:-kvstore}
	((pairs >= 3)) || die "PAIRS=$pairs: want at least 3"
	local port
	start "$server"
	local args=(--connections 1 --pipeline 1 --threads 1)
	for i in $(seq "$pairs"); do one "$server" 1x1 0 closed "$i" "$KVBENCH" "$port" "${args[@]}" >/dev/null; done
	local max
	max=$(awk -F, '$4 == "closed" { print $7 }' "$rows" | sort -g | awk '{ a[NR] = $1 } END { print int(a[int((NR + 1) / 2)]) }')
	rates="$rates $((max / 2))"
	echo "server: $server; closed loop at pipeline 1: median $max req/s; rates: $rates" >&2
	local sides="closed open"
	[[ -n $BASE ]] && sides="$sides base"
	for rate in $rates; do
		for i in $(seq "$pairs"); do
			for side in $(alternate "$i" $sides); do
				case $side in
				closed) one "$server" 1x1 "$rate" closed "$i" "$KVBENCH" "$port" "${args[@]}" ;;
				open) one "$server" 1x1 "$rate" open "$i" "$KVBENCH" "$port" "${args[@]}" --rate "$rate" ;;
				base) one "$server" 1x1 "$rate" base "$i" "$BASE" "$port" "${args[@]}" --rate "$rate" ;;
				esac >/dev/null
			done
		done
	done
	echo "$(uname -srm), $(nproc) CPUs; $server; --mode get --pipeline 1 --connections 1 --duration $DURATION; medians of $pairs runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	python3 - "$rows" "$BASE" <<-'EOF'
		import csv, statistics, sys
		rows, base = [r for r in csv.DictReader(open(sys.argv[1])) if r["rate"] != "0"], sys.argv[2]
		med = lambda side, rate, k: statistics.median(float(r[k]) for r in rows if r["side"] == side and r["rate"] == rate)
		head = "rate/s  n  requests  closed p50  open p50  open-closed  open/closed  lag p50  lag p99  lag max  cpu/req"
		if base:
		    head += "  base p50  base-closed  base cpu/req"
		print(head + "   (us)")
		for rate in dict.fromkeys(r["rate"] for r in rows):
		    n = sum(r["side"] == "open" and r["rate"] == rate for r in rows)
		    c, o = med("closed", rate, "p50_us"), med("open", rate, "p50_us")
		    line = "%6s %2d %9.0f %11.1f %9.1f %12.1f %12.2f %8.1f %8.1f %8.0f %8.2f" % (
		        rate, n, med("open", rate, "requests"), c, o, o - c, o / c,
		        med("open", rate, "lag_p50_us"), med("open", rate, "lag_p99_us"), med("open", rate, "lag_max_us"), med("open", rate, "cpu_us_per_req"))
		    if base:
		        b = med("base", rate, "p50_us")
		        line += " %9.1f %12.1f %13.2f" % (b, b - c, med("base", rate, "cpu_us_per_req"))
		    print(line)
	EOF
	stop "$port"
}

case $MODE in
held)
	held
	report_held
	;;
accuracy) accuracy ;;
*) die "usage: bench/openloop.sh [held|accuracy]" ;;
esac
[[ -n ${OUT:-} ]] && tail -n +2 "$rows" >>"$OUT"
exit 0
