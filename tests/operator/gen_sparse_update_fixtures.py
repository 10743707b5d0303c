#!/usr/bin/env python3
"""Writes tests/operator/data/sparse_update.json with the real MXNet 1.9.1: what MXNet computes for
row_sparse gradients, so that weft's C++ tests (sparse_update_test.cc) and the binding's Python
tests (bindings/mxnet/tests/python/test_sparse_executor.py) can check weft against it.

Run by hand (the tests only read the file; they never need MXNet):

    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/operator/gen_sparse_update_fixtures.py

Contents (all deterministic):
  updates      optimizer updates with a row_sparse gradient, two steps with different rows:
               the op, its attributes, the weight's and states' storage types, the initial weight
               and states (dense values), each step's gradient (dense values and its stored rows)
               and the weight and states after each step (dense values), as MXNet's lazy and
               non-lazy updates give them; weight decay is on, so a row updated where it should
               not be shows.
  square_sum   _square_sum of a row_sparse array: attributes, input, output storage type, stored
               rows and dense values.
  dot_transposed  dot(csr.T, dense) imperatively: the result's storage type, stored rows and values.
  executors    simple_bind of small graphs with row_sparse / csr variables: the arguments'
               values, the head gradient, and per argument the gradient's storage type, stored
               rows and dense values after one forward and backward.
"""
import json
import os

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
import mxnet as mx  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SHAPE = (6, 3)


def dense(a):
    return a.asnumpy().astype(np.float64).ravel().tolist()


def rsp(values, rows):
    full = np.zeros(SHAPE, dtype=np.float32)
    full[rows] = values
    return mx.nd.sparse.row_sparse_array((values.astype(np.float32), np.array(rows, dtype=np.int64)), shape=SHAPE), full


def update_case(name, op, attrs, weight_stype, state_stypes, states_init, rs):
    weight0 = rs.uniform(-1, 1, SHAPE).astype(np.float32)
    weight = mx.nd.array(weight0).tostype(weight_stype)
    states = []
    for stype, init in zip(state_stypes, states_init):
        if init == "zeros":
            states.append(mx.nd.zeros(SHAPE, stype=stype))
        else:
            states.append(mx.nd.array(rs.uniform(0.1, 1, SHAPE).astype(np.float32)).tostype(stype))
    case = {"name": name, "op": op, "attrs": {k: str(v) for k, v in attrs.items()}, "weight_stype": weight_stype,
            "state_stypes": list(state_stypes), "weight": dense(weight), "states": [dense(s) for s in states],
            "steps": []}
    # MXNet's frontend puts _sparse_X ops in mx.nd.sparse as X.
    fn = getattr(mx.nd.sparse, op[8:]) if op.startswith("_sparse_") else getattr(mx.nd, op)
    for rows in ([1, 4], [0, 4]):
        g, full = rsp(rs.uniform(-3, 3, (len(rows), SHAPE[1])), rows)
        fn(weight, g, *states, out=weight, **attrs)
        case["steps"].append({"grad": full.astype(np.float64).ravel().tolist(), "rows": rows,
                              "weight": dense(weight), "states": [dense(s) for s in states]})
    return case


