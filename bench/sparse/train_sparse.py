#!/usr/bin/env python3
"""One MXNet 1.9 Python program that trains a sparse model on a LibSVM file, run by
bench/sparse/bench_sparse.py once on the real libmxnet and once on weft (MXNET_LIBRARY_PATH).

    train_sparse.py --data DIR --model linear|fm --expect mxnet|weft [--epochs 1] [--batch 512]
                    [--optimizer sgd|adam] [--lr ...] [--factors 16]

It prints one JSON line: library, samples/s of the training loop (LibSVMIter reading included),
test accuracy, peak RSS of the process. The program is MXNet's sparse recipe (example/sparse):
mx.io.LibSVMIter gives csr batches; the forward is mx.nd.sparse.dot(csr, weight); the weight's
gradient is dot(csr, g, transpose_a=True), a row_sparse array holding the batch's columns; a
local KVStore with the optimizer (lazy_update=True) applies it to those rows only. The model:
    linear: z = x·w + b                     (logistic loss)
    fm:     z = x·w + b + ½ Σ_f [(x·V)_f² − (x²·V²)_f]   (factorization machine, Rendle 2010)
with the gradients written out (no autograd), so both libraries run the same operators.
    module: MXNet's example/sparse/linear_classification as it is written there: a Module over
            SoftmaxOutput(broadcast_add(sparse.dot(csr data, row_sparse weight (F, 2)), bias)),
            the batch's rows row_sparse_pull'ed before each step, the local KVStore's optimizer.
"""
import argparse
import json
import os
import resource
import sys
import time

import mxnet as mx
import numpy as np


def library_check(expect):
    lib = mx.base._LIB._name
    is_weft = "weft" in os.path.basename(lib)
    if is_weft != (expect == "weft"):
        sys.exit(f"train_sparse: expected {expect} but loaded {lib}")
    return lib


class Linear:
    def __init__(self, features, factors):
        self.params = {"w": mx.nd.zeros((features, 1)), "b": mx.nd.zeros((1,))}

    def margin(self, x):
        return mx.nd.sparse.dot(x, self.params["w"]) + self.params["b"]

    def grads(self, x, g):
        """Row-sparse and dense gradients of the loss given g = dL/dz (batch, 1)."""
        return {"w": mx.nd.sparse.dot(x, g, transpose_a=True), "b": mx.nd.sum(g, axis=0)}


class FM(Linear):
    def __init__(self, features, factors):
        super().__init__(features, factors)
        # numpy's generator: both libraries start from the same V.
        self.params["v"] = mx.nd.array(np.random.RandomState(0).normal(0, 0.01, (features, factors)))

    @staticmethod
    def squared(x):
        # x² keeps x's pattern: built from its parts, no element-wise op on the csr itself.
        return mx.nd.sparse.csr_matrix((x.data * x.data, x.indices, x.indptr), shape=x.shape)

    def margin(self, x):
        self._x2 = self.squared(x)
        self._xv = mx.nd.sparse.dot(x, self.params["v"])
        x2v2 = mx.nd.sparse.dot(self._x2, self.params["v"] * self.params["v"])
        pair = 0.5 * mx.nd.sum(self._xv * self._xv - x2v2, axis=1, keepdims=True)
        return super().margin(x) + pair

    def grads(self, x, g):
        out = super().grads(x, g)
        # dz/dV_jf = x_j (xV)_f - x_j² V_jf: both terms store the batch's columns.
        first = mx.nd.sparse.dot(x, g * self._xv, transpose_a=True)
        second = mx.nd.sparse.dot(self._x2, g, transpose_a=True)
        rows = first.indices
        data = first.data - second.data * mx.nd.take(self.params["v"], rows)
        out["v"] = mx.nd.sparse.row_sparse_array((data, rows), shape=self.params["v"].shape)
        return out


