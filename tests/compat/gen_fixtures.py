#!/usr/bin/env python3
"""Writes the MXNet-compatibility fixtures under tests/compat/data/ from the real MXNet 1.9.1.

Run by hand (the tests only read the files it writes; they never need MXNet):

    python3 -m venv /tmp/venv-mxnet && /tmp/venv-mxnet/bin/pip install mxnet==1.9.1 'numpy<1.24'
    MXNET_SUBGRAPH_BACKEND=NONE /tmp/venv-mxnet/bin/python tests/compat/gen_fixtures.py [--probes-only | NET...]

(--probes-only rewrites probes.* alone, --classic-only symbols.json and sym_*; NET... limits the
zoo networks written.)

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
    tensor_probes(add, d)
    return p


def with_nan(shape):
    x = signed(shape)
    x.flat[::5] = np.nan
    return x


def tensor_probes(add, d):
    """The common tensor ops of issue 13's second list (appended after the first list so that the
    random stream, and so the earlier probes' values, stay as they were)."""
    a, b, c = var("a"), var("b"), var("c")
    add("where", mx.sym.where(c, a, b), {"c": ((2, 3), integers(0, 2)), "a": ((2, 3), signed), "b": ((2, 3), signed)},
        no_grad=["c"])
    add("where_rows", mx.sym.where(c, a, b), {"c": ((3,), integers(0, 2)), "a": ((3, 4), signed),
                                              "b": ((3, 4), signed)}, no_grad=["c"])
    add("take_clip", mx.sym.take(a, var("indices")), {"a": ((5, 3), signed), "indices": ((2, 3), integers(-2, 8))},
        no_grad=["indices"])
    add("take_wrap", mx.sym.take(a, var("indices"), axis=1, mode="wrap"),
        {"a": ((2, 4, 3), signed), "indices": ((5,), integers(-9, 9))}, no_grad=["indices"])
    add("pick", mx.sym.pick(d, var("index")), {"data": ((3, 4), signed), "index": ((3,), integers(0, 4))},
        no_grad=["index"])
    add("pick_keep_wrap", mx.sym.pick(d, var("index"), axis=0, keepdims=True, mode="wrap"),
        {"data": ((3, 4, 2), signed), "index": ((1, 4, 2), integers(-4, 7))}, no_grad=["index"])
    add("stack", mx.sym.stack(a, b, c, axis=1), {"a": ((2, 3), signed), "b": ((2, 3), signed), "c": ((2, 3), signed)})
    add("stack_last", mx.sym.stack(a, b, axis=-1), {"a": ((4,), signed), "b": ((4,), signed)})
    add("tile", mx.sym.tile(d, reps=(2, 1, 3)), {"data": ((2, 3), signed)})
    add("tile_short", mx.sym.tile(d, reps=(2,)), {"data": ((3, 1, 2), signed)})
    add("repeat", mx.sym.repeat(d, repeats=2, axis=1), {"data": ((2, 3), signed)})
    add("repeat_flat", mx.sym.repeat(d, repeats=3), {"data": ((2, 2), signed)})
    add("broadcast_to", mx.sym.broadcast_to(d, shape=(2, 0, 4)), {"data": ((1, 3, 1), signed)})
    add("broadcast_like", mx.sym.broadcast_like(a, b), {"a": ((1, 3), signed), "b": ((2, 3), signed)})
    add("broadcast_like_axes", mx.sym.broadcast_like(a, b, lhs_axes=(0,), rhs_axes=(2,)),
        {"a": ((1, 3), signed), "b": ((2, 3, 5), signed)})
    add("reshape_like", mx.sym.reshape_like(a, b), {"a": ((2, 6), signed), "b": ((3, 4), signed)})
    add("reshape_like_range", mx.sym.reshape_like(a, b, lhs_begin=1, rhs_begin=0, rhs_end=2),
        {"a": ((2, 6), signed), "b": ((3, 2, 7), signed)})
    add("slice_like", mx.sym.slice_like(a, b), {"a": ((3, 4, 5), signed), "b": ((2, 3, 4), signed)})
    add("slice_like_axes", mx.sym.slice_like(a, b, axes=(0, -2)), {"a": ((3, 4, 5), signed), "b": ((2, 3), signed)})
    for op in ["min", "prod", "nansum"]:
        gen = {"min": distinct, "prod": away, "nansum": with_nan}[op]
        add(op, getattr(mx.sym, op)(d), {"data": ((3, 4), gen)})
        add(op + "_axis", getattr(mx.sym, op)(d, axis=1), {"data": ((2, 3, 4), gen)})
        add(op + "_axes_keep", getattr(mx.sym, op)(d, axis=(0, 2), keepdims=True), {"data": ((2, 3, 4), gen)})
    add("norm", mx.sym.norm(d), {"data": ((3, 4), signed)})
    add("norm_l1_axis", mx.sym.norm(d, ord=1, axis=1), {"data": ((2, 3, 4), away)})
    add("norm_l2_axes_keep", mx.sym.norm(d, ord=2, axis=(0, 2), keepdims=True), {"data": ((2, 3, 4), signed)})
    add("zeros", mx.sym.zeros((2, 3)), {}, forward_only=True)
    add("ones_int32", mx.sym.ones((4,), dtype="int32"), {}, forward_only=True)
    add("full", mx.sym.full((3, 1, 2), 2.5), {}, forward_only=True)
    add("arange", mx.sym.arange(1, 7, 2, repeat=2), {}, forward_only=True)
    add("arange_neg", mx.sym.arange(5, 2, -0.5), {}, forward_only=True)
    add("arange_stop_none", mx.sym.arange(4), {}, forward_only=True)
    add("LayerNorm", mx.sym.LayerNorm(d, name="ln"),
        {"data": ((3, 5), signed), "ln_gamma": ((5,), positive), "ln_beta": ((5,), signed)})
    add("LayerNorm_axis1_mean_var", mx.sym.LayerNorm(d, axis=1, eps=0.01, output_mean_var=True, name="ln"),
        {"data": ((2, 3, 4), signed), "ln_gamma": ((3,), positive), "ln_beta": ((3,), signed)}, outputs=3,
        forward_only=True)
    add("LayerNorm_axis1", mx.sym.LayerNorm(d, axis=1, name="ln"),
        {"data": ((2, 3, 4), signed), "ln_gamma": ((3,), positive), "ln_beta": ((3,), signed)})
    add("InstanceNorm", mx.sym.InstanceNorm(d, name="in"),
        {"data": ((2, 3, 2, 3), signed), "in_gamma": ((3,), positive), "in_beta": ((3,), signed)})
    add("InstanceNorm_3d", mx.sym.InstanceNorm(d, eps=1e-5, name="in"),
        {"data": ((1, 2, 5), signed), "in_gamma": ((2,), positive), "in_beta": ((2,), signed)})
    for mode in ["instance", "channel", "spatial"]:
        add("L2Normalization_" + mode, mx.sym.L2Normalization(d, mode=mode), {"data": ((2, 3, 4), signed)})
    add("UpSampling", mx.sym.UpSampling(d, scale=2, sample_type="nearest"), {"data": ((2, 3, 2, 3), signed)})
    add("UpSampling_concat", mx.sym.UpSampling(a, b, scale=2, sample_type="nearest", num_args=2),
        {"a": ((1, 2, 2, 2), signed), "b": ((1, 1, 4, 4), signed)})
    add("UpSampling_sum", mx.sym.UpSampling(a, b, scale=3, sample_type="nearest", num_args=2, multi_input_mode="sum"),
        {"a": ((1, 2, 1, 2), signed), "b": ((1, 2, 3, 6), signed)})
    for ret in ["value", "both", "indices", "mask"]:
        add("topk_" + ret, mx.sym.topk(d, k=2, ret_typ=ret), {"data": ((3, 5), distinct)})
    add("topk_axis0_ascend", mx.sym.topk(d, axis=0, k=2, ret_typ="value", is_ascend=True), {"data": ((4, 3), distinct)})
    add("topk_flat_int32", mx.sym.topk(d, axis=None, k=3, ret_typ="both", dtype="int32"), {"data": ((2, 3), distinct)})
    # MXNet 1.9's sort cannot differentiate without an explicit axis (its _backward_topk node gets
    # axis=''): the default is probed forward only, the gradient with axis=-1 written out.
    add("sort", mx.sym.sort(d), {"data": ((3, 4), distinct)}, no_grad=["data"], forward_only=True)
    add("sort_axis_last", mx.sym.sort(d, axis=-1), {"data": ((3, 4), distinct)})
    add("sort_axis0_descend", mx.sym.sort(d, axis=0, is_ascend=False), {"data": ((4, 2, 3), distinct)})
    add("argsort", mx.sym.argsort(d), {"data": ((3, 4), distinct)}, forward_only=True)
    add("argsort_flat_int64", mx.sym.argsort(d, axis=None, is_ascend=False, dtype="int64"), {"data": ((2, 3), distinct)},
        forward_only=True)
    add("Pad_constant", mx.sym.Pad(d, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 0, 3), constant_value=0.5),
        {"data": ((1, 2, 3, 4), signed)})
    add("Pad_edge", mx.sym.pad(d, mode="edge", pad_width=(0, 0, 0, 0, 2, 1, 1, 1)), {"data": ((2, 1, 3, 2), signed)})
    add("Pad_reflect", mx.sym.Pad(d, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 1)),
        {"data": ((1, 2, 3, 4), signed)})
    add("Pad_reflect_5d", mx.sym.Pad(d, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 1, 0, 2)),
        {"data": ((1, 2, 2, 3, 3), signed)})
    later_probes(add, d)


