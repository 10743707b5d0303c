#!/usr/bin/env python3
"""Image loading speed of weft's ImageRecordIter against MXNet 1.9.1's ImageRecordIter (same .rec
file) and PyTorch's DataLoader with torchvision transforms (the same JPEG bytes as files), at 1
and 2 threads, in one run; and LeNet training on Fashion-MNIST from a .rec against from memory.

Usage: compare.py BUILD_DIR [--data DIR] [--threads 1,2] [--rounds 3] [--batches 150]
                  [--mxnet-python PY] [--torch-python PY] [--lenet FMNIST_REC_DIR] [--lenet-epochs 2]

The work (every loader): random 224x224 crop of 256x256 JPEGs, random mirror, mean/std
normalisation to float32 (NCHW), batches of 64. Threads: weft's and MXNet's preprocess_threads,
the DataLoader's worker processes (one thread each). The data set (>= 10 240 JPEGs, quality 90) is
made by make_dataset.py into --data when missing. Each round runs every loader once per thread
count, interleaved; the table shows the median images/s and the ratios weft/peer. Absolute
numbers on a shared machine drift with its load (printed before and after); compare the ratios of
one run.

--lenet DIR (made by samples/train_mnist/fmnist_to_rec.py) adds train_mnist --network lenet from
DIR/train.rec against from the idx files (MNISTIter, in memory), median epoch samples/s of each,
the three (memory, .rec, .rec with --decode-on-engine) alternating round by round; --lenet-only runs only that.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def rate(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    m = re.search(r"images/s ([0-9.]+)", p.stdout)
    if p.returncode != 0 or not m:
        sys.exit("failed: %s\n%s\n%s" % (" ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return float(m.group(1))


def lenet(a):
    exe = os.path.join(a.build, "bin", "train_mnist")
    rec = ["--train-rec", os.path.join(a.lenet, "train")]
    modes = (("memory (MNISTIter)", []), (".rec (ImageRecordIter)", rec),
             (".rec, decode_on_engine", rec + ["--decode-on-engine"]))
    speeds = {name: [] for name, _ in modes}
    for r in range(a.rounds):  # the two sources alternate, so a change of the machine's load hits both
        for name, extra in modes:
            p = subprocess.run([exe, "--network", "lenet", "--epochs", str(a.lenet_epochs), "--seed", str(r)] + extra,
                               capture_output=True, text=True, timeout=7200)
            found = [float(x) for x in re.findall(r"Speed=([0-9.]+) samples/s", p.stdout)]
            if p.returncode != 0 or not found:
                sys.exit("train_mnist failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
            speeds[name].append(statistics.median(found))
            print("round %d, LeNet from %s: %.0f samples/s (load %s)" % (r, name, speeds[name][-1], load()),
                  file=sys.stderr)
    return {name: statistics.median(v) for name, v in speeds.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--data", default=os.path.expanduser("~/.cache/weft-bench/io"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, default=150)
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--torch-python", default="/usr/bin/python3")
    ap.add_argument("--lenet", help="directory with train.rec/.idx from fmnist_to_rec.py")
    ap.add_argument("--lenet-epochs", type=int, default=2)
    ap.add_argument("--lenet-only", action="store_true", help="only the LeNet comparison (needs --lenet)")
    a = ap.parse_args()
    if a.lenet_only:
        return print_lenet(a)
    rec = os.path.join(a.data, "bench.rec")
    if not os.path.exists(rec):
        subprocess.run([a.torch_python, os.path.join(HERE, "make_dataset.py"), a.build, a.data], check=True)
    threads = [int(t) for t in a.threads.split(",")]
    peers = os.path.join(HERE, "peer_loaders.py")
    n = ["--batches", str(a.batches)]
    mx_env = dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE")
    loaders = {
        "weft": lambda t: rate([os.path.join(a.build, "bench", "image_iter_bench"), "--rec", rec, "--threads", str(t)] + n),
        "MXNet 1.9.1": lambda t: rate([a.mxnet_python, peers, "mxnet", rec, "--threads", str(t)] + n, mx_env),
        "PyTorch": lambda t: rate([a.torch_python, peers, "pytorch", os.path.join(a.data, "jpeg"), "--threads", str(t)] + n),
    }
    before = load()
    results = {(name, t): [] for name in loaders for t in threads}
    for r in range(a.rounds):
        for t in threads:
            for name, run in loaders.items():
                results[(name, t)].append(run(t))
                print("round %d, %d thread(s), %s: %.0f images/s (load %s)" % (r, t, name, results[(name, t)][-1], load()),
                      file=sys.stderr)
    print("\nImage loading, images/s (median of %d rounds; load average %s before, %s after)\n" % (a.rounds, before, load()))
    print("| threads | weft | MXNet 1.9.1 | PyTorch DataLoader | weft / MXNet | weft / PyTorch |")
    print("|---|---|---|---|---|---|")
    for t in threads:
        w, m, p = (statistics.median(results[(k, t)]) for k in loaders)
        print("| %d | %.0f | %.0f | %.0f | %.2f | %.2f |" % (t, w, m, p, w / m, w / p))
    if a.lenet:
        print_lenet(a)


def print_lenet(a):
    before = load()
    s = lenet(a)
    print("\nLeNet training, samples/s (median epoch, median of %d runs; load %s before, %s after)\n" %
          (a.rounds, before, load()))
    print("| data | samples/s |\n|---|---|")
    for k, v in s.items():
        print("| %s | %.0f |" % (k, v))
    vals = list(s.values())
    print("\nfrom .rec / from memory: %.2f; with decode_on_engine: %.2f" % (vals[1] / vals[0], vals[2] / vals[0]))

if __name__ == "__main__":
    main()