def accuracy(model, path, features, batch):
    it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch)
    right = total = 0
    for b in it:
        n = batch - b.pad
        z = model.margin(b.data[0]).asnumpy()[:n, 0]
        y = b.label[0].asnumpy()[:n]
        right += int(((z > 0) == (y > 0.5)).sum())
        total += n
    return right / total


def train_module(a, features):
    """The `module` model: returns (samples, seconds, test accuracy)."""
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(features, 2), init=mx.init.Normal(0.01), stype="row_sparse")
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), mx.sym.Variable("bias", shape=(2,)))
    net = mx.sym.SoftmaxOutput(pred, mx.sym.Variable("softmax_label"), name="out")
    train = mx.io.LibSVMIter(data_libsvm=os.path.join(a.data, "train.libsvm"), data_shape=(features,),
                             batch_size=a.batch)
    mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    mod.init_params()
    kv = mx.kv.create("local")
    mod.init_optimizer(optimizer=a.optimizer, kvstore=kv,
                       optimizer_params={"learning_rate": a.lr, "lazy_update": True, "rescale_grad": 1.0 / a.batch})
    weight = mod._exec_group.param_arrays[mod._exec_group.param_names.index("weight")]
    samples = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(a.epochs):
        train.reset()
        for b in train:
            kv.row_sparse_pull("weight", weight, row_ids=[b.data[0].indices])
            mod.forward_backward(b)
            mod.update()
            samples += a.batch
    mx.nd.waitall()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    kv.row_sparse_pull("weight", weight, row_ids=[mx.nd.arange(features, dtype="int64")])
    test = mx.io.LibSVMIter(data_libsvm=os.path.join(a.data, "test.libsvm"), data_shape=(features,),
                            batch_size=a.batch)
    return samples, seconds, cpu, dict(mod.score(test, "acc"))["accuracy"]


def report(lib, a, samples, seconds, cpu, acc):
    """Prints the result line; cpu is the process CPU time (all threads) of the training loop."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"library": lib, "model": a.model, "samples_per_s": samples / seconds, "seconds": seconds,
                      "cpu_ms_per_batch": 1000.0 * cpu / (samples / a.batch), "samples": samples, "accuracy": acc,
                      "peak_rss_mib": rss}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", choices=["linear", "fm", "module"], default="linear")
    ap.add_argument("--expect", choices=["mxnet", "weft"], required=True)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--optimizer", choices=["sgd", "adam"], default="adam")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--factors", type=int, default=16)
    a = ap.parse_args()
    lib = library_check(a.expect)
    with open(os.path.join(a.data, "meta.json"), encoding="ascii") as f:
        meta = json.load(f)
    features = meta["features"]
    mx.random.seed(0)
    if a.model == "module":
        samples, seconds, cpu, acc = train_module(a, features)
        report(lib, a, samples, seconds, cpu, acc)
        return
    model = (FM if a.model == "fm" else Linear)(features, a.factors)
    opt = mx.optimizer.create(a.optimizer, learning_rate=a.lr, lazy_update=True, rescale_grad=1.0 / a.batch)
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    names = sorted(model.params)
    for i, name in enumerate(names):
        kv.init(i, model.params[name])

    train = mx.io.LibSVMIter(data_libsvm=os.path.join(a.data, "train.libsvm"), data_shape=(features,),
                             batch_size=a.batch)
    samples = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(a.epochs):
        train.reset()
        for b in train:
            x, y = b.data[0], b.label[0].reshape((-1, 1))
            z = model.margin(x)
            g = mx.nd.sigmoid(z) - y  # dL/dz of the logistic loss
            grads = model.grads(x, g)
            for i, name in enumerate(names):
                kv.push(i, grads[name])
                kv.pull(i, out=model.params[name])
            samples += a.batch
    mx.nd.waitall()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    acc = accuracy(model, os.path.join(a.data, "test.libsvm"), features, a.batch)
    report(lib, a, samples, seconds, cpu, acc)


if __name__ == "__main__":
    main()
