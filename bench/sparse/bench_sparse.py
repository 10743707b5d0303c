#!/usr/bin/env python3
"""Sparse training, weft against MXNet 1.9.1 in one run: the same program (train_sparse.py) on the
real libmxnet and on weft's libweft_mxnet, on the same LibSVM files (gen_libsvm.py).

    bench/sparse/bench_sparse.py --python /work/mxvenv/bin/python \\
        --weft build/default/lib/libweft_mxnet.so --data DIR [--models linear fm module] [--runs 3] \\
        [--epochs 1] [--batch 512] [--output FILE]

Each run is its own process per library (library asserted inside: train_sparse.py --expect),
alternating the libraries so that load on a shared machine hits both alike. Prints, per model,
the median samples/s with its range, the test accuracy, the peak RSS and the median process CPU
time (all threads) per batch of the training loop of each library, and the speed-up of weft. MXNET_SUBGRAPH_BACKEND=NONE for both; thread variables are left as the caller
has them.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(args, lib, model):
    env = dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE")
    env.pop("MXNET_LIBRARY_PATH", None)
    if lib == "weft":
        env["MXNET_LIBRARY_PATH"] = os.path.abspath(args.weft)
    cmd = [args.python, os.path.join(HERE, "train_sparse.py"), "--data", args.data, "--model", model, "--expect", lib,
           "--epochs", str(args.epochs), "--batch", str(args.batch), "--optimizer", args.optimizer,
           "--lr", str(args.lr), "--factors", str(args.factors)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout, check=False)
    if out.returncode != 0:
        sys.exit(f"bench_sparse: {lib} {model} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def save(path, text):
    """Writes `text` to `path` through a temporary file (no half-written results)."""
    tmp = f"{path}.tmp"
    pathlib.Path(tmp).write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def summary(values, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--weft", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--models", nargs="+", default=["linear", "fm"], choices=["linear", "fm", "module"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--optimizer", default="adam")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--factors", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--output")
    args = ap.parse_args()
    with open(os.path.join(args.data, "meta.json"), encoding="ascii") as f:
        meta = json.load(f)
    lines = [f"data: {meta['rows']} train rows, {meta['test_rows']} test rows, {meta['features']} features, "
             f"{meta['nnz']} non-zeros per row (gen_libsvm.py seed {meta['seed']})",
             f"training: {args.epochs} epoch(s), batch {args.batch}, {args.optimizer} lr {args.lr} lazy_update, "
             f"local KVStore; fm factors {args.factors}; {args.runs} runs per library",
             f"{'model':8} {'libmxnet samples/s':>24} {'weft samples/s':>24} {'speed-up':>8} "
             f"{'accuracy mx/weft':>18} {'peak RSS MiB mx/weft':>22} {'cpu ms/batch mx/weft':>21}"]
    for model in args.models:
        res = {"mxnet": [], "weft": []}
        for _ in range(args.runs):
            for lib in ("mxnet", "weft"):
                res[lib].append(run_once(args, lib, model))
        sps = {lib: [r["samples_per_s"] for r in rs] for lib, rs in res.items()}
        acc = {lib: statistics.median(r["accuracy"] for r in rs) for lib, rs in res.items()}
        rss = {lib: max(r["peak_rss_mib"] for r in rs) for lib, rs in res.items()}
        cpu = {lib: statistics.median(r["cpu_ms_per_batch"] for r in rs) for lib, rs in res.items()}
        speedup = statistics.median(sps["weft"]) / statistics.median(sps["mxnet"])
        lines.append(f"{model:8} {summary(sps['mxnet']):>24} {summary(sps['weft']):>24} {speedup:>7.2f}x "
                     f"{acc['mxnet']:>8.4f}/{acc['weft']:<9.4f} {rss['mxnet']:>10.0f}/{rss['weft']:<10.0f} "
                     f"{cpu['mxnet']:>10.2f}/{cpu['weft']:<10.2f}")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.output:
        save(args.output, text)


if __name__ == "__main__":
    main()
