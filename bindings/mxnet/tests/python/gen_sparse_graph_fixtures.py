#!/usr/bin/env python3
"""Writes data/sparse_graph.json with the real MXNet 1.9.1: bound graphs (Symbol -> bind ->
forward/backward) whose arguments, outputs or gradients are sparse -- cast_storage, sparse_retain,
unary ops of a row_sparse argument, and the scatter ops (_scatter_plus_scalar,
_scatter_minus_scalar, _scatter_elemwise_div) -- so that test_sparse_graph.py checks weft's
executor against MXNet's: each output's storage type, values and stored rows (indices / indptr),
each gradient's storage type and values, and the gradients' storage types simple_bind gives.

Run by hand with the real libmxnet (the tests only read the file):

    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python bindings/mxnet/tests/python/gen_sparse_graph_fixtures.py

A case: the symbol's JSON, the arguments (storage type, shape, dense values, dtype), grad_req and
the storage type of each gradient buffer given to bind (None: no gradient), the head gradients
(storage type and dense values), then MXNet's outputs and gradients after one forward(is_train=True)
and backward, and the storage types of simple_bind's gradients and outputs for the arguments'
storage types (stype_dict).
"""
import json
import os

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
import mxnet as mx  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def describe(a):
    d = {"stype": a.stype, "shape": list(a.shape), "dense": [None if np.isnan(v) else v for v in
                                                            a.asnumpy().astype(np.float64).ravel().tolist()]}
    if a.stype != "default":
        d["indices"] = a.indices.asnumpy().astype(np.int64).tolist()
    if a.stype == "csr":
        d["indptr"] = a.indptr.asnumpy().astype(np.int64).tolist()
        # MXNet's csr gradient of relu may hold more indices than it stores (uninitialised ones
        # past indptr[-1]): only the stored ones are its.
        d["indices"] = d["indices"][:d["indptr"][-1]]
    return d


def values(shape, seed, zero_rows=(), zero_cols=()):
    """Dense values in [-2, 2] rounded to 2 places, with the given rows and columns zero."""
    v = np.random.RandomState(seed).uniform(-2, 2, shape).round(2)
    v[list(zero_rows)] = 0
    if zero_cols:
        v[:, list(zero_cols)] = 0
    return v


def arg(stype, v, dtype="float32"):
    return {"stype": stype, "shape": list(v.shape), "dense": v.ravel().tolist(), "dtype": dtype}


def to_nd(a):
    return mx.nd.array(np.array(a["dense"]).reshape(a["shape"]), dtype=a["dtype"]).tostype(a["stype"])


X = values((5, 4), 1, zero_rows=(1, 3), zero_cols=(2,))  # rows 1 and 3 and column 2 zero
Y = values((5, 4), 2, zero_rows=(0,))
HEAD = values((5, 4), 3)


