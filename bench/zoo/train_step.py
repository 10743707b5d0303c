#!/usr/bin/env python3
"""One ResNet-18 v1 training step (forward, backward, SGD with momentum) at batch 32 on 224x224
images, as bench/zoo/compare.py's training part runs it, timed with the CPU time of the process
beside the wall time: for before/after runs on a shared machine, where wall times follow the load.

Usage: train_step.py mxnet|torch [--steps 3] [--threads 2] [--dump FILE.npz]
  mxnet: MXNet's Gluon (hybridized) in the Python that runs this, on libmxnet or, with
         MXNET_LIBRARY_PATH=$PWD/build/default/lib/libweft_mxnet.so (absolute), on weft;
  torch: torchvision's resnet18 in PyTorch.
Prints one JSON line: median wall ms per step ("train"), median CPU ms per step ("cpu", all
threads), the fastest step ("min"), after two untimed steps. --dump (mxnet) writes the
parameters after the last step, to compare runs bit for bit.
"""
import argparse
import json
import time


def mxnet_step(a):
    import mxnet as mx
    import numpy as np
    import os
    # MXNet's libinfo ignores a relative MXNET_LIBRARY_PATH and loads libmxnet: say which ran.
    if os.environ.get("MXNET_LIBRARY_PATH") and "libweft_mxnet" not in mx.base._LIB._name:
        raise SystemExit("MXNET_LIBRARY_PATH is set but %s was loaded (give an absolute path)" % mx.base._LIB._name)
    mx.random.seed(0)
    np.random.seed(0)
    net = mx.gluon.model_zoo.vision.resnet18_v1(pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.array(np.random.uniform(-1, 1, (a.batch, 3, 224, 224)))
    y = mx.nd.array(np.random.randint(0, 1000, (a.batch,)))

    def step():
        with mx.autograd.record():
            l = loss(net(x), y)
        l.backward()
        trainer.step(a.batch)
        mx.nd.waitall()

    def dump(path):
        np.savez(path, **{k: v.data().asnumpy() for k, v in net.collect_params().items()})

    return step, dump


def torch_step(a):
    import torch
    import torchvision
    torch.set_num_threads(a.threads)
    net = torchvision.models.resnet18()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(a.batch, 3, 224, 224)
    y = torch.randint(0, 1000, (a.batch,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    return step, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framework", choices=["mxnet", "torch"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (MXNet/weft: OMP_NUM_THREADS)")
    ap.add_argument("--dump")
    a = ap.parse_args()
    step, dump = (mxnet_step if a.framework == "mxnet" else torch_step)(a)
    wall, cpu = [], []
    for i in range(a.steps + 2):
        s, c = time.perf_counter(), time.process_time()
        step()
        if i >= 2:
            wall.append((time.perf_counter() - s) * 1e3)
            cpu.append((time.process_time() - c) * 1e3)
    if a.dump and dump:
        dump(a.dump)
    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    print(json.dumps({"train": med(wall), "cpu": med(cpu), "min": min(wall)}))


if __name__ == "__main__":
    main()
