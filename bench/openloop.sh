#!/usr/bin/env bash
# Open-loop accuracy of kvbench bench: at --pipeline 1
# --connections 1 against an idle server, the open loop's latency p50 next
# to the closed loop's, and the open loop's send lag (intended → actual
# send), at rates from 1,000/s to half the closed loop's maximum. Closed
# and open runs alternate (A B, then B A) at every rate; the table shows
# medians over PAIRS pairs.
#
# Usage: bench/openloop.sh            (from the repository root, after make build)
# Environment:
#   PAIRS=3          closed/open pairs per rate (at least 3)
#   DURATION=2s      length of each run
#   RATES="1000 2000 5000 10000 20000"  rates, in requests per second; the
#                    closed loop's median QPS / 2 is added
#   SERVER=kvstore   kvstore (kvbench serve) or redis (redis-server)
#   BASE=path        another kvbench binary whose open loop joins each
#                    round as a third side (e.g. the code before a change)
#   OUT=file         also append the per-run rows as CSV to this file
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || die "python3 is required"

PAIRS=${PAIRS:-3}
DURATION=${DURATION:-2s}
RATES=${RATES:-1000 2000 5000 10000 20000}
SERVER=${SERVER:-kvstore}
BASE=${BASE:-}
((PAIRS >= 3)) || die "PAIRS=$PAIRS: want at least 3"
[[ -z $BASE || -x $BASE ]] || die "BASE=$BASE is not an executable"

port=$(free_port)
case $SERVER in
kvstore) start_kvstore "$port" ;;
redis) start_redis "$port" --save "" --appendonly no ;;
*) die "SERVER=$SERVER: want kvstore or redis" ;;
esac

rows=$WORK/rows.csv
echo "rate,side,pair,requests,qps,p50_us,lag_p50_us,lag_p99_us,lag_max_us" >"$rows"

# one RATE SIDE PAIR BIN [ARGS...]: one run, a row of $rows.
one() {
	local rate=$1 side=$2 pair=$3 bin=$4
	shift 4
	"$bin" bench --port "$port" --mode get --pipeline 1 --connections 1 --threads 1 \
		--duration "$DURATION" --seed 1 --output json "$@" >"$WORK/out.json"
	python3 - "$rate" "$side" "$pair" "$WORK/out.json" >>"$rows" <<-'EOF'
		import json, sys
		rate, side, pair, path = sys.argv[1:]
		j = json.load(open(path))
		lag = j.get("send_lag_us") or {}
		print(rate, side, pair, j["requests"], j["qps"], j["latency_us"]["p50"],
		      lag.get("p50", ""), lag.get("p99", ""), lag.get("max", ""), sep=",")
	EOF
}

# The closed loop's maximum, which sets the top rate.
for i in $(seq "$PAIRS"); do one 0 closed "$i" "$KVBENCH"; done
max=$(awk -F, '$2 == "closed" { print $5 }' "$rows" | sort -g | awk '{ a[NR] = $1 } END { print int(a[int((NR + 1) / 2)]) }')
RATES="$RATES $((max / 2))"
echo "server: $SERVER; closed loop at pipeline 1: median $max req/s; rates: $RATES" >&2

sides="closed open"
[[ -n $BASE ]] && sides="$sides base"
for rate in $RATES; do
	for i in $(seq "$PAIRS"); do
		for side in $(alternate "$i" $sides); do
			case $side in
			closed) one "$rate" closed "$i" "$KVBENCH" ;;
			open) one "$rate" open "$i" "$KVBENCH" --rate "$rate" ;;
			base) one "$rate" base "$i" "$BASE" --rate "$rate" ;;
			esac
		done
	done
done

[[ -n ${OUT:-} ]] && tail -n +2 "$rows" >>"$OUT"

echo "$(uname -srm), $(nproc) CPUs; $SERVER; --mode get --pipeline 1 --connections 1 --duration $DURATION; medians of $PAIRS runs"
python3 - "$rows" "$BASE" <<-'EOF'
	import collections, csv, statistics, sys
	rows, base = list(csv.DictReader(open(sys.argv[1]))), sys.argv[2]
	med = lambda side, rate, k: statistics.median(float(r[k]) for r in rows if r["side"] == side and r["rate"] == rate)
	head = "rate/s  n  requests  closed p50  open p50  open-closed  open/closed  lag p50  lag p99  lag max"
	if base:
	    head += "  base p50  base-closed"
	print(head + "   (us)")
	for rate in dict.fromkeys(r["rate"] for r in rows if r["rate"] != "0"):
	    n = sum(r["side"] == "open" and r["rate"] == rate for r in rows)
	    c, o = med("closed", rate, "p50_us"), med("open", rate, "p50_us")
	    line = "%6s %2d %9.0f %11.1f %9.1f %12.1f %12.2f %8.1f %8.1f %8.0f" % (
	        rate, n, med("open", rate, "requests"), c, o, o - c, o / c,
	        med("open", rate, "lag_p50_us"), med("open", rate, "lag_p99_us"), med("open", rate, "lag_max_us"))
	    if base:
	        b = med("base", rate, "p50_us")
	        line += " %9.1f %12.1f" % (b, b - c)
	    print(line)
EOF