def bilinear_weight(shape):
    """The weight MXNet programs give bilinear UpSampling: mx.init.Bilinear's kernel per channel."""
    w = mx.nd.zeros(shape)
    mx.init.Bilinear()(mx.init.InitDesc("up_weight"), w)
    return w.asnumpy()


def later_probes(add, d):
    """Probes added by the third pass of issue 13 (appended last, so earlier values stay)."""
    a = var("a")
    add("take_raise", mx.sym.take(a, var("indices"), mode="raise"),
        {"a": ((5, 3), signed), "indices": ((2, 3), integers(0, 5))}, no_grad=["indices"])
    add("take_clip_axis1", mx.sym.take(a, var("indices"), axis=-1, mode="clip"),
        {"a": ((2, 4, 3), signed), "indices": ((2, 2), integers(-3, 6))}, no_grad=["indices"])
    # MXNet refuses an out-of-range index with mode=raise ("take operator contains indices out of
    # bound"); compat_test checks weft refuses it too, naming the op and the index.
    add("take_raise_out_of_range", mx.sym.take(a, var("indices"), mode="raise"),
        {"a": ((5, 3), signed), "indices": ((3,), lambda s: np.array([0, 7, 2], np.float32))}, no_grad=["indices"],
        expect_error="index 7 is out of range")
    add("UpSampling_bilinear", mx.sym.UpSampling(d, scale=2, sample_type="bilinear", num_filter=3, name="up"),
        {"data": ((2, 3, 3, 4), signed), "up_weight": ((3, 1, 4, 4), bilinear_weight)})
    add("UpSampling_bilinear_s3", mx.sym.UpSampling(d, scale=3, sample_type="bilinear", num_filter=2, name="up"),
        {"data": ((1, 2, 2, 3), signed), "up_weight": ((2, 1, 5, 5), signed)})


