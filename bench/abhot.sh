#!/usr/bin/env bash
# The load generator's work per request in two builds, A B B A …:
# BenchmarkHotPath (pkg/loadgen: encoding, reply parsing, verification,
# latency recording, system calls excluded) from two test binaries of
# package loadgen, alternated so that the machine's drift hits both.
# Prints per case the median ns per request of each, their ratio B/A and
# the U test's p. What a change of the engine costs (or gains) on the hot
# path, without a server's noise.
#
# Usage: A=old/loadgen.test B=new/loadgen.test bench/abhot.sh   (make bench-ab-hot)
#   build each with: go test -c -o DIR/loadgen.test ./pkg/loadgen
# Environment:
#   PAIRS=8           alternating pairs (at least 4 for the U test)
#   BENCHTIME=200000x requests per case and run
set -euo pipefail
cd "$(dirname "$0")"
A=${A:?A=path of the first loadgen test binary}
B=${B:?B=path of the second loadgen test binary}
PAIRS=${PAIRS:-8}
BENCHTIME=${BENCHTIME:-200000x}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out=$(mktemp -d /tmp/kvbench-abhot.XXXXXX)
trap 'rm -rf "$out"' EXIT

run() { # run BIN SIDE
	"$1" -test.run '^$' -test.bench '^BenchmarkHotPath$' -test.benchtime "$BENCHTIME" -test.count 1 |
		awk -v side="$2" '$1 ~ /^BenchmarkHotPath\// { sub(/-[0-9]+$/, "", $1); print side, $1, $3 }' >>"$out/samples"
}
for i in $(seq "$PAIRS"); do
	if ((i % 2)); then run "$A" A; run "$B" B; else run "$B" B; run "$A" A; fi
done
echo "| case | A ns/op (median) | B ns/op (median) | B/A | U-test p | pairs |"
echo "|---|---:|---:|---:|---:|---:|"
python3 - "$out/samples" <<'PY'
import collections, statistics, sys
from utest import utest
s = collections.defaultdict(lambda: {"A": [], "B": []})
for line in open(sys.argv[1]):
    side, name, ns = line.split()
    s[name.removeprefix("BenchmarkHotPath/")][side].append(float(ns))
for name, v in s.items():
    a, b = v["A"], v["B"]
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {name} | {ma:.2f} | {mb:.2f} | {mb / ma:.3f} | {utest(a, b):.3g} | {len(a)} |")
    print(f"samples {name}: A {' '.join(f'{x:.2f}' for x in a)}; B {' '.join(f'{x:.2f}' for x in b)}", file=sys.stderr)
PY
