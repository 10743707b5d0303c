#!/usr/bin/env python3
"""Writes the MXNet-compatibility fixtures under tests/compat/data/ from the real MXNet 1.9.1.

Run by hand (the tests only read the files it writes; they never need MXNet):

    python3 -m venv /tmp/venv-mxnet && /tmp/venv-mxnet/bin/pip install mxnet==1.9.1 'numpy<1.24'
    MXNET_SUBGRAPH_BACKEND=NONE /tmp/venv-mxnet/bin/python tests/compat/gen_fixtures.py

MXNET_SUBGRAPH_BACKEND=NONE keeps MXNet's MKLDNN graph fusion from changing what the plain
executor computes. Output (all small):

  probes.json / probes.params   one probe per operator case: the symbol JSON MXNet writes, its
                                inputs, MXNet's outputs and, with a random head gradient, MXNet's
                                input gradients. Array keys "<probe>:arg:<name>", ":aux:<name>",
                                ":out:<i>", ":head:<i>", ":grad:<name>".
  zoo_<net>-symbol.json         a Gluon model-zoo network exported by HybridBlock.export, widths
  zoo_<net>-0000.params         reduced (see ZOO) and random weights / BatchNorm statistics, plus
  zoo_<net>-io.params           MXNet's inference output "out:0" for the input "data" of shape
  zoo.json                      given in zoo.json, whose values are DeterministicInput(shape).

DeterministicInput: element i = float32((i * 7919) % 2001 - 1000) / float32(1000), an exactly
rounded value in both numpy and C++, so inputs need no storage.
"""
import json
import os
import sys

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
# The plain (non-MKLDNN) cpu kernels: the reference implementations, and MKLDNN has no dilated
# deconvolution.
os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
import mxnet as mx  # noqa: E402
from mxnet import gluon  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
RNG = np.random.RandomState(20261126)


def deterministic_input(shape):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    return ((((i * 7919) % 2001) - 1000).astype(np.float32) / np.float32(1000)).reshape(shape)


# ---- op probes ---------------------------------------------------------------------------------

def var(name):
    return mx.sym.var(name)