def write_probes(cases=None, stem="probes"):
    """Runs each (name, symbol, inputs, options) case of `cases` (default: probes()) in MXNet and
    writes <stem>.json and <stem>.params. Options: is_train (True), no_grad (inputs without a
    gradient), forward_only, outputs (how many to compare), loss (the op makes its own head
    gradient; default: a SoftmaxOutput in the symbol), expect_error (MXNet refuses the case)."""
    manifest, arrays = [], {}
    for name, sym, inputs, opt in (probes() if cases is None else cases):
        is_train = opt.get("is_train", True)
        no_grad = set(opt.get("no_grad", []))
        shapes = {k: v[0] for k, v in inputs.items()}
        args = {k: mx.nd.array(v[1](v[0])) for k, v in inputs.items()}
        arg_names = sym.list_arguments()
        missing = [a for a in arg_names if a not in args]
        assert not missing, (name, missing)
        grads = {a: mx.nd.zeros(args[a].shape) for a in arg_names if a not in no_grad}
        reqs = {a: ("null" if a in no_grad else "write") for a in arg_names}
        try:
            ex = sym.bind(mx.cpu(), args=args, args_grad=grads, grad_req=reqs)
        except mx.base.MXNetError as e:
            raise RuntimeError("probe %s: MXNet refused to bind it: %s" % (name, e))
        if "expect_error" in opt:
            try:
                ex.forward(is_train=is_train)[0].wait_to_read()
            except mx.base.MXNetError:
                pass
            else:
                raise AssertionError("%s: MXNet did not refuse the case" % name)
            for a in arg_names:
                arrays["%s:arg:%s" % (name, a)] = args[a]
            manifest.append({"name": name, "symbol": sym.tojson(), "is_train": is_train,
                             "shapes": {k: list(v) for k, v in shapes.items()}, "no_grad": sorted(no_grad),
                             "loss": False, "forward_only": True, "outputs": 0, "expect_error": opt["expect_error"]})
            continue
        outs = ex.forward(is_train=is_train)
        heads = [mx.nd.array(signed(o.shape)) for o in outs]
        is_loss = opt.get("loss", sym.attr("op") == "SoftmaxOutput" or "SoftmaxOutput" in sym.tojson())
        if arg_names:  # ops without inputs (_zeros, _arange) have nothing to differentiate
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
    mx.nd.save(os.path.join(OUT, stem + ".params"), arrays)
    with open(os.path.join(OUT, stem + ".json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("%s: %d cases, %d arrays" % (stem, len(manifest), len(arrays)))


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


# ---- classic symbol-API networks ---------------------------------------------------------------
# MXNet's example/image-classification/symbols (not in the PyPI wheel), rewritten here from their
# published architecture with mx.sym and reduced widths: the layer sequence, attributes and names
# those scripts give, so their symbol JSON is what a user of them has.

sym = mx.sym


def classic_mlp(classes):
    x = sym.Flatten(sym.var("data"))
    x = sym.Activation(sym.FullyConnected(x, name="fc1", num_hidden=16), name="relu1", act_type="relu")
    x = sym.Activation(sym.FullyConnected(x, name="fc2", num_hidden=8), name="relu2", act_type="relu")
    return sym.SoftmaxOutput(sym.FullyConnected(x, name="fc3", num_hidden=classes), name="softmax")


def classic_lenet(classes):
    x = sym.var("data")
    for i, nf in enumerate([5, 10]):
        x = sym.Convolution(x, kernel=(5, 5), num_filter=nf, name="conv%d" % (i + 1))
        x = sym.Activation(x, act_type="tanh", name="tanh%d" % (i + 1))
        x = sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool%d" % (i + 1))
    x = sym.Activation(sym.FullyConnected(sym.flatten(x), num_hidden=16, name="fc1"), act_type="tanh", name="tanh3")
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=classes, name="fc2"), name="softmax")