def cases():
    """(name, symbol factory, args by name, grad stypes by name (None: no gradient), heads)."""
    x, y, idx = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("idx")
    head = [arg("default", HEAD)]
    rsp_head = [arg("row_sparse", values((5, 4), 4, zero_rows=(0, 2, 4)))]
    out = []
    for src, dst in [("default", "csr"), ("default", "row_sparse"), ("row_sparse", "default"), ("csr", "default"),
                     ("row_sparse", "row_sparse"), ("csr", "csr")]:
        out.append(("cast_%s_%s" % (src, dst), lambda d=dst: mx.sym.cast_storage(x, stype=d),
                    {"x": arg(src, X)}, {"x": dst}, head))
    # MXNet runs _backward_sparse_retain on a dense out_grad only: the retained rows are multiplied
    # by a dense w (as MXNet's own test_sparse_retain does), which keeps them row_sparse.
    w = mx.sym.var("w")
    for name, ids, dtype in [("retain", [0, 2, 4], "float32"), ("retain_int64", [1, 3], "int64"),
                             ("retain_truncates", [0.4, 2.6], "float32")]:
        out.append((name, lambda: mx.sym.sparse.retain(x, idx) * w,
                    {"x": arg("row_sparse", X), "idx": arg("default", np.array(ids), dtype), "w": arg("default", Y)},
                    {"x": "row_sparse", "idx": None, "w": None}, head))
    out.append(("retain_make_loss", lambda: mx.sym.make_loss(mx.sym.sparse.retain(x, idx) * w),
                {"x": arg("row_sparse", X), "idx": arg("default", np.array([1, 2, 4])), "w": arg("default", Y)},
                {"x": "row_sparse", "idx": None, "w": None}, None))
    for op in ["relu", "sigmoid", "abs"]:
        out.append(("%s_rsp" % op, lambda o=op: getattr(mx.sym, o)(x), {"x": arg("row_sparse", X)},
                    {"x": "row_sparse"}, rsp_head))
        out.append(("%s_rsp_dense_head" % op, lambda o=op: getattr(mx.sym, o)(x), {"x": arg("row_sparse", X)},
                    {"x": "default"}, head))
    out.append(("relu_csr", lambda: mx.sym.relu(x), {"x": arg("csr", X)}, {"x": "csr"}, head))
    for op in ["_scatter_plus_scalar", "_scatter_minus_scalar"]:
        for stype in ["row_sparse", "csr", "default"]:
            out.append(("%s_%s" % (op, stype), lambda o=op: getattr(mx.sym._internal, o)(x, scalar=2.5),
                        {"x": arg(stype, X)}, {"x": stype}, head))
    for ls, rs in [("row_sparse", "default"), ("row_sparse", "row_sparse"), ("row_sparse", "csr"),
                   ("csr", "default"), ("default", "default"), ("default", "row_sparse")]:
        out.append(("_scatter_elemwise_div_%s_%s" % (ls, rs), lambda: mx.sym._internal._scatter_elemwise_div(x, y),
                    {"x": arg(ls, X), "y": arg(rs, Y)}, {"x": "default", "y": "default"}, head))
    # Sparse values inside a graph: relu of a row_sparse argument times a dense one; the cast of a
    # row_sparse argument to dense times a dense one.
    out.append(("relu_mul", lambda: mx.sym.relu(x) * y, {"x": arg("row_sparse", X), "y": arg("default", Y)},
                {"x": "row_sparse", "y": "default"}, head))
    out.append(("cast_mul", lambda: mx.sym.cast_storage(x, stype="default") * y,
                {"x": arg("row_sparse", X), "y": arg("default", Y)}, {"x": "row_sparse", "y": "default"}, head))
    return out


def run(case):
    name, make, args, grad_stypes, heads = case
    sym = make()
    names = sym.list_arguments()
    arrays = {k: to_nd(args[k]) for k in names}
    grads = {k: mx.nd.zeros(args[k]["shape"], stype=grad_stypes[k]) for k in names if grad_stypes[k]}
    reqs = {k: "write" if grad_stypes[k] else "null" for k in names}
    exe = sym.bind(mx.cpu(), arrays, args_grad=grads, grad_req=reqs)
    exe.forward(is_train=True)
    outputs = [describe(o) for o in exe.outputs]
    exe.backward(None if heads is None else [to_nd(h) for h in heads])
    shapes = {k: tuple(args[k]["shape"]) for k in names}
    stypes = {k: args[k]["stype"] for k in names}
    simple = sym.simple_bind(mx.cpu(), stype_dict=stypes, type_dict={k: args[k]["dtype"] for k in names}, **shapes)
    return {"name": name, "symbol": sym.tojson(), "args": [dict(args[k], name=k) for k in names],
            "grad_stypes": [grad_stypes[k] for k in names], "heads": heads, "outputs": outputs,
            "grads": [describe(grads[k]) if k in grads else None for k in names],
            "simple_bind": {"grad_stypes": [simple.grad_dict[k].stype if simple.grad_dict.get(k) is not None
                                            else None for k in names],
                            "output_stypes": [o.stype for o in simple.outputs]}}


def main():
    assert not mx.base._LIB._name.endswith("libweft_mxnet.so"), "run this with the real libmxnet"
    text = json.dumps({"mxnet": mx.__version__, "cases": [run(c) for c in cases()]}, indent=1, sort_keys=True)
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, "sparse_graph.json"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
