#!/usr/bin/env bash
# The whole load space: value size × pipeline depth × connections, SET and
# GET, in two tables, each cell's sides alternated A B B A … in one run:
#
#   server:    kvbench serve vs redis-server, redis-benchmark as the client
#   generator: kvbench bench vs redis-benchmark, against one redis-server
#
# Both servers run with persistence off (PERSIST=everysec: the kvstore's
# --persist everysec against redis --appendonly yes --appendfsync everysec).
# A cell is bounded: its keyspace holds at most KEYSPACE_BYTES of values
# (fewer keys as values grow) and a run moves at most MAX_BYTES of values,
# and at least 4 pipelines per connection. Prints markdown: medians and
# ratios (kvstore/redis, kvbench/redis-benchmark) with every sample, the
# one-sided U-test of each cell against 0.95, and the median ratio.
#
#   bench/matrix.sh                 (make bench-matrix)
#   SAMPLES=1 SIZES=16384 PIPES=128 CONNS=1 PARTS=server bench/matrix.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SAMPLES=${SAMPLES:-5}
SIZES=${SIZES:-32 1024 16384 262144}
PIPES=${PIPES:-1 16 128}
CONNS=${CONNS:-1 50}
TESTS=${TESTS:-set get}
PARTS=${PARTS:-server generator}
PERSIST=${PERSIST:-none}
KEYSPACE_MAX=${KEYSPACE_MAX:-100000}
KEYSPACE_BYTES=${KEYSPACE_BYTES:-$((256 << 20))}
MAX_BYTES=${MAX_BYTES:-$((1 << 30))}

case $PERSIST in
none) KV_FLAGS=(--persist none) REDIS_FLAGS=(--save "" --appendonly no) ;;
everysec) KV_FLAGS=(--persist everysec --dir "$WORK/kv") REDIS_FLAGS=(--save "" --appendonly yes --appendfsync everysec) ;;
*) die "PERSIST=$PERSIST: want none or everysec" ;;
esac
mkdir -p "$WORK/kv"

keyspace() { local k=$((KEYSPACE_BYTES / $1)); echo $((k < KEYSPACE_MAX ? k : KEYSPACE_MAX)); }

# requests SIZE PIPE CONNS: the cell's run length.
requests() {
	local size=$1 p=$2 c=$3 n
	if ((p == 1)); then n=$((c == 1 ? 20000 : 100000)); else n=$((c == 1 ? 300000 : 500000)); fi
	local cap=$((MAX_BYTES / size)) floor=$((4 * p * c))
	((n > cap)) && n=$cap
	((n < floor)) && n=$floor
	echo "$n"
}

