#!/usr/bin/env bash
# kvbench's load generator over TLS against redis-benchmark's, and what TLS
# costs each of them: one redis-server serving a plaintext port and a TLS
# port (mutual TLS, certificates made here with openssl: ECDSA P-256), the
# four runs of a sample (kvbench and redis-benchmark, TLS and plaintext)
# in an order rotated from sample to sample, the same settings for both
# tools. Prints medians of QPS and of client CPU seconds per million
# requests, the ratio kvbench / redis-benchmark over TLS, and each tool's
# plaintext / TLS ratio (the cost of TLS).
#
# Usage: bench/tls.sh              (from the repository root; make bench-tls)
# Environment:
#   SAMPLES=5      samples per scenario (at least 5)
#   N_PIPE=1000000 requests per pipelined run, N_P1=200000 per pipeline-1 run
#   SCENARIOS="set-P128-c1 get-P128-c1 set-P1-c50 get-P1-c50"  the ones to run
#   KVBENCH=path   a kvbench binary (default: bin/kvbench; make bench-tls builds it)
#   OUT=file       also append the per-run rows as CSV to this file
set -euo pipefail

SAMPLES=${SAMPLES:-5}
SCENARIOS=${SCENARIOS:-set-P128-c1 get-P128-c1 set-P1-c50 get-P1-c50}
N_PIPE=${N_PIPE:-1000000}
N_P1=${N_P1:-200000}
KEYSPACE=1000000
VALUE=32

. "$(dirname "$0")/lib.sh"
for tool in openssl python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || die "tls.sh: $tool is required"
done
tmp=$WORK

# A CA, a server certificate for 127.0.0.1 and a client certificate.
cert() { # NAME CN [EXT]
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" \
		-keyout "$tmp/$1.key" -out "$tmp/$1.csr" 2>/dev/null
	openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
		-days 1 -out "$tmp/$1.crt" ${3:+-extfile <(printf '%s\n' "$3")} 2>/dev/null
}
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=bench CA" \
	-days 1 -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
cert server localhost "subjectAltName=IP:127.0.0.1,DNS:localhost"
cert client client

port=$(free_port)
tport=$(free_port)
while [[ $tport == "$port" ]]; do tport=$(free_port); done
start_redis "$port" --tls-port "$tport" --bind 127.0.0.1 --save "" --appendonly no \
	--tls-cert-file "$tmp/server.crt" --tls-key-file "$tmp/server.key" --tls-ca-cert-file "$tmp/ca.crt" \
	--tls-auth-clients yes

kv_tls=(--port "$tport" --tls --cacert "$tmp/ca.crt" --cert "$tmp/client.crt" --key "$tmp/client.key")
rb_tls=(-p "$tport" --tls --cacert "$tmp/ca.crt" --cert "$tmp/client.crt" --key "$tmp/client.key")

rows=$tmp/rows.csv
echo "scenario,client,transport,sample,requests,qps,cpu_s" >"$rows"

cpu() { awk '{print $1 + $2}' "$1"; }

# kv SCENARIO TRANSPORT SAMPLE N ARGS...: one kvbench run.
kv() {
	local scenario=$1 transport=$2 sample=$3 n=$4 conn=(--port "$port")
	shift 4
	[[ $transport == tls ]] && conn=("${kv_tls[@]}")
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$KVBENCH" bench "${conn[@]}" --requests "$n" \
		--value-size $VALUE --keyspace $KEYSPACE --threads 1 --seed 1 --output json "$@" >"$tmp/out.json"
	local qps
	qps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["qps"])' "$tmp/out.json")
	echo "$scenario,kvbench,$transport,$sample,$n,$qps,$(cpu "$tmp/time")" >>"$rows"
}

# rb SCENARIO TRANSPORT SAMPLE N ARGS...: one redis-benchmark run.
rb() {
	local scenario=$1 transport=$2 sample=$3 n=$4 conn=(-p "$port")
	shift 4
	[[ $transport == tls ]] && conn=("${rb_tls[@]}")
	/usr/bin/time -f "%U %S" -o "$tmp/time" redis-benchmark "${conn[@]}" -n "$n" \
		-d $VALUE -r $KEYSPACE -q --csv "$@" >"$tmp/out.csv"
	local qps
	qps=$(awk -F'","' 'END {print $2}' "$tmp/out.csv")
	echo "$scenario,redis-benchmark,$transport,$sample,$n,$qps,$(cpu "$tmp/time")" >>"$rows"
}