def signed(shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def positive(shape):
    return RNG.uniform(0.2, 2, shape).astype(np.float32)


def away(shape):
    x = RNG.uniform(0.05, 1, shape) * RNG.choice([-1, 1], shape)
    return x.astype(np.float32)


def integers(lo, hi):
    return lambda shape: RNG.randint(lo, hi, shape).astype(np.float32)


def distinct(shape):
    n = int(np.prod(shape))
    return (RNG.permutation(n).astype(np.float32) / n * 6 - 3).reshape(shape)


# (name, symbol, {input: (shape, generator)}, options)
def probes():
    d, x = var("data"), var("x")
    p = []

    def add(name, sym, inputs, **opt):
        p.append((name, sym, inputs, opt))

    s35 = (3, 5)
    add("clip", mx.sym.clip(d, a_min=-0.5, a_max=0.25), {"data": (s35, signed)})
    add("clip_relu6", mx.sym.clip(d, 0.0, 6.0), {"data": (s35, lambda s: RNG.uniform(-3, 9, s).astype(np.float32))})
    for op, gen in [("rsqrt", positive), ("floor", signed), ("round", distinct), ("sign", away),
                    ("log1p", positive), ("expm1", signed)]:
        add(op, getattr(mx.sym, op)(d), {"data": ((2, 3, 4), gen)})
    for op in ["broadcast_maximum", "broadcast_minimum"]:
        add(op, getattr(mx.sym, op)(var("lhs"), var("rhs")),
            {"lhs": ((2, 3, 4), distinct), "rhs": ((1, 3, 1), distinct)})
    add("Deconvolution_s2",
        mx.sym.Deconvolution(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1), num_filter=4, no_bias=False,
                             name="deconv"),
        {"data": ((2, 3, 4, 5), signed), "deconv_weight": ((3, 4, 3, 3), signed), "deconv_bias": ((4,), signed)})
    add("Deconvolution_target",
        mx.sym.Deconvolution(d, kernel=(4, 4), stride=(2, 2), target_shape=(8, 9), num_filter=2, num_group=2,
                             name="deconv"),
        {"data": ((1, 4, 4, 4), signed), "deconv_weight": ((4, 1, 4, 4), signed)})
    add("Deconvolution_1d",
        mx.sym.Deconvolution(d, kernel=(3,), dilate=(2,), num_filter=3, name="deconv"),
        {"data": ((2, 2, 5), signed), "deconv_weight": ((2, 3, 3), signed)})
    add("Embedding", mx.sym.Embedding(d, input_dim=6, output_dim=4, name="emb"),
        {"data": ((2, 3), integers(0, 6)), "emb_weight": ((6, 4), signed)}, no_grad=["data"])
    add("LRN", mx.sym.LRN(d, nsize=3, alpha=0.3, beta=0.75, knorm=1.5), {"data": ((2, 5, 3, 2), signed)})
    add("LRN_default", mx.sym.LRN(d, nsize=5), {"data": ((1, 6, 2, 2), signed)})
    add("SwapAxis", mx.sym.SwapAxis(d, dim1=0, dim2=2), {"data": ((2, 3, 4), signed)})
    add("slice", mx.sym.slice(d, begin=(0, 1), end=(2, None)), {"data": ((3, 4, 5), signed)})
    add("slice_step", mx.sym.slice(d, begin=(None, 3), end=(None, 0), step=(1, -2)), {"data": ((2, 5), signed)})
    add("slice_neg", mx.sym.slice(d, begin=(-2,), end=(None,), step=(2,)), {"data": ((5, 3), signed)})
    add("slice_axis", mx.sym.slice_axis(d, axis=1, begin=1, end=3), {"data": ((2, 4, 3), signed)})
    add("slice_axis_none", mx.sym.slice_axis(d, axis=-1, begin=-2, end=None), {"data": ((3, 5), signed)})
    for cip in [True, False]:
        add("Pooling_avg_cip_%s" % cip,
            mx.sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=cip),
            {"data": ((1, 2, 5, 6), signed)})
    add("Pooling_full_avg",
        mx.sym.Pooling(d, kernel=(3, 3), stride=(2, 2), pool_type="avg", pooling_convention="full"),
        {"data": ((1, 2, 6, 6), signed)})
    for act in ["selu", "gelu"]:
        add("LeakyReLU_" + act, mx.sym.LeakyReLU(d, act_type=act), {"data": ((2, 3, 4), away)})
    add("LeakyReLU_prelu", mx.sym.LeakyReLU(d, act_type="prelu", name="lr"),
        {"data": ((2, 3, 4), away), "lr_gamma": ((3,), positive)})
    # Inference: MXNet leaves the mask output unwritten (its backward then reads garbage), so only
    # the output is compared.
    add("LeakyReLU_rrelu", mx.sym.LeakyReLU(d, act_type="rrelu"), {"data": ((4, 3), away)}, is_train=False,
        outputs=1, forward_only=True)
    add("SoftmaxOutput_multi",
        mx.sym.SoftmaxOutput(d, var("label"), multi_output=True, normalization="valid", use_ignore=True,
                             ignore_label=1),
        {"data": ((2, 3, 4), signed), "label": ((2, 4), integers(0, 3))}, no_grad=["label"])
    add("SoftmaxOutput_multi_null", mx.sym.SoftmaxOutput(d, var("label"), multi_output=True, grad_scale=2),
        {"data": ((2, 3, 2, 2), signed), "label": ((2, 2, 2), integers(0, 3))}, no_grad=["label"])
    # MXNet 1.9's gradient here subtracts the one-hot of only some rows (see the issue note);
    # weft keeps the row-per-label gradient, so only the forward is compared.
    add("SoftmaxOutput_nd", mx.sym.SoftmaxOutput(d, var("label"), normalization="batch"),
        {"data": ((2, 3, 4), signed), "label": ((2, 3), integers(0, 4))}, no_grad=["label"], forward_only=True)
    return p