def resnet_unit(x, nf, stride, dim_match, name, bottle_neck, bn_mom=0.9, eps=2e-5):
    """example/image-classification/symbols/resnet.py's residual_unit (pre-activation)."""
    def bn_relu(y, suffix):
        y = sym.BatchNorm(y, fix_gamma=False, eps=eps, momentum=bn_mom, name=name + "_bn" + suffix)
        return sym.Activation(y, act_type="relu", name=name + "_relu" + suffix)

    act1 = bn_relu(x, "1")
    if bottle_neck:
        y = sym.Convolution(act1, num_filter=nf // 4, kernel=(1, 1), stride=(1, 1), pad=(0, 0), no_bias=True,
                            workspace=256, name=name + "_conv1")
        y = sym.Convolution(bn_relu(y, "2"), num_filter=nf // 4, kernel=(3, 3), stride=stride, pad=(1, 1),
                            no_bias=True, workspace=256, name=name + "_conv2")
        y = sym.Convolution(bn_relu(y, "3"), num_filter=nf, kernel=(1, 1), stride=(1, 1), pad=(0, 0), no_bias=True,
                            workspace=256, name=name + "_conv3")
    else:
        y = sym.Convolution(act1, num_filter=nf, kernel=(3, 3), stride=stride, pad=(1, 1), no_bias=True,
                            workspace=256, name=name + "_conv1")
        y = sym.Convolution(bn_relu(y, "2"), num_filter=nf, kernel=(3, 3), stride=(1, 1), pad=(1, 1), no_bias=True,
                            workspace=256, name=name + "_conv2")
    short = x if dim_match else sym.Convolution(act1, num_filter=nf, kernel=(1, 1), stride=stride, no_bias=True,
                                                workspace=256, name=name + "_sc")
    return y + short