def updates():
    rs = np.random.RandomState(32)
    clip = {"rescale_grad": 0.5, "clip_gradient": 1.0}
    return [
        update_case("sgd_dense_weight", "sgd_update", {"lr": 0.1, "wd": 0.2, **clip}, "default", [], [], rs),
        update_case("sgd_rsp_weight", "sgd_update", {"lr": 0.1, "wd": 0.2}, "row_sparse", [], [], rs),
        update_case("sgd_mom_dense", "sgd_mom_update", {"lr": 0.1, "momentum": 0.9, "wd": 0.2, **clip}, "default",
                    ["default"], ["random"], rs),
        update_case("sgd_mom_rsp_zero_state", "sgd_mom_update", {"lr": 0.1, "momentum": 0.9, "wd": 0.2}, "row_sparse",
                    ["row_sparse"], ["zeros"], rs),
        update_case("sgd_mom_not_lazy", "sgd_mom_update",
                    {"lr": 0.1, "momentum": 0.9, "wd": 0.2, "lazy_update": False}, "default", ["default"],
                    ["random"], rs),
        update_case("adam_dense", "adam_update", {"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "wd": 0.2, **clip},
                    "default", ["default", "default"], ["random", "random"], rs),
        update_case("adam_rsp_zero_states", "adam_update", {"lr": 0.1, "wd": 0.2}, "row_sparse",
                    ["row_sparse", "row_sparse"], ["zeros", "zeros"], rs),
        update_case("adagrad_rsp", "_sparse_adagrad_update", {"lr": 0.1, "epsilon": 1e-7, **clip}, "row_sparse",
                    ["row_sparse"], ["zeros"], rs),
        update_case("adagrad_dense_weight", "_sparse_adagrad_update", {"lr": 0.1}, "default", ["default"],
                    ["random"], rs),
        update_case("ftrl_rsp", "ftrl_update", {"lr": 0.1, "lamda1": 0.01, "beta": 1.0, "wd": 0.2, **clip},
                    "row_sparse", ["row_sparse", "row_sparse"], ["zeros", "zeros"], rs),
    ]


def square_sum():
    values = np.array([[1, 2, 0], [0, 0, 0], [3, -4, 1]], dtype=np.float32)
    x = mx.nd.sparse.row_sparse_array((values, np.array([0, 2, 5])), shape=SHAPE)
    out = []
    for attrs in ({"axis": 1, "keepdims": True}, {"axis": 1}, {"axis": 0}, {"axis": 0, "keepdims": True}):
        y = mx.nd._internal._square_sum(x, **attrs)
        r = {"attrs": {k: str(v) for k, v in attrs.items()}, "stype": y.stype, "shape": list(y.shape),
             "value": dense(y)}
        if y.stype == "row_sparse":
            r["rows"] = y.indices.asnumpy().tolist()
        out.append(r)
    return {"input": dense(x), "input_rows": [0, 2, 5], "cases": out}


def bind_case(name, sym, args, head_shape, rs):
    """simple_bind `sym`, set `args` (name -> NDArray), forward, backward with a random head gradient."""
    shapes = {k: v.shape for k, v in args.items()}
    # Gradients of the weights only: data and x are inputs (index values, csr features).
    req = {k: "null" if k in ("data", "x") else "write" for k in args}
    exe = sym.simple_bind(mx.cpu(), grad_req=req, **shapes)
    for k, v in args.items():
        v.copyto(exe.arg_dict[k])
    head = rs.uniform(-1, 1, head_shape).astype(np.float32)
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(head)])
    case = {"name": name, "symbol": sym.tojson(), "head": head.astype(np.float64).ravel().tolist(),
            "output": dense(exe.outputs[0]), "grad_req": req, "args": {}, "grads": {}}
    for k, v in args.items():
        a = {"stype": v.stype, "shape": list(v.shape), "value": dense(v)}
        if v.stype == "csr":
            a["indptr"] = v.indptr.asnumpy().tolist()
            a["indices"] = v.indices.asnumpy().tolist()
            a["data"] = v.data.asnumpy().astype(np.float64).tolist()
        case["args"][k] = a
    for k, g in exe.grad_dict.items():
        if g is None or k not in args:
            continue
        r = {"stype": g.stype, "value": dense(g)}
        if g.stype == "row_sparse":
            r["rows"] = g.indices.asnumpy().tolist()
        case["grads"][k] = r
    return case


def csr_with_stored_zero():
    # Row 1 stores an explicit 0 in column 7: MXNet's dot gradient stores row 7 (zero) too.
    data = np.array([1.5, -2, 0, 3, 0.5], dtype=np.float32)
    indices = np.array([1, 4, 7, 4, 9])
    indptr = np.array([0, 2, 3, 3, 5])
    return mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(4, 10))


