#!/usr/bin/env python3
"""Before/after timing of weft builds or settings on the zoo networks, interleaved so that a busy
shared machine slows every variant alike: each round runs every variant once per network, in
turn. The report gives per variant the fastest pass over all rounds (other processes only ever
slow a pass down, so on a busy machine the fastest is the steadiest wall time), the median over
rounds of each run's median pass, and the median CPU time of the process per pass (with
--threads 1 the work done, which load does not inflate; with more threads OpenMP's spinning
waits count too), with the 1-minute load average before each round.

Usage: interleave.py --variant NAME=BUILD_DIR[,ENV=VALUE...] [--variant ...]
                     [--nets resnet18,mobilenetv2] [--batches 1,32] [--threads 2] [--rounds 5]
                     [--runs 5] [--warmup 2] [--cache DIR] [--output FILE]

A variant is a build directory (its bin/image_classification runs the MXNet zoo export that
compare.py wrote into --cache) and environment settings, e.g.
  --variant before=/tmp/old/build,WEFT_GRAPH_FUSION=0 --variant after=build/default
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import compare  # noqa: E402  (the networks and thread settings)
import runs as bench_runs  # noqa: E402  (the header)


def parse_variant(text):
    name, _, rest = text.partition("=")
    parts = rest.split(",")
    env = dict(p.split("=", 1) for p in parts[1:])
    if not name or not parts[0]:
        sys.exit("--variant %r: give NAME=BUILD_DIR[,ENV=VALUE...]" % text)
    return name, parts[0], env


def run_once(build, env, prefix, size, batches, a):
    exe = os.path.join(build, "bin", "image_classification")
    cmd = [exe, "--model", prefix, "--epoch", "0", "--benchmark", "--input-size", str(size), "--runs", str(a.runs),
           "--warmup", str(a.warmup), "--batch-sizes"] + [str(b) for b in batches]
    p = subprocess.run(cmd, capture_output=True, text=True, env=compare.thread_env(a.threads, env), timeout=3600)
    found = re.findall(r"batch size (\d+): ([0-9.]+) ms per batch.*fastest ([0-9.]+) ms; cpu ([0-9.]+) ms", p.stdout)
    if p.returncode != 0 or not found:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return {int(b): (float(med), float(low), float(cpu)) for b, med, low, cpu in found}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--nets", default="resnet18,mobilenetv2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/weft-bench/zoo"))
    ap.add_argument("--output")
    a = ap.parse_args()
    variants = [parse_variant(v) for v in a.variant]
    batches = [int(b) for b in a.batches.split(",")]
    times, loads = {}, []  # (net, batch, variant) -> [ms per round]
    for r in range(a.rounds):
        loads.append(os.getloadavg()[0])
        for net in a.nets.split(","):
            zoo, _, size = compare.NETS[net]
            prefix = os.path.join(a.cache, zoo)
            if not os.path.exists(prefix + "-symbol.json"):
                sys.exit("%s: no export; run compare.py once to write it" % prefix)
            for name, build, env in variants:
                for b, ms in run_once(build, env, prefix, size, batches, a).items():
                    times.setdefault((net, b, name), []).append(ms)
                print("round %d %s %s: (median, fastest) %s" % (r + 1, net, name,
                                                                {b: times[(net, b, name)][-1] for b in batches}),
                      file=sys.stderr)
    out = [l for l in bench_runs.header(sys.argv, a.rounds, loads) if not l.startswith("runs:")]
    out += ["variants: " + "; ".join("%s = %s %s" % (n, b, " ".join("%s=%s" % kv for kv in e.items()) or "(no settings)")
                                     for n, b, e in variants),
            "", "ms per batch, %d thread(s): fastest pass over %d interleaved rounds [median over rounds of each run's "
            "median pass] {median over rounds of each run's median CPU time of the process per pass}; each run times "
            "%d passes after %d untimed; ratios of the fastest passes, and {of the CPU times}" %
            (a.threads, a.rounds, a.runs, a.warmup), "",
            "| network | batch | " + " | ".join(n for n, _, _ in variants) + " | " +
            " | ".join("%s / %s" % (variants[0][0], n) for n, _, _ in variants[1:]) + " |",
            "|---|---|" + "---|" * (2 * len(variants) - 1)]
    for net in a.nets.split(","):
        for b in batches:
            low = [min(t[1] for t in times[(net, b, n)]) for n, _, _ in variants]
            med = [statistics.median(t[0] for t in times[(net, b, n)]) for n, _, _ in variants]
            cpu = [statistics.median(t[2] for t in times[(net, b, n)]) for n, _, _ in variants]
            out.append("| %s | %d | %s | %s |" % (
                net, b, " | ".join("%s [%s] {%s}" % (compare.fmt(l), compare.fmt(m), compare.fmt(c))
                                   for l, m, c in zip(low, med, cpu)),
                " | ".join("%.2f× {%.2f×}" % (low[0] / l, cpu[0] / c) for l, c in zip(low[1:], cpu[1:]))))
    text = "\n".join(out)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