def classic_resnet(classes, units, filters, bottle_neck, cifar):
    eps, mom = 2e-5, 0.9
    x = sym.identity(sym.var("data"), name="id")
    x = sym.BatchNorm(x, fix_gamma=True, eps=eps, momentum=mom, name="bn_data")
    if cifar:
        x = sym.Convolution(x, num_filter=filters[0], kernel=(3, 3), stride=(1, 1), pad=(1, 1), no_bias=True,
                            name="conv0", workspace=256)
    else:
        x = sym.Convolution(x, num_filter=filters[0], kernel=(7, 7), stride=(2, 2), pad=(3, 3), no_bias=True,
                            name="conv0", workspace=256)
        x = sym.BatchNorm(x, fix_gamma=False, eps=eps, momentum=mom, name="bn0")
        x = sym.Activation(x, act_type="relu", name="relu0")
        x = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    for i, n in enumerate(units):
        stride = (1, 1) if i == 0 else (2, 2)
        x = resnet_unit(x, filters[i + 1], stride, False, "stage%d_unit1" % (i + 1), bottle_neck)
        for j in range(n - 1):
            x = resnet_unit(x, filters[i + 1], (1, 1), True, "stage%d_unit%d" % (i + 1, j + 2), bottle_neck)
    x = sym.Activation(sym.BatchNorm(x, fix_gamma=False, eps=eps, momentum=mom, name="bn1"), act_type="relu",
                       name="relu1")
    x = sym.Pooling(x, global_pool=True, kernel=(7, 7), pool_type="avg", name="pool1")
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=classes, name="fc1")
    return sym.SoftmaxOutput(x, name="softmax")


def conv_factory(x, nf, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=""):
    """inception-bn.py's ConvFactory: convolution, BatchNorm, relu."""
    x = sym.Convolution(x, num_filter=nf, kernel=kernel, stride=stride, pad=pad, name="conv_%s%s" % (name, suffix))
    x = sym.BatchNorm(x, name="bn_%s%s" % (name, suffix))
    return sym.Activation(x, act_type="relu", name="relu_%s%s" % (name, suffix))


def inception_a(x, n1, n3r, n3, nd3r, nd3, pool, proj, name):
    c1 = conv_factory(x, n1, (1, 1), name="%s_1x1" % name)
    c3 = conv_factory(conv_factory(x, n3r, (1, 1), name="%s_3x3" % name, suffix="_reduce"), n3, (3, 3), pad=(1, 1),
                      name="%s_3x3" % name)
    cd = conv_factory(x, nd3r, (1, 1), name="%s_double_3x3" % name, suffix="_reduce")
    cd = conv_factory(cd, nd3, (3, 3), pad=(1, 1), name="%s_double_3x3_0" % name)
    cd = conv_factory(cd, nd3, (3, 3), pad=(1, 1), name="%s_double_3x3_1" % name)
    p = sym.Pooling(x, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type=pool, name="%s_pool_%s_pool" % (pool, name))
    cp = conv_factory(p, proj, (1, 1), name="%s_proj" % name)
    return sym.Concat(c1, c3, cd, cp, name="ch_concat_%s_chconcat" % name)