# samples SCENARIO N KVBENCH_ARGS -- REDIS_BENCHMARK_ARGS: SAMPLES
# samples of four runs, their order rotated by one each sample.
samples() {
	local scenario=$1 n=$2
	shift 2
	[[ " $SCENARIOS " == *" $scenario "* ]] || return 0
	local kvargs=() rbargs=()
	while [[ $1 != -- ]]; do kvargs+=("$1"); shift; done
	shift
	rbargs=("$@")
	local runs=("kv tls" "rb tls" "kv plain" "rb plain")
	for s in $(seq "$SAMPLES"); do
		echo "$scenario: sample $s/$SAMPLES" >&2
		for i in 0 1 2 3; do
			read -r tool transport <<<"${runs[$(((i + s) % 4))]}"
			if [[ $tool == kv ]]; then
				kv "$scenario" "$transport" "$s" "$n" "${kvargs[@]}"
			else
				rb "$scenario" "$transport" "$s" "$n" "${rbargs[@]}"
			fi
		done
	done
}

# Keys are the same length for both clients (16 bytes), values 32 bytes,
# picked uniformly at random, as in bench/loadgen.sh.
samples set-P128-c1 "$N_PIPE" --mode set --key-pattern random --pipeline 128 --connections 1 \
	-- -t set -P 128 -c 1

# Prefill both key sets so that every GET of either client hits.
"$KVBENCH" bench --port "$port" --mode set --key-pattern sequential --requests $KEYSPACE \
	--keyspace $KEYSPACE --value-size $VALUE --pipeline 128 --seed 1 >/dev/null
"$KVBENCH" bench --port "$port" --mode set --key-pattern sequential --requests $KEYSPACE \
	--keyspace $KEYSPACE --value-size $VALUE --pipeline 128 --seed 1 --key-prefix key:000000 >/dev/null

samples get-P128-c1 "$N_PIPE" --mode get --pipeline 128 --connections 1 -- -t get -P 128 -c 1
samples set-P1-c50 "$N_P1" --mode set --key-pattern random --pipeline 1 --connections 50 -- -t set -P 1 -c 50
samples get-P1-c50 "$N_P1" --mode get --pipeline 1 --connections 50 -- -t get -P 1 -c 50

[[ -n ${OUT:-} ]] && cat "$rows" >>"$OUT"

python3 - "$rows" <<'PY'
import csv, itertools, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))

from utest import utest

def runs(sc, cl, tr):
    return [float(r["qps"]) for r in rows if (r["scenario"], r["client"], r["transport"]) == (sc, cl, tr)]

def cpus(sc, cl, tr):
    return [float(r["cpu_s"]) / int(r["requests"]) * 1e6 for r in rows if (r["scenario"], r["client"], r["transport"]) == (sc, cl, tr)]
med = {}
print("| scenario | client | transport | QPS (median) | QPS runs | CPU s / Mreq (median) |")
print("|---|---|---|---:|---|---:|")
scs = list(dict.fromkeys(r["scenario"] for r in rows))
for sc in scs:
    for cl in ("kvbench", "redis-benchmark"):
        for tr in ("tls", "plain"):
            rs = [r for r in rows if (r["scenario"], r["client"], r["transport"]) == (sc, cl, tr)]
            qps = [float(r["qps"]) for r in rs]
            cpm = [float(r["cpu_s"]) / int(r["requests"]) * 1e6 for r in rs]
            med[sc, cl, tr] = (statistics.median(qps), statistics.median(cpm))
            print(f"| {sc} | {cl} | {tr} | {med[sc, cl, tr][0]:,.0f} | {' '.join(f'{q:,.0f}' for q in qps)} "
                  f"| {med[sc, cl, tr][1]:.2f} |")
print()
print("| scenario | TLS: QPS kvbench / redis-benchmark (p) | TLS: CPU/Mreq kvbench / redis-benchmark (p) | cost of TLS, kvbench: plain / TLS QPS (p) | cost of TLS, redis-benchmark: plain / TLS QPS (p) |")
print("|---|---:|---:|---:|---:|")
for sc in scs:
    kq, kc = med[sc, "kvbench", "tls"]
    rq, rc = med[sc, "redis-benchmark", "tls"]
    p = lambda a, b: f"{utest(runs(sc, *a), runs(sc, *b)):.3f}"
    pc = f"{utest(cpus(sc, 'kvbench', 'tls'), cpus(sc, 'redis-benchmark', 'tls')):.3f}"
    print(f"| {sc} | {kq / rq:.2f} ({p(('kvbench', 'tls'), ('redis-benchmark', 'tls'))}) | {kc / rc:.2f} ({pc}) "
          f"| {med[sc, 'kvbench', 'plain'][0] / kq:.2f} ({p(('kvbench', 'plain'), ('kvbench', 'tls'))}) "
          f"| {med[sc, 'redis-benchmark', 'plain'][0] / rq:.2f} ({p(('redis-benchmark', 'plain'), ('redis-benchmark', 'tls'))}) |")
print()
print("p: two-sided exact Mann-Whitney U test of the runs (QPS, or CPU per request).")
PY
