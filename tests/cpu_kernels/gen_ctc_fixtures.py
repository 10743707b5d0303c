#!/usr/bin/env python3
"""Writes tests/cpu_kernels/data/mxnet_ctc_loss.json: MXNet 1.9.1's CTCLoss on the cpu (loss and
the gradient of sum(head * loss) with respect to the activations), read by ctc_loss_test.cc.

Run with the MXNet venv (mxnet==1.9.1, numpy<1.24):
  MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/cpu_kernels/gen_ctc_fixtures.py

Each case: attributes as MXNet's frontend passes them, the inputs (data (T, N, C), label (N, L),
the optional lengths) and head (the out_grad), and MXNet's loss and data gradient. The cases
cover both blank conventions, padded rows, repeated labels (which need a blank between them),
data_lengths shorter than the sequence, label_lengths with values that are not padding, an empty
label and a label equal to the blank class. Sequences too short for their label are left out:
MXNet's loss is 0 there but its gradient is whatever its workspace held.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mxnet_ctc_loss.json")
rng = np.random.RandomState(20261129)


def tensor(a):
    a = np.asarray(a, dtype=np.float32)
    return {"shape": list(a.shape), "values": [float(v) for v in a.ravel()]}


def case(name, frames, classes, label, attrs, data_lengths=None, label_lengths=None):
    label = np.array(label, dtype=np.float32)
    batch = label.shape[0]
    data = rng.uniform(-2, 2, size=(frames, batch, classes)).astype(np.float32)
    head = rng.uniform(0.5, 1.5, size=(batch,)).astype(np.float32)
    x = mx.nd.array(data)
    x.attach_grad()
    extra = {}
    if data_lengths is not None:
        extra["data_lengths"] = mx.nd.array(data_lengths)
    if label_lengths is not None:
        extra["label_lengths"] = mx.nd.array(label_lengths)
    with mx.autograd.record():
        loss = mx.nd.CTCLoss(x, mx.nd.array(label), **extra, **attrs)
    loss.backward(mx.nd.array(head))
    inputs = [tensor(data), tensor(label)]
    if data_lengths is not None:
        inputs.append(tensor(data_lengths))
    if label_lengths is not None:
        inputs.append(tensor(label_lengths))
    return {"name": name, "attrs": {k: str(v) for k, v in attrs.items()}, "inputs": inputs, "head": tensor(head),
            "loss": tensor(loss.asnumpy()), "grad": tensor(x.grad.asnumpy())}


cases = [
    case("first, padded rows", 6, 5, [[1, 2, 0], [3, 3, 4], [4, 0, 0]], {"blank_label": "first"}),
    case("last, padded rows", 6, 5, [[0, 1, -1], [2, 2, 3], [-1, -1, -1]], {"blank_label": "last"}),
    case("first, data_lengths", 7, 4, [[1, 2], [3, 0]], {"blank_label": "first", "use_data_lengths": True},
         data_lengths=[5, 7]),
    case("last, label_lengths (values past the length ignored)", 8, 4, [[2, 1, 3, 3], [0, 0, 1, 2]],
         {"blank_label": "last", "use_label_lengths": True}, label_lengths=[2, 3]),
    case("both lengths, one empty label", 6, 6, [[1, 1, 2], [5, 4, 3]],
         {"blank_label": "first", "use_data_lengths": True, "use_label_lengths": True},
         data_lengths=[6, 4], label_lengths=[3, 0]),
    case("last, a label equal to the blank class", 7, 4, [[3, 2, 2], [1, 3, 0]],
         {"blank_label": "last", "use_label_lengths": True}, label_lengths=[3, 3]),
    case("longer sequence", 30, 8, [[1, 2, 3, 4, 5, 6], [7, 7, 7, 1, 0, 0]], {"blank_label": "first"}),
]

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    json.dump({"generator": "tests/cpu_kernels/gen_ctc_fixtures.py", "mxnet": mx.__version__, "cases": cases}, f)
print("wrote", OUT, len(cases), "cases")
