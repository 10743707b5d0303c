#!/usr/bin/env python3
"""Writes mxnet_expected.h: inputs and MXNet 1.9.1's results for the optimizer update ops, the
Optimizer classes and the "device" KVStore with 2-bit compression, which optimizer_test.cc and
kvstore_test.cc compare weft against on every device. Run with the oracle:
  MXNET_SUBGRAPH_BACKEND=NONE /work/venv-mxnet/bin/python make_mxnet_expected.py
(any venv with mxnet==1.9.1 and numpy<1.24 works). The output is deterministic."""
import os
import shutil
import subprocess

import mxnet as mx
import numpy as np

N = 10  # elements per array: a few of each sign, some clipped
rng = np.random.RandomState(20240611)


def rand(lo, hi):
    return rng.uniform(lo, hi, N).astype(np.float32)


def literal(v):
    text = "%.9g" % v
    return text + ("f" if ("." in text or "e" in text) else ".0f")


def floats(a):
    return "{" + ", ".join(literal(v) for v in np.asarray(a, dtype=np.float32).ravel()) + "}"


def attrs_cc(attrs):
    return "{" + ", ".join('{"%s", "%s"}' % (k, v) for k, v in sorted(attrs.items())) + "}"


lines = []

# ---- update ops: `steps` calls with the same gradient, states updated in place ----------------
OPS = [
    ("sgd_update", {"lr": "0.1", "wd": "0.01", "rescale_grad": "0.5"}, []),
    ("sgd_mom_update", {"lr": "0.1", "momentum": "0.9", "wd": "0.01", "rescale_grad": "0.5"}, [(-0.1, 0.1)]),
    ("nag_mom_update", {"lr": "0.1", "momentum": "0.9", "wd": "0.01", "rescale_grad": "0.5"}, [(-0.1, 0.1)]),
    ("adam_update", {"lr": "0.01", "beta1": "0.8", "beta2": "0.95", "epsilon": "1e-06", "wd": "0.01",
                     "rescale_grad": "0.5"}, [(-0.1, 0.1), (0.0, 0.1)]),
    ("rmsprop_update", {"lr": "0.01", "gamma1": "0.9", "epsilon": "1e-08", "wd": "0.01", "rescale_grad": "0.5",
                        "clip_weights": "1.2"}, [(0.0, 0.1)]),
    ("rmspropalex_update", {"lr": "0.01", "gamma1": "0.9", "gamma2": "0.8", "epsilon": "1e-08", "wd": "0.01",
                            "rescale_grad": "0.5", "clip_weights": "1.2"}, [(0.2, 0.4), (-0.1, 0.1), (-0.1, 0.1)]),
]
STEPS = 2
lines.append("struct OpCase {\n  const char* op;\n  std::map<std::string, std::string> attrs;\n  int steps;\n"
             "  std::vector<std::vector<float>> inputs;    // weight, grad, then the states\n"
             "  std::vector<std::vector<float>> expected;  // weight, then the states, after `steps` calls\n};")
lines.append("inline const std::vector<OpCase> kOpCases = {")
for op, base, state_ranges in OPS:
    for clip in (None, "0.3"):
        attrs = dict(base)
        if clip is not None:
            attrs["clip_gradient"] = clip
        w0, g = rand(-1.5, 1.5), rand(-2.0, 2.0)
        s0 = [rand(lo, hi) for lo, hi in state_ranges]
        w = mx.nd.array(w0)
        states = [mx.nd.array(s) for s in s0]
        for _ in range(STEPS):
            # Into a new array, not in place: MXNet's nag_mom_update kernel writes the weight before
            # it reads it again for the momentum's weight decay, so in place (as MXNet's NAG
            # optimizer calls it) that term sees the new weight. weft computes what the kernel's
            # formula says, in place or not.
            out = mx.nd.zeros_like(w)
            getattr(mx.nd, op)(w, mx.nd.array(g), *states, out=out, **attrs)
            w = out
        ins = [w0, g] + s0
        outs = [w.asnumpy()] + [s.asnumpy() for s in states]
        lines.append("    {\"%s\", %s, %d,\n     {%s},\n     {%s}}," % (
            op, attrs_cc(attrs), STEPS, ", ".join(floats(a) for a in ins), ", ".join(floats(a) for a in outs)))