def inception_b(x, n3r, n3, nd3r, nd3, name):
    c3 = conv_factory(conv_factory(x, n3r, (1, 1), name="%s_3x3" % name, suffix="_reduce"), n3, (3, 3), pad=(1, 1),
                      stride=(2, 2), name="%s_3x3" % name)
    cd = conv_factory(x, nd3r, (1, 1), name="%s_double_3x3" % name, suffix="_reduce")
    cd = conv_factory(cd, nd3, (3, 3), pad=(1, 1), stride=(1, 1), name="%s_double_3x3_0" % name)
    cd = conv_factory(cd, nd3, (3, 3), pad=(1, 1), stride=(2, 2), name="%s_double_3x3_1" % name)
    p = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max", name="max_pool_%s_pool" % name)
    return sym.Concat(c3, cd, p, name="ch_concat_%s_chconcat" % name)


def classic_inception_bn(classes, div=32):
    """inception-bn.py's body (every module, its widths divided by `div`)."""
    def w(n):
        return max(2, n // div)

    x = conv_factory(sym.var("data"), w(64), (7, 7), stride=(2, 2), pad=(3, 3), name="1")
    x = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), name="pool_1", pool_type="max")
    x = conv_factory(x, w(64), (1, 1), name="2_red")
    x = conv_factory(x, w(192), (3, 3), pad=(1, 1), name="2")
    x = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), name="pool_2", pool_type="max")
    a_mods = {"3a": (64, 64, 64, 64, 96, "avg", 32), "3b": (64, 64, 96, 64, 96, "avg", 64),
              "4a": (224, 64, 96, 96, 128, "avg", 128), "4b": (192, 96, 128, 96, 128, "avg", 128),
              "4c": (160, 128, 160, 128, 160, "avg", 128), "4d": (96, 128, 192, 160, 192, "avg", 128),
              "5a": (352, 192, 320, 160, 224, "avg", 128), "5b": (352, 192, 320, 192, 224, "max", 128)}
    b_mods = {"3c": (128, 160, 64, 96), "4e": (128, 192, 192, 256)}
    for m in ["3a", "3b", "3c", "4a", "4b", "4c", "4d", "4e", "5a", "5b"]:
        if m in b_mods:
            x = inception_b(x, *[w(n) for n in b_mods[m]], name=m)
        else:
            n1, n3r, n3, nd3r, nd3, pool, proj = a_mods[m]
            x = inception_a(x, w(n1), w(n3r), w(n3), w(nd3r), w(nd3), pool, w(proj), m)
    x = sym.Pooling(x, kernel=(7, 7), stride=(1, 1), name="global_pool", pool_type="avg")
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=classes, name="fc1")
    return sym.SoftmaxOutput(x, name="softmax")


