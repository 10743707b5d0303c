#!/usr/bin/env python3
"""Writes a LibSVM dataset with a planted linear model, for bench/sparse/bench_sparse.py.

    bench/sparse/gen_libsvm.py --out DIR [--rows 200000] [--test-rows 20000] [--features 1000000]
                               [--nnz 100] [--signal 50000] [--seed 0]

writes DIR/train.libsvm, DIR/test.libsvm and DIR/meta.json. Each row stores `nnz` distinct
features in ascending order (LibSVM's convention, and csr's), drawn from a power law over
[0, features) (id = floor(features * u^2), u uniform) so that, as in click logs, a few features
are frequent and most are rare. Values are uniform in [0.1, 1], written with 3 decimals. The
planted model is a weight w* ~ N(0, 1) on the `signal` most frequent features (0 on the rest,
which a model must learn to ignore: most of them occur only a few times in 200 k rows, too rarely
to learn a weight for) plus a bias; a row's label is 1 when
x·w* + b* + noise > 0 (noise ~ N(0, 0.5 * std(x·w*))), else 0, with b* chosen so the classes
are balanced. A classifier that learns w* well scores far above 50 % on test.libsvm, so the
benchmark's accuracy means something. numpy only; the same seed gives the same files.
"""
import argparse
import json
import os
import sys

import numpy as np


def draw_rows(rng, rows, features, nnz):
    """(rows, nnz) int64 feature ids, each row sorted and distinct."""
    extra = nnz + nnz // 2 + 8
    ids = (features * rng.random((rows, extra)) ** 2).astype(np.int64)
    ids.sort(axis=1)
    dup = np.zeros_like(ids, dtype=bool)
    dup[:, 1:] = ids[:, 1:] == ids[:, :-1]
    ids[dup] = features  # pushed past every real id by the next sort
    ids.sort(axis=1)
    if (ids[:, nnz - 1] >= features).any():
        sys.exit("gen_libsvm: a row drew fewer than --nnz distinct features; lower --nnz")
    # Keep a random subset of nnz of the distinct ids (not the smallest ones), still sorted.
    distinct = (ids < features).sum(axis=1)
    keys = rng.random(ids.shape)
    keys[np.arange(extra)[None, :] >= distinct[:, None]] = 2.0
    keep = np.argsort(keys, axis=1)[:, :nnz]
    keep.sort(axis=1)
    return np.take_along_axis(ids, keep, axis=1)


def write(path, ids, vals, labels):
    tmp = path + ".tmp"
    rows, nnz = ids.shape
    fmt = "%d " + " ".join(["%d:%.3f"] * nnz)
    with open(tmp, "w", encoding="ascii") as f:
        for start in range(0, rows, 20000):
            stop = min(rows, start + 20000)
            block = np.empty((stop - start, 1 + 2 * nnz), dtype=object)
            block[:, 0] = labels[start:stop]
            block[:, 1::2] = ids[start:stop]
            block[:, 2::2] = vals[start:stop]
            f.write("\n".join(fmt % tuple(r) for r in block))
            f.write("\n")
    os.replace(tmp, path)  # never leave a half-written file under the real name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--test-rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=1000000)
    ap.add_argument("--nnz", type=int, default=100)
    ap.add_argument("--signal", type=int, default=50000, help="features with a planted weight")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.nnz < 1 or a.features < 2 * a.nnz or a.rows < 1 or a.test_rows < 1:
        sys.exit("gen_libsvm: need --nnz >= 1, --features >= 2 * --nnz and positive row counts")
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    w = rng.standard_normal(a.features)
    w[min(a.signal, a.features):] = 0.0
    total = a.rows + a.test_rows
    ids = draw_rows(rng, total, a.features, a.nnz)
    vals = np.round(rng.uniform(0.1, 1.0, ids.shape), 3)
    margin = (vals * w[ids]).sum(axis=1)
    margin += rng.normal(0.0, 0.5 * margin.std(), total)
    bias = -float(np.median(margin))
    labels = (margin + bias > 0).astype(np.int64)
    write(os.path.join(a.out, "train.libsvm"), ids[: a.rows], vals[: a.rows], labels[: a.rows])
    write(os.path.join(a.out, "test.libsvm"), ids[a.rows :], vals[a.rows :], labels[a.rows :])
    meta = {"rows": a.rows, "test_rows": a.test_rows, "features": a.features, "nnz": a.nnz, "signal": a.signal, "seed": a.seed,
            "positive_fraction": float(labels.mean())}
    with open(os.path.join(a.out, "meta.json"), "w", encoding="ascii") as f:
        json.dump(meta, f)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
