#!/usr/bin/env python3
"""Does the main job decide: its intervals, its time, its false alarms.

Parts (run in this order, each optional):

  rounds   the fixed design, kvbench run --rounds 5: the widest interval
           of its comparisons and its time (the "before")
  default  the default experiment, kvbench run with no flags (adaptive,
           --precision 3%, --max-time 5m): the widest interval, how many
           comparisons reached the precision, its time
  aa       A/A: the same server and strategy under two target names (two
           kvstores, nopersist; set and get), --runs times: how often a
           difference is reported (faster/slower: a false alarm) and how
           often the interval covers 1.0
  known    a known difference: Redis aof_no against none on SET, measured
           once with a long reference run (at least 40 blocks), then by
           the default precision --runs times: how often the difference is
           found and the interval covers the reference ratio

Usage:

  bench/decide.py [--parts rounds,default,aa,known] [--runs 10]

KVBENCH is the kvbench binary (default bin/kvbench). Every run writes
into a temporary directory, records no history and targets 127.0.0.1.
"""
import argparse
import csv
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

KVBENCH = os.environ.get("KVBENCH", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin", "kvbench"))


def run(args, work, label):
    """Runs kvbench run with args into a fresh directory; returns its
    comparisons (dicts of the comparisons CSV) and its wall time."""
    out = tempfile.mkdtemp(prefix=label + ".", dir=work)
    cmd = [KVBENCH, "run", "--out", out, "--no-history", "--chart", "none"] + args
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    files = sorted(glob.glob(os.path.join(out, "*_comparisons_*.csv")))
    if not files:
        sys.exit(f"{' '.join(cmd)}: no comparisons CSV in {out}\n{p.stderr[-2000:]}")
    with open(files[-1], newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, secs, p.stderr


def half(row):
    """The interval's half-width, relative: the larger of its two sides."""
    r, lo, hi = float(row["ratio"]), float(row["ratio_lo"] or "nan"), float(row["ratio_hi"] or "nan")
    if math.isnan(lo) or math.isnan(hi):
        return math.inf
    return max(r / lo, hi / r) - 1


def summary(rows, precision=0.03):
    qps = [r for r in rows if r["metric"] == "qps"]
    widths = [half(r) for r in qps]
    within = sum(1 for w in widths if w <= precision)
    return qps, max(widths) if widths else math.nan, within


def fmt_pct(x):
    return "-" if math.isinf(x) or math.isnan(x) else f"±{x * 100:.1f}%"


def part_design(name, args, work):
    rows, secs, _ = run(args, work, name)
    qps, widest, within = summary(rows)
    verdicts = {}
    for r in qps:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    print(f"| {name} | {secs / 60:.1f} min | {len(qps)} | {within} | {fmt_pct(widest)} | "
          + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) + " |", flush=True)
    for r in qps:
        print(f"  {r['target']}/{r['strategy']} {r['mode']} vs {r['against_target']}/{r['against_strategy']}: "
              f"{float(r['ratio']):.4f} [{r['ratio_lo']}, {r['ratio_hi']}] {r['verdict']} n={r['measurements']}", file=sys.stderr)


def aa_config(work):
    path = os.path.join(work, "aa.yaml")
    with open(path, "w") as f:
        f.write("targets:\n"
                "  - {kind: kvstore, name: a, strategies: [nopersist]}\n"
                "  - {kind: kvstore, name: b, strategies: [nopersist]}\n")
    return path


def part_aa(runs, work):
    cfg = aa_config(work)
    alarms = covered = total = 0
    times, widths = [], []
    for i in range(runs):
        rows, secs, _ = run(["--config", cfg, "--reference", "b", "--seed", str(1000 + i)], work, "aa")
        times.append(secs)
        for r in rows:
            if r["target"] != "a" or r["against_target"] != "b":
                continue
            total += 1
            alarms += r["verdict"] in ("faster", "slower")
            covered += float(r["ratio_lo"]) <= 1 <= float(r["ratio_hi"])
            if r["metric"] == "qps":
                widths.append(half(r))
            print(f"  A/A run {i + 1}: {r['mode']} {r['metric']} {float(r['ratio']):.4f} [{r['ratio_lo']}, {r['ratio_hi']}] {r['verdict']}", file=sys.stderr, flush=True)
    print(f"| A/A (kvstore a against b, set and get, qps and p99), {runs} runs | median {sorted(times)[len(times) // 2] / 60:.1f} min | "
          f"{total} comparisons | differences reported: {alarms} ({alarms / total:.0%}) | interval covers 1.0: {covered} ({covered / total:.0%}) | "
          f"qps half-width median {fmt_pct(sorted(widths)[len(widths) // 2])} |", flush=True)


def known_rows(rows):
    for r in rows:
        if r["metric"] == "qps" and r["strategy"] == "aof_no" and r["against_strategy"] == "none" and r["mode"] == "set":
            return r
    sys.exit("no comparison of redis aof_no against none on set")


def part_known(runs, work):
    base = ["--targets", "redis", "--strategies", "none,aof_no", "--modes", "set"]
    rows, secs, _ = run(base + ["--precision", "0.5%", "--max-time", "8m"], work, "reference")
    ref = known_rows(rows)
    ratio = float(ref["ratio"])
    print(f"| reference (Redis aof_no/none SET, {ref['measurements']} blocks, {secs / 60:.1f} min) | {ratio:.4f} [{ref['ratio_lo']}, {ref['ratio_hi']}] |", flush=True)
    if int(ref["measurements"]) < 40:
        print(f"  the reference has {ref['measurements']} blocks, fewer than 40: the machine was too slow for it in 8 minutes", file=sys.stderr)
    found = covered = 0
    times = []
    for i in range(runs):
        rows, secs, _ = run(base + ["--seed", str(2000 + i)], work, "known")
        times.append(secs)
        r = known_rows(rows)
        found += r["verdict"] == ("slower" if ratio < 1 else "faster")
        covered += float(r["ratio_lo"]) <= ratio <= float(r["ratio_hi"])
        print(f"  known run {i + 1}: {float(r['ratio']):.4f} [{r['ratio_lo']}, {r['ratio_hi']}] {r['verdict']} n={r['measurements']} {secs:.0f} s", file=sys.stderr, flush=True)
    print(f"| known difference, {runs} runs | median {sorted(times)[len(times) // 2] / 60:.1f} min | found: {found}/{runs} | interval covers the reference: {covered}/{runs} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="rounds,default,aa,known")
    ap.add_argument("--runs", type=int, default=10, help="runs of the A/A and known-difference parts")
    a = ap.parse_args()
    if not os.access(KVBENCH, os.X_OK):
        sys.exit(f"{KVBENCH} not built: make build")
    if not shutil.which("redis-server"):
        sys.exit("redis-server not found: make deps")
    work = tempfile.mkdtemp(prefix="kvbench-decide.")
    try:
        with open("/proc/loadavg") as f:
            print(f"machine: {os.cpu_count()} CPUs, load average {f.read().split()[0]} at the start")
        print("\n| design | time | comparisons (qps) | within ±3% | widest interval | verdicts |\n|---|---|---:|---:|---:|---|")
        parts = a.parts.split(",")
        if "rounds" in parts:
            part_design("rounds 5 (fixed)", ["--rounds", "5"], work)
        if "default" in parts:
            part_design("default (adaptive)", [], work)
        print()
        if "aa" in parts:
            part_aa(a.runs, work)
        if "known" in parts:
            part_known(a.runs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
