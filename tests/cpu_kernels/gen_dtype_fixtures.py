#!/usr/bin/env python3
"""Writes tests/cpu_kernels/data/mxnet_dtype_ops.json: outputs of MXNet 1.9.1's cpu operators on
integer and float16 arrays (issue 28), read by tensor_dtype_test.cc.

Run with the MXNet venv (mxnet==1.9.1, numpy<1.24):
  MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/cpu_kernels/gen_dtype_fixtures.py

Each case: op, string attributes as MXNet's frontend passes them, inputs and outputs as
{dtype, shape, values}. Inputs avoid what MXNet's cpu leaves undefined or dies on (an integer
division by zero is SIGFPE there; out-of-range float-to-integer conversions are the CPU's).
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mxnet_dtype_ops.json")

X = [-7, -3, -1, 1, 3, 7, 100, 5]           # signed, no zero (rdiv, power)
XU = [7, 3, 1, 2, 9, 200, 100, 5]            # uint8
Y = [2, -2, 3, 1, 5, -3, 2, 3]              # divisors
YU = [2, 4, 3, 1, 5, 3, 2, 250]
H = [0.1, -2.5, 3.25, 1000.0, -0.3333, 7.0, 65.5, 0.01]  # float16


def arr(values, dtype, shape=None):
    a = mx.nd.array(np.array(values, dtype=np.float64).astype(dtype), dtype=dtype)
    return a.reshape(shape) if shape is not None else a


def desc(a):
    a = a.asnumpy()
    return {"dtype": str(a.dtype), "shape": list(a.shape), "values": [float(v) for v in a.ravel()]}


cases = []


def case(op, attrs, inputs):
    fn = getattr(mx.nd, op, None) or getattr(mx.nd._internal, op, None) or getattr(mx.nd.contrib, op[9:])
    kwargs = {k: v for k, v in attrs.items()}
    if op == "_scatter_set_nd":  # MXNet runs it in place only: out is a copy of lhs
        kwargs["out"] = inputs[0].copy()
        outs = fn(kwargs["out"], *inputs[1:], **kwargs)
    else:
        outs = fn(*inputs, **kwargs)
    outs = outs if isinstance(outs, list) else [outs]
    # weft's kernels also write the outputs MXNet hides: sort's positions (in data's dtype) and
    # topk ret_typ=value's positions (float32).
    if op == "sort":
        outs.append(mx.nd.argsort(inputs[0], axis=attrs["axis"], is_ascend=attrs.get("is_ascend", True),
                                  dtype="float64").astype(inputs[0].dtype))
    if op == "topk" and attrs.get("ret_typ") == "value":
        outs.append(mx.nd.topk(inputs[0], **dict(kwargs, ret_typ="indices")))
    cases.append({"op": op, "attrs": {k: str(v) for k, v in attrs.items()},
                  "inputs": [desc(i) for i in inputs], "outputs": [desc(o) for o in outs]})


signed = ["int32", "int64", "int8"]
for dt in signed:
    x = arr(X, dt)
    for s in [2.5, -2.5, 0.75]:
        for op in ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar"]:
            case(op, {"scalar": s}, [x])
    for s in [2.5, -2.5, 3.0]:  # 0.75 becomes 0: MXNet's cpu dies of the division
        case("_div_scalar", {"scalar": s}, [x])
    for s in [2.5, -7.0, 100.0]:
        case("_rdiv_scalar", {"scalar": s}, [x])
    for s in [2.0, 3.0, -2.0]:
        case("_power_scalar", {"scalar": s}, [arr([-3, -2, -1, 1, 2, 3, 4, 5], dt)])
    y = arr(Y, dt)
    for op in ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"]:
        case(op, {}, [x, y])
    xb, yb = arr(X, dt, (2, 4)), arr([3, -2], dt, (2, 1))
    for op in ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div"]:
        case(op, {}, [xb, yb])
    for op in ["broadcast_greater", "broadcast_lesser_equal", "broadcast_equal"]:
        case(op, {}, [xb, yb])
    for s in [2.5, -1.0]:
        case("_greater_scalar", {"scalar": s}, [x])
        case("_equal_scalar", {"scalar": s}, [x])
    case("broadcast_to", {"shape": (3, 2, 4)}, [arr(X, dt, (1, 2, 4))])
    case("broadcast_to", {"shape": (2, 3)}, [arr([4, -5], dt, (2, 1))])
    case("topk", {"k": 3, "axis": -1, "ret_typ": "both"}, [xb])
    case("topk", {"k": 2, "axis": 0, "ret_typ": "value", "is_ascend": True}, [xb])
    case("topk", {"k": 2, "axis": -1, "ret_typ": "indices", "dtype": "int32"}, [xb])
    case("sort", {"axis": -1}, [xb])
    case("argsort", {"axis": 0, "is_ascend": False}, [xb])

# uint8: wrapping subtraction, unsigned division.
xu, yu = arr(XU, "uint8"), arr(YU, "uint8")
for op in ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"]:
    case(op, {}, [xu, yu])
for s in [2.5, 3.0]:
    for op in ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar"]:
        case(op, {"scalar": s}, [xu])
xub, yub = arr(XU, "uint8", (2, 4)), arr([3, 250], "uint8", (2, 1))
for op in ["broadcast_add", "broadcast_sub", "broadcast_div", "broadcast_greater"]:
    case(op, {}, [xub, yub])
case("broadcast_to", {"shape": (2, 2, 4)}, [arr(XU, "uint8", (1, 2, 4))])
case("topk", {"k": 3, "axis": -1, "ret_typ": "both"}, [xub])
case("sort", {"axis": -1, "is_ascend": False}, [xub])

# float16: computed in float, rounded once per op.
h, h2 = arr(H, "float16"), arr([3.0, 0.7, -1.5, 0.03, 2.0, -4.0, 0.3, 9.0], "float16")
for op in ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"]:
    case(op, {}, [h, h2])
for s in [0.1, 3.0]:
    for op in ["_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar"]:
        case(op, {"scalar": s}, [h])
hb, hb2 = arr(H, "float16", (2, 4)), arr([0.3, -7.0], "float16", (2, 1))
for op in ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_greater", "broadcast_not_equal"]:
    case(op, {}, [hb, hb2])
case("_lesser_scalar", {"scalar": 0.1}, [h])
case("broadcast_to", {"shape": (2, 2, 4)}, [arr(H, "float16", (1, 2, 4))])
case("topk", {"k": 2, "axis": -1, "ret_typ": "both"}, [hb])

# gather_nd / scatter_nd / _scatter_set_nd: indices of their own dtype, any of them (MXNet indexes
# data of every dtype with int, float or unsigned positions; a negative one counts from the end).
for dt, values in [("float32", H), ("int32", X), ("float16", H), ("uint8", XU), ("int8", X)]:
    data = arr(values, dt, (2, 2, 2))
    for it in ["int32", "int64", "float32", "uint8", "int8", "float16"]:
        pos = [[1, 0, 1], [0, 1, 1]] if it == "uint8" else [[1, 0, -1], [0, -1, 1]]
        idx = arr(pos, it)
        case("gather_nd", {}, [data, idx])
        rows = arr(values[:6], dt, (3, 2))
        unique = arr([[1, 0, 0], [1, 0, 1]], it)  # distinct positions: scatter keeps each value
        case("scatter_nd", {"shape": (2, 2, 2)}, [rows, unique])
        case("_scatter_set_nd", {"shape": (2, 2, 2)}, [data, rows, unique])

# _contrib_allclose: one uint8 flag; the tolerances and every dtype (NaN and infinities cannot be
# written to JSON: tensor_dtype_test.cc checks those by hand).
for dt, pairs in [("float32", [([1, 2, 3], [1, 2.00001, 3]), ([1e10], [1.00001e10]), ([-4.0, 1], [-4.0000001, 1])]),
                  ("float64", [([1.0, 0.0], [1.00002, 1e-9])]), ("float16", [([1.0, 2.5], [1.0, 2.5]), ([1.0], [1.01])]),
                  ("int32", [([1, 2], [1, 2]), ([1, 2], [1, 3])]), ("uint8", [([7, 200], [7, 200])]),
                  ("int8", [([-7, 3], [-7, 4])]), ("int64", [([5], [5])])]:
    for x, y in pairs:
        for attrs in [{}, {"equal_nan": False}, {"rtol": 0.01, "atol": 0.5}]:
            case("_contrib_allclose", attrs, [arr(x, dt), arr(y, dt)])

# float16 gradients of the arithmetic ops, from MXNet's autograd: weft's backward kernel takes
# out_grad (and lhs, rhs / data when the derivative needs them) and writes the input gradients.
# MXNet rounds to float16 after each step of the derivative, weft once: "tol" (an NMSE) allows
# those ulps, also when the harness adds them to other values (req add).
def grad_case(op, backward, attrs, inputs, uses_inputs):
    for x in inputs:
        x.attach_grad()
    with mx.autograd.record():
        out = (getattr(mx.nd, op, None) or getattr(mx.nd._internal, op))(*inputs, **attrs)
    step = 0.5 if out.dtype == np.float16 else 1
    g = arr([step * (i % 5) - 1.0 for i in range(out.size)], out.dtype, out.shape)
    out.backward(g)
    given = [g] + (inputs if uses_inputs else [])
    cases.append({"op": backward, "attrs": {k: str(v) for k, v in attrs.items()}, "tol": 1e-5,
                  "inputs": [desc(i) for i in given], "outputs": [desc(x.grad) for x in inputs]})


a16, b16 = arr(H, "float16", (2, 4)), arr([3.0, 0.7, -1.5, 0.25, 2.0, -4.0, 0.3, 9.0], "float16", (2, 4))
for name, uses in [("add", False), ("sub", False), ("mul", True), ("div", True)]:
    grad_case("elemwise_" + name, "_backward_elemwise_" + name, {}, [a16.copy(), b16.copy()], uses)
    grad_case("broadcast_" + name, "_backward_broadcast_" + name, {},
              [a16.copy(), arr([0.3, -7.0], "float16", (2, 1))], uses)
for name, uses in [("_plus_scalar", False), ("_mul_scalar", False), ("_div_scalar", False),
                   ("_rdiv_scalar", True), ("_power_scalar", True)]:
    base = arr([0.5, 1.5, 2.0, 3.25, 0.75, 1.25, 4.0, 2.5], "float16", (2, 4))
    grad_case(name, "_backward" + name, {"scalar": 3.0}, [base], uses)

# The gradients of gather_nd / scatter_nd in integer and float16 data (MXNet differentiates an
# int32 array indexed with x[[0, 2], [1, 3]]; not int8 / uint8); a repeated position sums its
# gradients.
for dt, it in [("int32", "int32"), ("int64", "int64"), ("float16", "int64"), ("float64", "uint8")]:
    grad_case("gather_nd", "_backward_gather_nd", {}, [arr(X, dt, (2, 2, 2)), arr([[1, 0, 1], [0, 1, 0]], it)], True)
    grad_case("scatter_nd", "_backward_scatter_nd", {"shape": (2, 2, 2)},
              [arr(X[:6], dt, (3, 2)), arr([[1, 0, 0], [1, 0, 1]], it)], True)

# max / min of integer arrays (MXNet's frontend takes indices.max() of sparse parts), and take /
# pick moving elements of every dtype by float or integer positions (clip and wrap).
for dt in ["int32", "int64"]:
    xi = arr([-7, 3, 2 ** 30 if dt == "int32" else 2 ** 40, -2 ** 31, 0, 5], dt, (2, 3))  # room for req add
    for op in ["max", "min"]:
        for attrs in [{}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": (0, 1)}]:
            case(op, attrs, [xi])
for dt, values in [("int32", X), ("int64", X), ("uint8", XU), ("int8", X), ("float16", H)]:
    data = arr(values[:6], dt, (3, 2))
    for it in ["float32", "int32", "int64"]:
        for mode in ["clip", "wrap"]:
            case("take", {"mode": mode}, [data, arr([2, -1, 0, 4], it)])
            case("pick", {"axis": 1, "mode": mode}, [data, arr([1, -1, 3], it)])
    case("take", {"axis": 1}, [data, arr([1, 0], "float32")])

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT + ".tmp", "w") as f:
    # allow_nan=False: every value is finite (the test's JSON reader takes no Infinity / NaN).
    json.dump({"generator": "tests/cpu_kernels/gen_dtype_fixtures.py", "mxnet": mx.__version__, "cases": cases}, f,
              indent=0, allow_nan=False)
os.replace(OUT + ".tmp", OUT)
print("{}: {} cases".format(OUT, len(cases)))