def classic_mobilenet(classes):
    """mobilenet.py (v1) with alpha 1/16: depthwise (num_group = channels) and pointwise
    convolutions, each followed by BatchNorm (fix_gamma=False) and relu."""
    def conv(x, nf, kernel=(1, 1), stride=(1, 1), pad=(0, 0), group=1, name=""):
        x = sym.Convolution(x, num_filter=nf, kernel=kernel, stride=stride, pad=pad, num_group=group, no_bias=True,
                            name="%s_conv2d" % name)
        x = sym.BatchNorm(x, name="%s_batchnorm" % name, fix_gamma=False)
        return sym.Activation(x, name="%s_relu" % name, act_type="relu")

    x = conv(sym.var("data"), 2, (3, 3), (2, 2), (1, 1), name="conv_1")
    chans = [(2, 4, 1), (4, 8, 2), (8, 8, 1), (8, 16, 2), (16, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2),
             (64, 64, 1)]
    for i, (cin, cout, s) in enumerate(chans):
        x = conv(x, cin, (3, 3), (s, s), (1, 1), group=cin, name="conv_%d_dw" % (i + 2))
        x = conv(x, cout, name="conv_%d_sep" % (i + 2))
    x = sym.Pooling(x, kernel=(7, 7), stride=(1, 1), pool_type="avg", global_pool=True, name="pool")
    x = sym.FullyConnected(sym.flatten(x), num_hidden=classes, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


# name -> (symbol, data shape)
CLASSIC = {
    "mlp": (lambda: classic_mlp(CLASSES), (2, 1, 12, 12)),
    "lenet": (lambda: classic_lenet(CLASSES), (2, 1, 20, 20)),
    "resnet20_cifar": (lambda: classic_resnet(CLASSES, [3, 3, 3], [2, 2, 4, 8], False, True), (2, 3, 16, 16)),
    "resnet18_imagenet": (lambda: classic_resnet(CLASSES, [2, 2, 2, 2], [2, 2, 4, 8, 16], False, False),
                          (1, 3, 64, 64)),
    "resnet50_imagenet": (lambda: classic_resnet(CLASSES, [1, 1, 1, 1], [4, 8, 16, 32, 32], True, False),
                          (1, 3, 64, 64)),
    "inception_bn": (lambda: classic_inception_bn(CLASSES), (1, 3, 224, 224)),
    "mobilenet": (lambda: classic_mobilenet(CLASSES), (1, 3, 64, 64)),
}


def write_classic():
    """symbols.json + sym_<net>-symbol.json / -0000.params (mx.model.save_checkpoint) / -io.params,
    with random weights from their own stream (the zoo's values stay as they were)."""
    rng = np.random.RandomState(20261128)
    index = {}
    for name, (make, shape) in sorted(CLASSIC.items()):
        net = make()
        arg_shapes, _, aux_shapes = net.infer_shape(data=shape)
        args, aux = {}, {}
        for n, s in zip(net.list_arguments(), arg_shapes):
            if n in ("data", "softmax_label"):
                continue
            if n.endswith("gamma"):
                v = rng.uniform(0.5, 1.5, s)
            elif n.endswith("beta") or n.endswith("bias"):
                v = rng.uniform(-0.2, 0.2, s)
            else:
                v = rng.normal(0, np.sqrt(2.0 / max(int(np.prod(s[1:])), 1)), s)
            args[n] = mx.nd.array(v.astype(np.float32))
        for n, s in zip(net.list_auxiliary_states(), aux_shapes):
            v = rng.uniform(0.5, 1.5, s) if n.endswith("var") else rng.uniform(-0.2, 0.2, s)
            aux[n] = mx.nd.array(v.astype(np.float32))
        prefix = os.path.join(OUT, "sym_" + name)
        mx.model.save_checkpoint(prefix, 0, net, args, aux)
        # Same content without MXNet's indentation (two thirds of the bytes): the fixtures stay small.
        with open(prefix + "-symbol.json") as f:
            compact = json.dumps(json.load(f), separators=(",", ":"))
        with open(prefix + "-symbol.json", "w") as f:
            f.write(compact)
        feed = dict(args, data=mx.nd.array(deterministic_input(shape)), softmax_label=mx.nd.zeros(shape[:1]))
        ex = net.bind(mx.cpu(), args=feed, aux_states=aux, grad_req="null")
        out = ex.forward(is_train=False)[0]
        mx.nd.save(prefix + "-io.params", {"out:0": out})
        nparams = sum(int(np.prod(v.shape)) for v in list(args.values()) + list(aux.values()))
        ops = sorted({n["op"] for n in json.loads(net.tojson())["nodes"] if n["op"] != "null"})
        index[name] = {"input": list(shape), "params": nparams, "ops": ops,
                       "out_absmax": float(np.abs(out.asnumpy()).max())}
        print("symbols %-18s %8d params, out %s, ops %s" % (name, nparams, out.shape, ", ".join(ops)))
    with open(os.path.join(OUT, "symbols.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    if sys.argv[1:] == ["--classic-only"]:
        write_classic()
    else:
        write_probes()
        if sys.argv[1:] != ["--probes-only"]:
            write_classic()
            write_zoo(sys.argv[1:] or sorted(ZOO))