def executors():
    rs = np.random.RandomState(33)
    cases = []
    # SparseEmbedding with a row_sparse weight: rows = the indices in data (repeats once).
    data = mx.sym.var("data")
    w = mx.sym.var("embed_weight", stype="row_sparse")
    emb = mx.sym.contrib.SparseEmbedding(data=data, weight=w, input_dim=8, output_dim=3, name="embed")
    weight = mx.nd.array(rs.uniform(-1, 1, (8, 3))).tostype("row_sparse")
    cases.append(bind_case("sparse_embedding", emb, {"data": mx.nd.array([[1, 5, 1], [7, 0, 5]]),
                                                   "embed_weight": weight}, (2, 3, 3), rs))
    # Embedding(sparse_grad=True) with a dense weight: the gradient is row_sparse all the same.
    emb2 = mx.sym.Embedding(data=data, input_dim=8, output_dim=3, sparse_grad=True, name="emb")
    cases.append(bind_case("embedding_sparse_grad", emb2, {"data": mx.nd.array([[2, 2], [6, 3]]),
                                                         "emb_weight": mx.nd.array(rs.uniform(-1, 1, (8, 3)))},
                           (2, 2, 3), rs))
    # dot(csr, row_sparse weight): rows = the csr's stored columns, an explicit zero's included.
    x = mx.sym.var("x", stype="csr")
    v = mx.sym.var("v", stype="row_sparse")
    weight = mx.nd.array(rs.uniform(-1, 1, (10, 2))).tostype("row_sparse")
    cases.append(bind_case("dot_csr_rsp", mx.sym.dot(x, v), {"x": csr_with_stored_zero(), "v": weight}, (4, 2), rs))
    # dot(csr.T, dense): the rhs gradient is dense (MXNet's rule needs transpose_a false).
    d = mx.sym.var("d")
    cases.append(bind_case("dot_csr_transposed", mx.sym.dot(x, d, transpose_a=True),
                           {"x": csr_with_stored_zero(), "d": mx.nd.array(rs.uniform(-1, 1, (4, 2)))}, (10, 2), rs))
    # A factorisation machine's second-order term on a weight storing every row.
    vs = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    fm = mx.sym.elemwise_add(mx.sym.dot(mx.sym.square(x), vs), mx.sym.sum(mx.sym.square(mx.sym.dot(x, v)), axis=1,
                                                                      keepdims=True))
    cases.append(bind_case("factorization_machine", fm, {"x": csr_with_stored_zero(), "v": weight}, (4, 1), rs))
    # _square_sum alone, axis 0 (dense output), on a weight storing some rows.
    part = mx.nd.sparse.row_sparse_array((rs.uniform(-1, 1, (3, 2)).astype(np.float32), np.array([1, 4, 8])),
                                         shape=(10, 2))
    cases.append(bind_case("square_sum_axis0", mx.sym._internal._square_sum(data=v, axis=0), {"v": part}, (2,), rs))
    return cases


def dot_transposed():
    """dot(csr.T, dense): MXNet's result is row_sparse, storing the csr's stored columns."""
    x = csr_with_stored_zero()
    rhs = mx.nd.array(np.arange(8, dtype=np.float32).reshape(4, 2))
    y = mx.nd.dot(x, rhs, transpose_a=True)
    return {"data": x.data.asnumpy().astype(np.float64).tolist(), "indices": x.indices.asnumpy().tolist(),
            "indptr": x.indptr.asnumpy().tolist(), "shape": list(x.shape), "rhs": dense(rhs), "stype": y.stype,
            "rows": y.indices.asnumpy().tolist(), "value": dense(y)}


def main():
    os.makedirs(HERE, exist_ok=True)
    out = {"shape": list(SHAPE), "updates": updates(), "square_sum": square_sum(), "executors": executors(),
           "dot_transposed": dot_transposed()}
    with open(os.path.join(HERE, "sparse_update.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