# fill PORT SIZE [kvbench]: the keyspace written, so that GETs hit:
# redis-benchmark's keys (most of them), and with kvbench, kvbench's too.
fill() {
	local k
	k=$(keyspace "$2")
	redis-cli -p "$1" flushall >/dev/null
	rps "$1" -t set -P 32 -c 4 -d "$2" -r "$k" -n $((3 * k)) >/dev/null
	[ $# -lt 3 ] || "$KVBENCH" bench --port "$1" --mode set --value-size "$2" --pipeline 32 \
		--keyspace "$k" --requests "$k" --key-prefix key: --seed 1 --output json >/dev/null
}

# rb PORT TEST SIZE PIPE CONNS: redis-benchmark's requests per second.
rb() {
	rps "$1" -t "$2" -d "$3" -P "$4" -c "$5" -r "$(keyspace "$3")" -n "$(requests "$3" "$4" "$5")"
}

# kb PORT TEST SIZE PIPE CONNS: kvbench bench's requests per second, with
# one thread, as redis-benchmark has one event loop (on two CPUs a second
# thread takes CPU from the server: BENCHMARKS.md).
kb() {
	"$KVBENCH" bench --port "$1" --mode "$2" --value-size "$3" --pipeline "$4" --connections "$5" \
		--threads 1 --keyspace "$(keyspace "$3")" --requests "$(requests "$3" "$4" "$5")" \
		--key-prefix key: --seed 1 --output json >"$WORK/kb.json" 2>"$WORK/kb.err" ||
		die "kvbench bench $* failed: $(tail -n 3 "$WORK/kb.err")"
	awk -F'"qps":' 'NF > 1 { split($2, a, /[,}]/); printf "%.0f\n", a[1]; exit }' "$WORK/kb.json"
}

declare -A S # S[part,side,test,size,pipe,conns] = samples

cells() { # part sideA sideB runA runB portA portB
	local part=$1 a=$2 b=$3 runa=$4 runb=$5 pa=$6 pb=$7 size p c t i side
	for size in $SIZES; do
		if [ "$pa" = "$pb" ]; then fill "$pa" "$size" kvbench; else fill "$pa" "$size" && fill "$pb" "$size"; fi
		for t in $TESTS; do
			for p in $PIPES; do
				for c in $CONNS; do
					for i in $(seq "$SAMPLES"); do
						for side in $(alternate "$i" a b); do
							if [ "$side" = a ]; then
								S[$part,$a,$t,$size,$p,$c]+=" $($runa "$pa" "$t" "$size" "$p" "$c")"
							else
								S[$part,$b,$t,$size,$p,$c]+=" $($runb "$pb" "$t" "$size" "$p" "$c")"
							fi
						done
					done
					echo "$part $t size=$size P=$p c=$c: $a${S[$part,$a,$t,$size,$p,$c]} | $b${S[$part,$b,$t,$size,$p,$c]}" >&2
				done
			done
		done
	done
}

# pbelow "A samples" "B samples": the one-sided p-value of the exact
# Mann-Whitney U test that A runs below 0.95 × B (A's rank sum among all
# splits of the pooled samples; ties take mid-ranks).
pbelow() { python3 -m utest below "$1" "$2"; }

table() { # part a b title
	local part=$1 a=$2 b=$3 size p c t ka kb
	echo
	echo "$4"
	echo
	echo "| test | value | pipeline | conns | $a (req/s) | $b (req/s) | $a/$b | p($a < 0.95 $b) | $a samples | $b samples |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
	local ratios="" below=""
	for t in $TESTS; do
		for size in $SIZES; do
			for p in $PIPES; do
				for c in $CONNS; do
					# shellcheck disable=SC2086
					ka=$(median ${S[$part,$a,$t,$size,$p,$c]}) kb=$(median ${S[$part,$b,$t,$size,$p,$c]})
					local r pv
					r=$(ratio "$ka" "$kb")
					pv=$(pbelow "${S[$part,$a,$t,$size,$p,$c]}" "${S[$part,$b,$t,$size,$p,$c]}")
					ratios+=" $r"
					awk -v p="$pv" 'BEGIN { exit !(p <= 0.05) }' && below+=" ${t^^}/$size/P$p/c$c"
					echo "| ${t^^} | $size B | $p | $c | $ka | $kb | $r | $pv | ${S[$part,$a,$t,$size,$p,$c]# } | ${S[$part,$b,$t,$size,$p,$c]# } |"
				done
			done
		done
	done
	echo
	# shellcheck disable=SC2086
	echo "Median $a/$b over the cells: $(median $ratios); $(wc -w <<<"$ratios") cells, $(awk '{ n = 0; for (i = 1; i <= NF; i++) n += $i >= 1; print n }' <<<"$ratios") at 1.00 or more; significantly below 0.95 (U-test, 5%):${below:- none}"
}

rb_side() { rb "$@"; }
kb_side() { kb "$@"; }

for part in $PARTS; do
	case $part in
	server)
		kport=$(free_port)
		start_kvstore "$kport" "${KV_FLAGS[@]}"
		rport=$(free_port)
		start_redis "$rport" "${REDIS_FLAGS[@]}"
		cells server kvstore redis rb_side rb_side "$kport" "$rport"
		stop "$kport"
		stop "$rport"
		;;
	generator)
		rport=$(free_port)
		start_redis "$rport" "${REDIS_FLAGS[@]}"
		cells generator kvbench redis-benchmark kb_side rb_side "$rport" "$rport"
		stop "$rport"
		;;
	*) die "PARTS: unknown part $part" ;;
	esac
done

ver=$(redis-server --version | awk '{sub(/^v=/, "", $3); print $3}')
for part in $PARTS; do
	case $part in
	server) table server kvstore redis "Server: kvbench serve vs redis-server $ver (persist $PERSIST), redis-benchmark as the client; $SAMPLES samples per cell, medians" ;;
	generator) table generator kvbench redis-benchmark "Generator: kvbench bench vs redis-benchmark against redis-server $ver (persist $PERSIST); $SAMPLES samples per cell, medians" ;;
	esac
done
