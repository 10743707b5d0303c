#!/usr/bin/env python3
"""Peer baselines for compare.py: MXNet's classic MNIST networks trained on Fashion-MNIST with
PyTorch or with Apache MXNet 1.9.1, timed as weft's train_mnist / predict_mnist are.

Usage: peer_fmnist.py {torch|mxnet} {mlp|lenet} EPOCHS BATCH [SEED]
Run it with the interpreter that has the framework (Debian's /usr/bin/python3 for python3-torch,
a virtual environment with mxnet==1.9.1 and numpy<1.24 for MXNet). Thread settings come from the
environment only (OMP_NUM_THREADS etc., as a user would set them); the script sets none, except
torch.set_num_threads(OMP_NUM_THREADS) because PyTorch ignores the variable after import.

Networks (MXNet example/image-classification/symbols): MLP 784-128-64-10 with ReLU; LeNet conv
20@5x5, tanh, max-pool 2, conv 50@5x5, tanh, max-pool 2, fc 500, tanh, fc 10; softmax cross
entropy. SGD lr 0.05 momentum 0.9, Xavier-style init, shuffled each epoch. Training time per
epoch covers forward, backward, update and the accuracy metric (MXNet's Module.fit loop);
inference is a forward pass over the 10 000 test images at the same batch size, repeated
INFER_PASSES times: the speed is the median of passes 2..N (as predict_mnist --repeat N reports),
the accuracy that of the last pass.
Prints one line: framework=... train_sps=<median epoch> infer_sps=... test_acc=...
"""
import gzip
import os
import statistics
import sys
import time

import numpy as np

DATA = os.environ.get("WEFT_FMNIST_DIR", "/usr/share/datasets/fashion-mnist/")
INFER_PASSES = 5  # compare.py passes the same count to predict_mnist --repeat


def timed_passes(one_pass):
    """Runs one_pass() INFER_PASSES times; returns (median samples/s of the warm passes, last result)."""
    speeds, result = [], None
    for _ in range(INFER_PASSES):
        t0 = time.perf_counter()
        result, n = one_pass()
        speeds.append(n / (time.perf_counter() - t0))
    return statistics.median(speeds[1:]), result


def idx(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    nd = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def load():
    xtr = (idx("train-images-idx3-ubyte.gz").astype(np.float32) / 255).reshape(-1, 1, 28, 28)
    xte = (idx("t10k-images-idx3-ubyte.gz").astype(np.float32) / 255).reshape(-1, 1, 28, 28)
    return xtr, idx("train-labels-idx1-ubyte.gz"), xte, idx("t10k-labels-idx1-ubyte.gz")


def run_torch(net_name, epochs, batch, seed, xtr, ytr, xte, yte):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    if "OMP_NUM_THREADS" in os.environ:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"].split(",")[0]))
    torch.manual_seed(seed)
    if net_name == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                            nn.Linear(64, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5), nn.Tanh(),
                            nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500), nn.Tanh(), nn.Linear(500, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    xtr, ytr = torch.from_numpy(xtr), torch.from_numpy(ytr.astype(np.int64))
    xte, yte = torch.from_numpy(xte), torch.from_numpy(yte.astype(np.int64))
    rates = []
    for _ in range(epochs):
        perm = torch.randperm(len(xtr))
        net.train()
        correct, n = 0, 0
        t0 = time.perf_counter()
        for i in range(0, len(xtr) - batch + 1, batch):
            j = perm[i:i + batch]
            opt.zero_grad()
            out = net(xtr[j])
            F.cross_entropy(out, ytr[j]).backward()
            opt.step()
            correct += (out.argmax(1) == ytr[j]).sum().item()
            n += batch
        rates.append(n / (time.perf_counter() - t0))
    net.eval()

    def one_pass():
        correct = 0
        with torch.no_grad():
            for i in range(0, len(xte), batch):
                correct += (net(xte[i:i + batch]).argmax(1) == yte[i:i + batch]).sum().item()
        return correct / len(xte), len(xte)

    infer, acc = timed_passes(one_pass)
    return torch.__version__, statistics.median(rates), infer, acc


def run_mxnet(net_name, epochs, batch, seed, xtr, ytr, xte, yte):
    import mxnet as mx

    data = mx.sym.Variable("data")
    if net_name == "mlp":
        x = mx.sym.Flatten(data)
        x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=128), act_type="relu")
        x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=64), act_type="relu")
        x = mx.sym.FullyConnected(x, num_hidden=10)
    else:
        x = mx.sym.Convolution(data, kernel=(5, 5), num_filter=20)
        x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), pool_type="max", kernel=(2, 2), stride=(2, 2))
        x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50)
        x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), pool_type="max", kernel=(2, 2), stride=(2, 2))
        x = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=500), act_type="tanh")
        x = mx.sym.FullyConnected(x, num_hidden=10)
    net = mx.sym.SoftmaxOutput(x, name="softmax")
    mx.random.seed(seed)
    np.random.seed(seed)
    train = mx.io.NDArrayIter(xtr, ytr.astype(np.float32), batch_size=batch, shuffle=True,
                              label_name="softmax_label")
    test = mx.io.NDArrayIter(xte, yte.astype(np.float32), batch_size=batch, label_name="softmax_label")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    mod.init_params(mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.05, "momentum": 0.9})
    metric = mx.metric.Accuracy()
    rates = []
    for _ in range(epochs):
        train.reset()
        metric.reset()
        n = 0
        t0 = time.perf_counter()
        for b in train:
            mod.forward_backward(b)
            mod.update()
            mod.update_metric(metric, b.label)
            n += batch
        mx.nd.waitall()
        rates.append(n / (time.perf_counter() - t0))

    def one_pass():
        test.reset()
        metric.reset()
        for b in test:
            mod.forward(b, is_train=False)
            mod.update_metric(metric, b.label)
        mx.nd.waitall()
        return metric.get()[1], len(xte)

    infer, acc = timed_passes(one_pass)
    return mx.__version__, statistics.median(rates), infer, acc


def main():
    if len(sys.argv) not in (5, 6) or sys.argv[1] not in ("torch", "mxnet") or sys.argv[2] not in ("mlp", "lenet"):
        sys.exit(__doc__)
    framework, net_name, epochs, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seed = int(sys.argv[5]) if len(sys.argv) == 6 else 0
    run = run_torch if framework == "torch" else run_mxnet
    version, train_sps, infer_sps, acc = run(net_name, epochs, batch, seed, *load())
    print(f"framework={framework} version={version} net={net_name} epochs={epochs} batch={batch} "
          f"train_sps={train_sps:.0f} infer_sps={infer_sps:.0f} test_acc={acc:.4f}")


if __name__ == "__main__":
    main()