def write_probes():
    manifest, arrays = [], {}
    for name, sym, inputs, opt in probes():
        is_train = opt.get("is_train", True)
        no_grad = set(opt.get("no_grad", []))
        shapes = {k: v[0] for k, v in inputs.items()}
        args = {k: mx.nd.array(v[1](v[0])) for k, v in inputs.items()}
        arg_names = sym.list_arguments()
        missing = [a for a in arg_names if a not in args]
        assert not missing, (name, missing)
        grads = {a: mx.nd.zeros(args[a].shape) for a in arg_names if a not in no_grad}
        reqs = {a: ("null" if a in no_grad else "write") for a in arg_names}
        ex = sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req=reqs)
        outs = ex.forward(is_train=is_train)
        heads = [mx.nd.array(signed(o.shape)) for o in outs]
        is_loss = sym.attr("op") == "SoftmaxOutput" or "SoftmaxOutput" in sym.tojson()
        ex.backward([] if is_loss else heads)
        for a in arg_names:
            arrays["%s:arg:%s" % (name, a)] = args[a]
            if a in grads:
                arrays["%s:grad:%s" % (name, a)] = grads[a]
        for i, o in enumerate(outs):
            arrays["%s:out:%d" % (name, i)] = o
            if not is_loss:
                arrays["%s:head:%d" % (name, i)] = heads[i]
        manifest.append({"name": name, "symbol": sym.tojson(), "is_train": is_train,
                         "shapes": {k: list(v) for k, v in shapes.items()}, "no_grad": sorted(no_grad),
                         "loss": is_loss, "forward_only": opt.get("forward_only", False),
                         "outputs": opt.get("outputs", len(outs))})
    mx.nd.save(os.path.join(OUT, "probes.params"), arrays)
    with open(os.path.join(OUT, "probes.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("probes: %d cases, %d arrays" % (len(manifest), len(arrays)))


# ---- model-zoo networks ------------------------------------------------------------------------

class ScaledNN(object):
    """Stands in for `gluon.nn` inside a model-zoo module: Conv2D / Dense widths divided by
    `factor` (at least 2 units), so the zoo's own code builds a small network with the same layers
    and attributes. Depthwise groups follow their channels."""

    def __init__(self, factor):
        self.factor = factor

    def _scale(self, n):
        if n == CLASSES:  # the classifier keeps its width
            return n
        return max(2, int(n) // self.factor)

    def Conv2D(self, channels, *a, **k):
        if k.get("groups", 1) == channels and channels > 1:
            k["groups"] = self._scale(channels)
        return gluon.nn.Conv2D(self._scale(channels), *a, **k)

    def Dense(self, units, *a, **k):
        return gluon.nn.Dense(self._scale(units), *a, **k)

    def __getattr__(self, name):
        return getattr(gluon.nn, name)


def scaled(module_name, factor, make):
    module = sys.modules["mxnet.gluon.model_zoo.vision." + module_name]
    saved = module.nn
    module.nn = ScaledNN(factor)
    try:
        return make()
    finally:
        module.nn = saved


Z = vision
CLASSES = 10
# name -> (constructor, input shape)
ZOO = {
    "alexnet": (lambda: scaled("alexnet", 32, lambda: Z.AlexNet(classes=CLASSES)), (1, 3, 224, 224)),
    "vgg11": (lambda: scaled("vgg", 16, lambda: Z.VGG([1, 1, 2, 2, 2], [64, 128, 256, 512, 512], classes=CLASSES)),
              (1, 3, 32, 32)),
    "vgg11_bn": (lambda: scaled("vgg", 16, lambda: Z.VGG([1, 1, 2, 2, 2], [64, 128, 256, 512, 512], classes=CLASSES,
                                                           batch_norm=True)), (1, 3, 32, 32)),
    "resnet18_v1": (lambda: Z.ResNetV1(Z.BasicBlockV1, [2, 2, 2, 2], [4, 4, 8, 16, 32], classes=CLASSES),
                    (2, 3, 32, 32)),
    "resnet50_v1": (lambda: Z.ResNetV1(Z.BottleneckV1, [1, 1, 1, 1], [4, 16, 32, 64, 128], classes=CLASSES),
                    (1, 3, 32, 32)),
    "resnet18_v2": (lambda: Z.ResNetV2(Z.BasicBlockV2, [2, 2, 2, 2], [4, 4, 8, 16, 32], classes=CLASSES),
                    (2, 3, 32, 32)),
    "resnet50_v2": (lambda: Z.ResNetV2(Z.BottleneckV2, [1, 1, 1, 1], [4, 16, 32, 64, 128], classes=CLASSES),
                    (1, 3, 32, 32)),
    "densenet": (lambda: Z.DenseNet(8, 4, [2, 2, 2, 2], bn_size=2, classes=CLASSES), (1, 3, 224, 224)),
    "squeezenet1.0": (lambda: scaled("squeezenet", 8, lambda: Z.SqueezeNet("1.0", classes=CLASSES)), (1, 3, 224, 224)),
    "squeezenet1.1": (lambda: scaled("squeezenet", 8, lambda: Z.SqueezeNet("1.1", classes=CLASSES)), (1, 3, 224, 224)),
    "inceptionv3": (lambda: scaled("inception", 16, lambda: Z.Inception3(classes=CLASSES)), (1, 3, 299, 299)),
    "mobilenet1.0": (lambda: Z.MobileNet(0.125, classes=CLASSES), (1, 3, 32, 32)),
    "mobilenetv2_1.0": (lambda: scaled("mobilenet", 16, lambda: Z.MobileNetV2(1.0, classes=CLASSES)), (1, 3, 32, 32)),
}


def randomize(net):
    """Random weights with a sane scale and non-trivial BatchNorm parameters and statistics."""
    for name, prm in net.collect_params().items():
        shape = prm.shape
        if name.endswith("running_var") or name.endswith("gamma"):
            v = RNG.uniform(0.5, 1.5, shape)
        elif name.endswith("running_mean") or name.endswith("beta") or name.endswith("bias"):
            v = RNG.uniform(-0.2, 0.2, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            v = RNG.normal(0, np.sqrt(2.0 / max(fan_in, 1)), shape)
        prm.set_data(mx.nd.array(v.astype(np.float32)))


def write_zoo(names):
    index = {}
    for name in names:
        make, shape = ZOO[name]
        net = make()
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=False)
        x = mx.nd.array(deterministic_input(shape))
        net(x)  # builds the parameters' shapes
        randomize(net)
        out = net(x)  # inference (autograd off): moving statistics, no dropout
        prefix = os.path.join(OUT, "zoo_" + name)
        net.export(prefix, epoch=0)
        mx.nd.save(prefix + "-io.params", {"out:0": out})
        # Reload through the symbol API to make sure the exported files reproduce the output.
        sym = mx.sym.load(prefix + "-symbol.json")
        saved = mx.nd.load(prefix + "-0000.params")
        args = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
        aux = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
        args["data"] = x
        check = sym.bind(mx.cpu(), args=args, aux_states=aux, grad_req="null").forward(is_train=False)[0]
        assert np.allclose(check.asnumpy(), out.asnumpy(), atol=1e-6), name
        nparams = sum(int(np.prod(v.shape)) for v in saved.values())
        ops = sorted({n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"})
        index[name] = {"input": list(shape), "params": nparams, "ops": ops,
                       "out_absmax": float(np.abs(out.asnumpy()).max())}
        print("zoo %-16s %8d params, out %s, ops %s" % (name, nparams, out.shape, ", ".join(ops)))
    with open(os.path.join(OUT, "zoo.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    write_probes()
    write_zoo(sys.argv[1:] or sorted(ZOO))
