#!/usr/bin/env python3
"""Writes the fixtures of MXNet's classic operators that weft added for MXNet's Python frontend
(issue 28): tests/compat/data/probes_<family>.* and calls_<family>.*, from the real MXNet 1.9.1.

Run by hand (the tests read only the files it writes; they never need MXNet):

    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/compat/gen_op_fixtures.py [FAMILY...]

Two kinds of fixture, both small:

  probes_<family>.json / .params  symbol probes in gen_fixtures.py's format (compat_test.cc runs
                                  them through weft's executor): MXNet's symbol JSON, inputs,
                                  outputs and, for a random head gradient, input gradients.
  calls_<family>.json / .params   imperative calls (op_calls_test.cc runs them through
                                  weft::Invoke): op name, attributes, inputs, MXNet's outputs and
                                  the inputs MXNet changed in place (optimizer states, out= arrays).
                                  Array keys "<call>:in:<i>", ":out:<i>", ":after:<i>".
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures as gf  # noqa: E402  (sets MXNet's environment before importing it)
from gen_fixtures import mx, var, signed, positive, away, integers, distinct  # noqa: E402

RNG = np.random.RandomState(20261201)


def uniform(lo, hi):
    return lambda shape: RNG.uniform(lo, hi, shape).astype(np.float32)


def typed(gen, dtype):
    return lambda shape: gen(shape).astype(dtype)


# ---- math: comparisons, logic, binary math, unary math --------------------------------------------

COMPARE = ["equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
           "logical_and", "logical_or", "logical_xor"]


def math_probes():
    p = []
    d, lhs, rhs = var("data"), var("lhs"), var("rhs")

    def add(name, sym, inputs, **opt):
        p.append((name, sym, inputs, opt))

    ties = integers(-2, 3)  # small integers as float: equal elements occur
    for op in COMPARE:
        add("_" + op, getattr(mx.sym._internal, "_" + op)(lhs, rhs), {"lhs": ((3, 4), ties), "rhs": ((3, 4), ties)})
        add("broadcast_" + op, getattr(mx.sym, "broadcast_" + op)(lhs, rhs),
            {"lhs": ((2, 3, 4), ties), "rhs": ((1, 3, 1), ties)})
        add("_%s_scalar" % op, getattr(mx.sym._internal, "_%s_scalar" % op)(d, scalar=1.0), {"data": ((3, 4), ties)})
        add("_%s_int32" % op, getattr(mx.sym._internal, "_" + op)(lhs, rhs),
            {"lhs": ((5,), typed(ties, np.int32)), "rhs": ((5,), typed(ties, np.int32))},
            no_grad=["lhs", "rhs"], forward_only=True)
    add("logical_not", mx.sym.logical_not(d), {"data": ((3, 4), ties)})

    mod_in = {"lhs": ((3, 4), uniform(-5, 5)), "rhs": ((3, 4), lambda s: away(s) * 3)}
    add("_mod", mx.sym._internal._mod(lhs, rhs), mod_in)
    add("broadcast_mod", mx.sym.broadcast_mod(lhs, rhs),
        {"lhs": ((2, 3, 4), uniform(-5, 5)), "rhs": ((3, 1), lambda s: away(s) * 3)})
    add("_mod_scalar", mx.sym._internal._mod_scalar(d, scalar=-1.5), {"data": ((3, 4), uniform(-5, 5))})
    add("_rmod_scalar", mx.sym._internal._rmod_scalar(d, scalar=2.5), {"data": ((3, 4), lambda s: away(s) * 3)})
    add("_mod_int32", mx.sym._internal._mod(lhs, rhs),
        {"lhs": ((6,), lambda s: np.array([7, -7, 7, -7, 5, 0], np.int32)),
         "rhs": ((6,), lambda s: np.array([3, 3, -3, -3, 0, 4], np.int32))}, no_grad=["lhs", "rhs"], forward_only=True)
    add("_power", mx.sym._internal._power(lhs, rhs), {"lhs": ((3, 4), positive), "rhs": ((3, 4), signed)})
    add("broadcast_power", mx.sym.broadcast_power(lhs, rhs), {"lhs": ((2, 3), positive), "rhs": ((1, 3), signed)})
    add("_rpower_scalar", mx.sym._internal._rpower_scalar(d, scalar=1.7), {"data": ((3, 4), signed)})
    for op in ["maximum", "minimum"]:
        add("_" + op, getattr(mx.sym._internal, "_" + op)(lhs, rhs), {"lhs": ((3, 4), ties), "rhs": ((3, 4), ties)})
        add("_%s_scalar" % op, getattr(mx.sym._internal, "_%s_scalar" % op)(d, scalar=1.0), {"data": ((3, 4), ties)})
        add("broadcast_%s_int64" % op, getattr(mx.sym, "broadcast_" + op)(lhs, rhs),
            {"lhs": ((2, 3), typed(ties, np.int64)), "rhs": ((3,), typed(ties, np.int64))},
            no_grad=["lhs", "rhs"], forward_only=True)
    add("_hypot", mx.sym._internal._hypot(lhs, rhs), {"lhs": ((3, 4), signed), "rhs": ((3, 4), away)})
    add("broadcast_hypot", mx.sym.broadcast_hypot(lhs, rhs), {"lhs": ((2, 3), away), "rhs": ((2, 1), signed)})
    add("_hypot_scalar", mx.sym._internal._hypot_scalar(d, scalar=0.5), {"data": ((3, 4), signed)})
    add("_grad_add", mx.sym._internal._grad_add(lhs, rhs), {"lhs": ((3, 4), signed), "rhs": ((3, 4), signed)},
        no_grad=["lhs", "rhs"], forward_only=True)

    domains = {
        "tan": uniform(-1.2, 1.2), "arcsin": uniform(-0.9, 0.9), "arccos": uniform(-0.9, 0.9), "arctan": signed,
        "sinh": signed, "cosh": signed, "arcsinh": signed, "arccosh": uniform(1.1, 3), "arctanh": uniform(-0.9, 0.9),
        "log2": positive, "log10": positive, "cbrt": away, "rcbrt": positive, "reciprocal": away,
        "degrees": signed, "radians": signed, "erf": signed, "erfinv": uniform(-0.95, 0.95),
        "gamma": uniform(0.3, 4), "gammaln": uniform(0.3, 4),
        "ceil": uniform(-3, 3), "trunc": uniform(-3, 3), "fix": uniform(-3, 3),
        "rint": lambda s: (RNG.randint(-6, 7, s) / 2.0).astype(np.float32),
    }
    for op, gen in domains.items():
        add(op, getattr(mx.sym, op)(d), {"data": ((2, 3, 4), gen)})
    add("gamma_negative", mx.sym.gamma(d), {"data": ((6,), lambda s: np.array(
        [-0.5, -1.5, -2.3, 0.1, 5.5, 7.0], np.float32))})
    add("float64_arctan2", mx.sym.arctan(d), {"data": ((4,), typed(signed, np.float64))},
        no_grad=["data"], forward_only=True)
    return p


# ---- indexing, assignment, layout, reductions ----------------------------------------------------

def with_nan(shape):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    x.flat[::4] = np.nan
    return x


def index_probes():
    p = []
    d, lhs, rhs, idx = var("data"), var("lhs"), var("rhs"), var("indices")

    def add(name, sym, inputs, **opt):
        p.append((name, sym, inputs, opt))

    add("_slice_assign", mx.sym._internal._slice_assign(lhs, rhs, begin=(1, None), end=(3, None), step=(1, 2)),
        {"lhs": ((4, 5), signed), "rhs": ((2, 3), signed)}, no_grad=["lhs", "rhs"], forward_only=True)
    add("_slice_assign_neg", mx.sym._internal._slice_assign(lhs, rhs, begin=(None, -1), end=(None, 0), step=(2, -2)),
        {"lhs": ((3, 5), signed), "rhs": ((2, 2), signed)}, no_grad=["lhs", "rhs"], forward_only=True)
    add("_slice_assign_scalar", mx.sym._internal._slice_assign_scalar(d, scalar=7, begin=(0, 1), end=(2, 3)),
        {"data": ((3, 4), signed)}, no_grad=["data"], forward_only=True)
    # MXNet's gather_nd wraps negative positions forward, but its backward (GatherNDBackwardImpl)
    # adds out_grad at the unwrapped offset, before the start of the gradient buffer (heap
    # corruption, the element's gradient lost): negative positions are probed forward only.
    nd_idx = lambda s: np.array([[0, 2, 2], [1, 0, 2]], np.float32)  # noqa: E731
    add("gather_nd", mx.sym.gather_nd(d, idx), {"data": ((3, 3, 2), signed), "indices": ((2, 3), nd_idx)},
        no_grad=["indices"])
    neg_idx = lambda s: np.array([[0, 2, -1], [1, 0, -3]], np.float32)  # noqa: E731
    add("gather_nd_negative", mx.sym.gather_nd(d, idx), {"data": ((3, 3, 2), signed), "indices": ((2, 3), neg_idx)},
        no_grad=["data", "indices"], forward_only=True)
    add("gather_nd_full", mx.sym.gather_nd(d, idx),
        {"data": ((3, 4), signed), "indices": ((2, 2), lambda s: np.array([[0, 2], [3, 1]], np.int32))},
        no_grad=["indices"])
    add("scatter_nd", mx.sym.scatter_nd(d, idx, shape=(3, 4, 2)),
        {"data": ((3, 2), signed), "indices": ((2, 3), lambda s: np.array([[0, 2, 1], [3, 0, 1]], np.float32))},
        no_grad=["indices"])
    # _scatter_set_nd runs only in place (MXNet checks it): calls_index has it.
    add("_histogram_bins", mx.sym._internal._histogram(d, var("bins")),
        {"data": ((20,), uniform(-1, 3)), "bins": ((4,), lambda s: np.array([0, 0.5, 1, 2.5], np.float32))},
        no_grad=["data", "bins"], forward_only=True)
    add("_histogram_cnt", mx.sym._internal._histogram(d, bin_cnt=5, range=(-1, 1)),
        {"data": ((30,), lambda s: np.concatenate([uniform(-1.5, 1.5)((29,)), [1.0]]).astype(np.float32))},
        no_grad=["data"], forward_only=True)
    add("squeeze", mx.sym.squeeze(d), {"data": ((2, 1, 3, 1), signed)})
    add("squeeze_axis", mx.sym.squeeze(d, axis=(1,)), {"data": ((2, 1, 3, 1), signed)})
    add("squeeze_all", mx.sym.squeeze(d), {"data": ((1, 1), signed)})
    add("reverse", mx.sym.reverse(d, axis=(0, 2)), {"data": ((2, 3, 4), signed)})
    add("flip", mx.sym.flip(d, axis=1), {"data": ((3, 4), signed)})
    add("diag_1d", mx.sym.diag(d, k=1), {"data": ((3,), signed)})
    add("diag_2d", mx.sym.diag(d, k=-1), {"data": ((3, 4), signed)})
    add("diag_3d", mx.sym.diag(d, k=1, axis1=1, axis2=2), {"data": ((2, 3, 4), signed)})
    add("shape_array", mx.sym.shape_array(d), {"data": ((2, 3, 4), signed)}, no_grad=["data"], forward_only=True)
    add("size_array", mx.sym.size_array(d), {"data": ((2, 3, 4), signed)}, no_grad=["data"], forward_only=True)
    add("broadcast_axis", mx.sym.broadcast_axis(d, axis=(0, 2), size=(3, 4)), {"data": ((1, 2, 1), signed)})
    add("broadcast_axes", mx.sym.broadcast_axes(d, axis=1, size=3), {"data": ((2, 1), signed)})
    add("_split_v2_sections", mx.sym._internal._split_v2(d, indices=(), axis=1, sections=3),
        {"data": ((2, 6), signed)})
    add("_split_v2_indices", mx.sym._internal._split_v2(d, indices=(0, 1, 3), axis=0), {"data": ((5, 2), signed)})
    add("_split_v2_squeeze", mx.sym._internal._split_v2(d, indices=(), axis=0, sections=2, squeeze_axis=True),
        {"data": ((2, 3), signed)})
    add("depth_to_space", mx.sym.depth_to_space(d, block_size=2), {"data": ((1, 8, 2, 3), signed)})
    add("space_to_depth", mx.sym.space_to_depth(d, block_size=2), {"data": ((2, 2, 4, 2), signed)})
    add("amp_cast", mx.sym.amp_cast(d, dtype="float64"), {"data": ((3, 4), signed)}, forward_only=True)
    add("argmin", mx.sym.argmin(d, axis=1), {"data": ((3, 4), distinct)}, no_grad=["data"], forward_only=True)
    add("argmin_keepdims", mx.sym.argmin(d, axis=0, keepdims=True), {"data": ((3, 4), distinct)},
        no_grad=["data"], forward_only=True)
    add("argmax_channel", mx.sym.argmax_channel(d), {"data": ((3, 4), distinct)}, no_grad=["data"],
        forward_only=True)
    add("nanprod", mx.sym.nanprod(d, axis=1), {"data": ((3, 5), with_nan)})
    add("sum_exclude", mx.sym.sum(d, axis=1, exclude=True), {"data": ((2, 3, 4), signed)})
    add("mean_exclude_keepdims", mx.sym.mean(d, axis=(0, 2), exclude=True, keepdims=True),
        {"data": ((2, 3, 4), signed)})
    add("_linspace", mx.sym._internal._linspace(start=1, stop=2, num=5), {}, forward_only=True)
    add("_linspace_open", mx.sym._internal._linspace(start=-1, stop=2, num=4, endpoint=False, dtype="float64"), {},
        forward_only=True)
    add("_eye", mx.sym._internal._eye(N=3, M=4, k=1), {}, forward_only=True)
    add("_eye_square", mx.sym._internal._eye(N=3, k=-1, dtype="int32"), {}, forward_only=True)
    return p


def index_calls():
    a = signed((4, 5))
    return [
        ("_slice_assign_out", "_slice_assign", {"begin": (1, 0), "end": (3, 5), "step": (1, 2)},
         [a, signed((2, 3))], {"out": 0, "mutated": [0]}),
        ("_slice_assign_scalar_out", "_slice_assign_scalar", {"scalar": 5.0, "begin": (None,), "end": (2,)},
         [signed((3, 2))], {"out": 0, "mutated": [0]}),
        ("_scatter_set_nd_out", "_scatter_set_nd", {"shape": (4, 5)},
         [signed((4, 5)), signed((3,)), np.array([[0, 1, 3], [4, 0, 2]], np.float32)], {"out": 0, "mutated": [0]}),
        ("_onehot_encode", "_onehot_encode", {}, [np.array([1, 0, 3], np.float32), np.zeros((3, 4), np.float32)],
         {"out": 1, "mutated": [1]}),
        ("_set_value", "_set_value", {"src": 2.5}, [np.zeros((2, 3), np.float32)], {"out": 0, "mutated": [0],
                                                                                     "positional_out": True}),
    ]


# ---- legacy ops and the multinomial sampler (batch_take, fill_element_0index, ...) --------------

def legacy_probes():
    p = []
    a, idx, lhs, rhs = var("a"), var("indices"), var("lhs"), var("rhs")

    def add(name, sym, inputs, **opt):
        p.append((name, sym, inputs, opt))

    add("choose_element_0index", mx.sym.choose_element_0index(a, idx),
        {"a": ((3, 4), signed), "indices": ((3,), lambda s: np.array([0, 3, 1], np.float32))}, no_grad=["indices"])
    add("_identity_with_attr_like_rhs", mx.sym._internal._identity_with_attr_like_rhs(lhs, rhs),
        {"lhs": ((3, 4), signed), "rhs": ((3, 4), signed)})
    # One-hot rows: every draw is certain, so MXNet's indices and log-probabilities are weft's too;
    # the gradient of the log-probabilities reaches the drawn categories (1 / p = 1 each).
    onehot = lambda s: np.array([[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]], np.float32)  # noqa: E731
    add("_sample_multinomial", mx.sym.Group(list(mx.sym._internal._sample_multinomial(
        var("data"), shape=(2,), get_prob=True))), {"data": ((3, 4), onehot)})
    return p


def legacy_calls():
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    values = np.array([7, 8, 9, 10], np.float32)
    return [
        # Positions out of [0, 3) (-1, 3) leave their row as it was; 1.7 truncates to 1.
        ("fill_element_0index", "fill_element_0index", {}, [rows, values, np.array([2, -1, 1.7, 3], np.float32)],
         {}),
        ("fill_element_0index_out", "fill_element_0index", {}, [rows.copy(), values, np.array([0, 1, 2, 0],
                                                                                              np.float32)],
         {"out": 0, "mutated": [0]}),
        # batch_take's indices are int32 (MXNet fixes their type); -1 and 9 are clipped into [0, 3).
        ("batch_take", "batch_take", {}, [rows, np.array([2, -1, 1, 9], np.int32)], {}),
        ("batch_take_float64", "batch_take", {}, [rows.astype(np.float64), np.array([2, 0, 1, 9], np.int32)], {}),
    ]


# ---- the fused RNN (gluon.rnn's layers) and _rnn_param_concat -----------------------------------

def rnn_probes():
    """MXNet's cpu RNN for each mode, stacked, bidirectional, with and without the state outputs.
    Data (T 4, N 3, I 5), H 4; the parameter length comes from MXNet's own shape inference.

    Needs MXNET_MKLDNN_ENABLED=1 (run this family on its own): MXNet 1.9.1's other cpu RNN path
    fails its own check when state_outputs is set ("out_data.size() == num_outputs (2 vs. 1)"), so
    the fixtures are those of the RNN the pip package runs by default (oneDNN's)."""
    if os.environ.get("MXNET_MKLDNN_ENABLED") != "1":
        raise SystemExit("rnn: run with MXNET_MKLDNN_ENABLED=1 (see rnn_probes)")
    p = []
    t, n, i, h = 4, 3, 5, 4
    small = uniform(-0.5, 0.5)  # weights of this size keep the gates away from saturation
    for mode, layers, bidir, states in [("lstm", 2, True, True), ("lstm", 1, False, False), ("gru", 2, False, True),
                                        ("gru", 1, True, True), ("rnn_tanh", 2, True, True),
                                        ("rnn_relu", 1, False, False)]:
        lstm = mode == "lstm"
        names = ["data", "parameters", "state"] + (["state_cell"] if lstm else [])
        sym = mx.sym.RNN(*[var(x) for x in names], state_size=h, num_layers=layers, mode=mode,
                         bidirectional=bidir, state_outputs=states, name="rnn")
        arg_shapes, _, _ = sym.infer_shape(data=(t, n, i))
        shapes = dict(zip(sym.list_arguments(), arg_shapes))
        name = "RNN_%s_l%d%s%s" % (mode, layers, "_bi" if bidir else "", "_states" if states else "")
        p.append((name, sym, {a: (tuple(shapes[a]), small if a == "parameters" else signed) for a in names}, {}))
    a, b = var("a"), var("b")
    p.append(("_rnn_param_concat", mx.sym._internal._rnn_param_concat(a, b, num_args=2, dim=0),
              {"a": ((6,), signed), "b": ((4,), signed)}, {}))
    return p


FAMILIES = {"math": (math_probes, None), "index": (index_probes, index_calls), "legacy": (legacy_probes, legacy_calls),
            "rnn": (rnn_probes, None)}


def write_calls(calls, stem):
    """Each call: (name, op, attrs, arrays, options). MXNet runs op(*arrays, **attrs), with
    out=arrays[options["out"]] when given (the op writes that array in place); "mutated" lists the
    arrays whose values after the call are recorded; "positional_out": the op takes no input, the
    array is only its output (_set_value)."""
    manifest, arrays = [], {}
    for name, op, attrs, inputs, opt in calls:
        fn = getattr(mx.nd, op, None) or getattr(mx.nd._internal, op)
        nd_in = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
        for i, a in enumerate(nd_in):
            arrays["%s:in:%d" % (name, i)] = a.copy()
        out_index = opt.get("out")
        kwargs = dict(attrs)
        if out_index is not None:
            kwargs["out"] = nd_in[out_index]
        # An output-only op (_set_value) gets its array as out= alone, not as an input.
        call_in = [] if opt.get("positional_out") else nd_in
        res = fn(*call_in, **kwargs)
        outs = res if isinstance(res, (list, tuple)) else [res]
        for i, o in enumerate(outs):
            arrays["%s:out:%d" % (name, i)] = o
        mutated = opt.get("mutated", [])
        for i in mutated:
            arrays["%s:after:%d" % (name, i)] = nd_in[i]
        manifest.append({"name": name, "op": op, "attrs": {k: str(v) for k, v in attrs.items()},
                         "inputs": len(call_in), "arrays": len(nd_in), "outputs": len(outs), "out": out_index,
                         "mutated": mutated})
    mx.nd.save(os.path.join(gf.OUT, stem + ".params"), arrays)
    with open(os.path.join(gf.OUT, stem + ".json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("%s: %d calls, %d arrays" % (stem, len(manifest), len(arrays)))


if __name__ == "__main__":
    os.makedirs(gf.OUT, exist_ok=True)
    for family in sys.argv[1:] or sorted(FAMILIES):
        probes, calls = FAMILIES[family]
        # Calls first: MXNet's executor corrupts its heap on some probes (munmap_chunk() at exit
        # after _slice_assign bound out of place), which can crash what runs after it.
        if calls is not None:
            write_calls(calls(), "calls_" + family)
        if probes is not None:
            gf.write_probes(probes(), "probes_" + family)