lines.append("};")

# ---- Optimizer classes: three updates of index 0 (states created by the optimizer) -----------
OPTS = [
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.8}),
    # wd 0 for NAG with momentum: see the in-place note above (the op cases cover its wd).
    ("nag", {"learning_rate": 0.1, "momentum": 0.9, "rescale_grad": 0.5, "clip_gradient": 0.8}),
    ("nag", {"learning_rate": 0.1, "wd": 0.01, "rescale_grad": 0.5}),
    ("adam", {"learning_rate": 0.01, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.8}),
    ("rmsprop", {"learning_rate": 0.01, "wd": 0.01, "rescale_grad": 0.5}),
    ("rmsprop", {"learning_rate": 0.01, "wd": 0.01, "rescale_grad": 0.5, "centered": True, "clip_weights": 1.2,
                 "gamma2": 0.8}),
]
UPDATES = 3
lines.append("struct OptimizerCase {\n  const char* type;\n  std::map<std::string, std::string> params;\n"
             "  int updates;\n  std::vector<float> weight, grad, expected;\n};")
lines.append("inline const std::vector<OptimizerCase> kOptimizerCases = {")
for name, params in OPTS:
    w0, g = rand(-1.5, 1.5), rand(-2.0, 2.0)
    opt = mx.optimizer.create(name, **params)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0)
    for _ in range(UPDATES):
        updater(0, mx.nd.array(g), w)
    p = {("lr" if k == "learning_rate" else k): ("true" if v is True else repr(v)) for k, v in params.items()}
    lines.append("    {\"%s\", %s, %d, %s, %s, %s}," % (name, attrs_cc(p), UPDATES, floats(w0), floats(g),
                                                    floats(w.asnumpy())))
lines.append("};")

# ---- KVStore "device" with 2-bit compression: pushes from two devices, pulled after each ------
T = 0.5
kv = mx.kv.create("device")
kv.set_gradient_compression({"type": "2bit", "threshold": T})
kv.init(0, mx.nd.zeros((N,)))
pushes, pulled = [], []
for _ in range(4):
    grads = [rand(-0.7, 0.7) for _ in range(2)]
    kv.push(0, [mx.nd.array(gr, ctx=mx.cpu(i)) for i, gr in enumerate(grads)])
    out = mx.nd.zeros((N,))
    kv.pull(0, out=out)
    pushes.append(grads)
    pulled.append(out.asnumpy())
lines.append("// KVStore(\"device\"), 2-bit compression with threshold %g, key 0 initialised to zeros: pushes[i]\n"
             "// holds the two devices' gradients of push i, pulled[i] the value pulled after it." % T)
lines.append("inline constexpr float kTwoBitThreshold = %gf;" % T)
lines.append("inline const std::vector<std::vector<std::vector<float>>> kTwoBitPushes = {%s};" % ", ".join(
    "{" + ", ".join(floats(g) for g in gs) + "}" for gs in pushes))
lines.append("inline const std::vector<std::vector<float>> kTwoBitPulled = {%s};" % ", ".join(floats(p) for p in pulled))

header = ("// Generated by data/make_mxnet_expected.py with MXNet %s; do not edit (rerun the script).\n"
          "#pragma once\n\n#include <map>\n#include <string>\n#include <vector>\n\nnamespace mxnet_expected {\n\n"
          % mx.__version__)
here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "mxnet_expected.h")
with open(out, "w") as f:
    f.write(header + "\n".join(lines) + "\n\n}  // namespace mxnet_expected\n")
if shutil.which("clang-format"):  # the repository's style (.clang-format)
    subprocess.run(["clang-format", "-i", out], check=True)
