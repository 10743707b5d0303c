#!/usr/bin/env python3
"""Gluon's sparse embedding step, weft against MXNet 1.9.1 in one run: nn.Embedding(sparse_grad=True)
recorded by autograd, backward (a row_sparse weight gradient storing the batch's rows) and a
Trainer step (sgd, lazy update of those rows), as MXNet's word-embedding and recommender examples
train large tables.

    bench/sparse/bench_embedding.py --python /work/mxvenv/bin/python \\
        --weft build/default/lib/libweft_mxnet.so [--rows 1000000] [--dim 64] [--batch 256] \\
        [--width 20] [--steps 12] [--runs 2] [--output FILE]

Each run is its own process per library (the loaded library is asserted), alternating the
libraries so that load on a shared machine hits both alike. Prints, per library, the median step
time (ms, after 2 untimed steps) and the peak RSS, and weft's speed-up.
"""
import argparse
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time


def child(args):
    import mxnet as mx

    lib = mx.base._LIB._name
    if ("libweft_mxnet" in lib) != (args.expect == "weft"):
        sys.exit(f"bench_embedding: expected {args.expect}, loaded {lib}")
    net = mx.gluon.nn.Embedding(args.rows, args.dim, sparse_grad=True)
    net.initialize(mx.init.Uniform(0.1))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = mx.nd.random.randint(0, args.rows, shape=(args.batch, args.width)).astype("float32")
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        with mx.autograd.record():
            y = net(x).sum()
        y.backward()
        trainer.step(args.batch)
        net.weight.data().wait_to_read()
        times.append(time.perf_counter() - start)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{1000 * statistics.median(times[2:]):.3f} {rss:.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--weft", help="libweft_mxnet.so (parent mode)")
    ap.add_argument("--expect", choices=["weft", "mxnet"], help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--width", type=int, default=20)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--output")
    args = ap.parse_args()
    if args.expect:
        return child(args)
    if not args.weft:
        sys.exit("bench_embedding: --weft is required")
    results = {"mxnet": [], "weft": []}
    for _ in range(args.runs):
        for lib in ("mxnet", "weft"):
            env = dict(os.environ)
            env.pop("MXNET_LIBRARY_PATH", None)
            if lib == "weft":
                env["MXNET_LIBRARY_PATH"] = os.path.abspath(args.weft)
            cmd = [args.python, os.path.abspath(__file__), "--expect", lib] + [
                f"--{k}={getattr(args, k)}" for k in ("rows", "dim", "batch", "width", "steps")
            ]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)
            if out.returncode != 0:
                sys.exit(f"bench_embedding: {lib} failed:\n{out.stderr[-3000:]}")
            ms, rss = out.stdout.split()[-2:]
            results[lib].append((float(ms), float(rss)))
    lines = [
        f"Gluon Embedding({args.rows}, {args.dim}, sparse_grad=True), batch {args.batch}x{args.width}, sgd; "
        f"{args.runs} runs per library, median of {args.steps - 2} steps each; load {os.getloadavg()[0]:.1f}",
        "| library | step ms (median of runs) | peak RSS MiB |",
        "|---|---|---|",
    ]
    for lib, rows in results.items():
        lines.append(f"| {lib} | {statistics.median(r[0] for r in rows):.2f} | {max(r[1] for r in rows):.0f} |")
    speedup = statistics.median(r[0] for r in results["mxnet"]) / statistics.median(r[0] for r in results["weft"])
    lines.append(f"weft speed-up: {speedup:.2f}x")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        tmp = f"{args.output}.tmp"
        pathlib.Path(tmp).write_text(text, encoding="utf-8")
        os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
