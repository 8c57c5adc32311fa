#!/usr/bin/env bash
# What a snapshot or a log rewrite costs while the server serves: Redis's
# BGSAVE and BGREWRITEAOF (a fork) against the kvstore's BGSAVE and
# rewrite (a snapshot under its write lock, written by a goroutine), each
# set off in the middle of a 20 s measured phase (kvbench run
# --persist-job) over 1,000,000 keys of 256 bytes under a P16 c50 SET/GET
# 1:1 load, ROUNDS rounds interleaved. The snapshot runs on the strategies
# without a log (redis none, kvstore nopersist), the rewrite on everysec
# (aof_everysec, persist_everysec). Both servers' automatic rewrites are
# off (Redis's auto-aof-rewrite-percentage 0, the kvstore's
# --auto-aof-rewrite-percentage -1): the job measured is the one set off,
# not one the writes of the phase would start by themselves. Prints
# markdown: per job and target,
# the medians of the job's time, its fork (the kvstore's pause), its
# copy-on-write, p99 during over before and p99's recovery, the U test of
# the rounds' p99 during/before, kvstore against redis, and the goals:
# the kvstore's rewrite at most 1.5x its p99 before, back within 1 s,
# and below Redis's fork-based rewrite.
#
#   bench/persistjob.sh                    (make bench-persist-job)
#   ROUNDS=5 KEYS=1000000 DURATION=20s bench/persistjob.sh
#   CPUS=off bench/persistjob.sh   (run --cpus: the default shares CPU 0 among
#                                   servers, their jobs and the load generator)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-5}
CPUS=${CPUS:-auto}
KEYS=${KEYS:-1000000}
DURATION=${DURATION:-20s}
OUT="$WORK/results"
CONF="$WORK/targets.yaml"
cat >"$CONF" <<YAML
targets:
  - kind: kvstore
    args: ["--auto-aof-rewrite-percentage", "-1"]
    strategies: [nopersist, persist_everysec]
  - kind: redis
    config: ["auto-aof-rewrite-percentage 0"]
    strategies: [none, aof_everysec]
YAML

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for job in bgsave rewrite; do
	strategies=none,nopersist
	[ "$job" = rewrite ] && strategies=aof_everysec,persist_everysec
	echo "kvbench run --persist-job $job ($strategies)" >&2
	KVBENCH_HISTORY=off "$KVBENCH" run --no-history --config "$CONF" --strategies "$strategies" --modes mixed \
		--set-cmd SET --get-cmd GET --set-ratio 50 --pipeline 16 --connections 50 --keyspace "$KEYS" --value-size 256 \
		--rounds "$ROUNDS" --duration "$DURATION" --persist-job "$job" --cpus "$CPUS" --out "$OUT/$job" >/dev/null
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$ROUNDS" "$KEYS" "$DURATION" "$load_after" "$CPUS" <<'EOF'
import csv, glob, statistics, sys
from utest import utest

out, rounds, keys, duration, load, cpus = sys.argv[1:7]
print(f"\nPersistence jobs under load: kvbench run --persist-job --cpus {cpus}, {int(keys):,} keys x 256 B, mixed SET/GET 1:1, "
      f"pipeline 16, 50 connections, {duration} phases, the job at their middle, {rounds} rounds interleaved; "
      f"medians of the ok rounds (load average at the end: {load})\n")
print("| job | target | strategy | rounds | job s | fork ms | COW MB | RSS peak/before | p99 before us | p99 during/before | p99 recovery s (back/rounds) |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
goals = []
for job in ("bgsave", "rewrite"):
    rows = []
    for f in glob.glob(f"{out}/{job}/kvbench_detail_*.csv"):
        rows += [r for r in csv.DictReader(open(f)) if r["status"] == "ok" and r["persist_job"] == job]
    ratio = {}
    for target in ("redis", "kvstore"):
        rs = [r for r in rows if r["target"] == target]
        if not rs:
            continue
        def med(col, scale=1.0):
            xs = [float(r[col]) * scale for r in rs if r[col]]
            return f"{statistics.median(xs):.2f}" if xs else "-"
        ratios = [float(r["p99_during_us"]) / float(r["p99_before_us"]) for r in rs if r["p99_during_us"] and r["p99_before_us"]]
        rss = [int(r["rss_peak_bytes"]) / int(r["rss_before_bytes"]) for r in rs if r["rss_peak_bytes"] and r["rss_before_bytes"]]
        back = [float(r["p99_recovery_s"]) for r in rs if r["p99_recovery_s"]]
        ratio[target] = (ratios, back)
        print(f"| {job} | {target} | {rs[0]['strategy']} | {len(rs)} | {med('job_s')} | {med('fork_ms')} | {med('cow_bytes', 1e-6)} | "
              f"{statistics.median(rss):.2f} | {med('p99_before_us')} | {statistics.median(ratios):.2f} | "
              f"{(f'{statistics.median(back):.2f}' if back else '-')} ({len(back)}/{len(rs)}) |" if ratios and rss else
              f"| {job} | {target} | {rs[0]['strategy']} | {len(rs)} | - | - | - | - | - | - | - |")
    if "redis" in ratio and "kvstore" in ratio and ratio["redis"][0] and ratio["kvstore"][0]:
        k, r = ratio["kvstore"][0], ratio["redis"][0]
        p = utest(k, r)
        goals.append(f"- {job}: p99 during/before, kvstore {statistics.median(k):.2f} against redis {statistics.median(r):.2f}: "
                     f"U test p = {p:.3f} ({'significant' if p <= 0.05 else 'not significant'} at 0.05); kvstore rounds {[round(x, 2) for x in k]}, redis {[round(x, 2) for x in r]}")
        if job == "rewrite":
            kb = ratio["kvstore"][1]
            ok = statistics.median(k) <= 1.5 and len(kb) == len(k) and max(kb) <= 1.0
            goals.append(f"- goal, the kvstore's rewrite: p99 during/before at most 1.5 (median {statistics.median(k):.2f}) and back within 1 s in every round "
                         f"({len(kb)} of {len(k)} back, the longest {max(kb) if kb else float('nan'):.2f} s), and below Redis's (U test above): "
                         f"{'met' if ok and statistics.median(k) < statistics.median(r) and p <= 0.05 else 'NOT met'}")
print()
print("\n".join(goals))
EOF
