#!/usr/bin/env python3
"""Which measurement design gives the narrowest honest interval per minute.

An A/A experiment: two identical servers (A and B, both kvbench serve, or
both redis-server) are measured in slices of kvbench bench, and the
paired log-ratio of A against B is formed per block. Its true value is 0;
its spread per block and the blocks per minute give the 95% interval a
minute of measuring buys (1.96 * sd / sqrt(blocks)). Designs:

  interleaved-off    A B B A, one after the other; nothing pinned
  interleaved-0      A B B A; every server and client on CPU 0
  interleaved-split  A B B A; servers on CPU 0, clients on CPU 1
  duet               A and B at once, each server with its client on a
                     CPU of its own (A on 0 and B on 1, swapped every
                     block): both see the same disturbance (Bulej et al.)

For each server kind and slice length it prints the per-block spread,
the blocks a minute, and the interval after a minute. Usage:

  bench/designs.py [--seconds 40] [--slices 0.2,0.5,1] [--kinds redis,kvstore]

KVBENCH is the kvbench binary (default bin/kvbench).
"""
import argparse
import json
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

KVBENCH = os.environ.get("KVBENCH", os.path.join(os.path.dirname(__file__), "..", "bin", "kvbench"))
KEYS = 200_000
PIPELINE = 128


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def taskset(cpus):
    return ["taskset", "-c", cpus] if cpus else []


class Server:
    def __init__(self, kind, cpus, work):
        self.port = free_port()
        d = tempfile.mkdtemp(dir=work)
        if kind == "redis":
            cmd = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no", "--dir", d]
        else:
            cmd = [KVBENCH, "serve", "--port", str(self.port), "--dir", d, "--log-level", "warn"]
        self.proc = subprocess.Popen(taskset(cpus) + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        else:
            sys.exit(f"{kind} on port {self.port} did not start")
        self.kind = kind

    def pin(self, cpus):
        if cpus:
            subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(self.proc.pid)], capture_output=True)
        else:
            subprocess.run(["taskset", "-a", "-p", "-c", "0-%d" % (os.cpu_count() - 1), str(self.proc.pid)], capture_output=True)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def bench_cmd(port, requests, cpus, mode):
    cmd = [KVBENCH, "bench", "--port", str(port), "--mode", mode, "--set-cmd", "SET", "--get-cmd", "GET",
           "--pipeline", str(PIPELINE), "--connections", "1", "--threads", "1", "--keyspace", str(KEYS),
           "--requests", str(requests), "--seed", "7", "--output", "json"]
    if cpus:
        cmd += ["--cpus", cpus]
    return cmd


def run_slice(port, requests, cpus, mode):
    out = subprocess.run(bench_cmd(port, requests, cpus, mode), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return json.loads(out.stdout)["qps"]


def run_duet(a, b, requests, cpu_a, cpu_b, mode):
    pa = subprocess.Popen(bench_cmd(a.port, requests, cpu_a, mode), stdout=subprocess.PIPE, text=True)
    pb = subprocess.Popen(bench_cmd(b.port, requests, cpu_b, mode), stdout=subprocess.PIPE, text=True)
    qa, qb = json.loads(pa.communicate()[0])["qps"], json.loads(pb.communicate()[0])["qps"]
    return qa, qb


def prefill(s):
    subprocess.run([KVBENCH, "bench", "--port", str(s.port), "--mode", "set", "--set-cmd", "SET", "--keyspace", str(KEYS),
                    "--requests", str(KEYS), "--pipeline", "1024", "--threads", "1", "--seed", "7", "--output", "json"],
                   capture_output=True, check=True)


def design(name, kind, slice_s, seconds, work, mode):
    placement = {"interleaved-off": ("", ""), "interleaved-0": ("0", "0"), "interleaved-split": ("0", "1")}
    a = Server(kind, "", work)
    b = Server(kind, "", work)
    try:
        prefill(a)
        prefill(b)
        # The slice's requests from a first unmeasured slice's rate.
        if name == "duet":
            a.pin("0")
            b.pin("1")
            qa, _ = run_duet(a, b, 50_000, "0", "1", mode)
        else:
            srv, cli = placement[name]
            a.pin(srv)
            b.pin(srv)
            qa = run_slice(a.port, 50_000, cli, mode)
        requests = max(int(qa * slice_s), 20 * PIPELINE)
        d = []
        t0 = time.time()
        flip = False
        while time.time() - t0 < seconds:
            if name == "duet":
                ca, cb = ("1", "0") if flip else ("0", "1")
                a.pin(ca)
                b.pin(cb)
                qa, qb = run_duet(a, b, requests, ca, cb, mode)
                d.append(math.log(qa) - math.log(qb))
                flip = not flip
            else:
                srv, cli = placement[name]
                order = [a, b] if random.random() < 0.5 else [b, a]
                q = {}
                for s in order + order[::-1]:
                    q.setdefault(s.port, []).append(math.log(run_slice(s.port, requests, cli, mode)))
                d.append(statistics.fmean(q[a.port]) - statistics.fmean(q[b.port]))
        took = time.time() - t0
    finally:
        a.stop()
        b.stop()
    sd = statistics.stdev(d)
    per_min = len(d) / took * 60
    return {"design": name, "kind": kind, "mode": mode, "slice_s": slice_s, "blocks": len(d), "sd_pct": sd * 100,
            "mean_pct": statistics.fmean(d) * 100, "blocks_per_min": per_min,
            "ci_after_1min_pct": 1.96 * sd / math.sqrt(per_min) * 100}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--slices", default="0.2,0.5,1")
    ap.add_argument("--kinds", default="redis,kvstore")
    ap.add_argument("--modes", default="get")
    ap.add_argument("--designs", default="interleaved-off,interleaved-0,interleaved-split,duet")
    args = ap.parse_args()
    for tool in ["redis-server", "redis-cli", "taskset"]:
        if not shutil.which(tool):
            sys.exit(f"{tool} not found")
    work = tempfile.mkdtemp(prefix="kvbench-designs.")
    print("load average before:", open("/proc/loadavg").read().split()[:3], flush=True)
    rows = []
    try:
        for kind in args.kinds.split(","):
            for mode in args.modes.split(","):
                for sl in [float(x) for x in args.slices.split(",")]:
                    for name in args.designs.split(","):
                        r = design(name, kind, sl, args.seconds, work, mode)
                        rows.append(r)
                        print(json.dumps(r), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("load average after:", open("/proc/loadavg").read().split()[:3])
    print()
    print("| server | mode | slice | design | blocks | SD of a block's log-ratio | blocks/min | ±95% after 1 min | A/A mean |")
    print("|---|---|--:|---|--:|--:|--:|--:|--:|")
    for r in rows:
        print(f"| {r['kind']} | {r['mode']} | {r['slice_s']:g} s | {r['design']} | {r['blocks']} | {r['sd_pct']:.2f}% | "
              f"{r['blocks_per_min']:.1f} | ±{r['ci_after_1min_pct']:.2f}% | {r['mean_pct']:+.2f}% |")


if __name__ == "__main__":
    main()
