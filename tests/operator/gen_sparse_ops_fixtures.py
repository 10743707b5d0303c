#!/usr/bin/env python3
"""Writes tests/operator/data/sparse_ops.json with the real MXNet 1.9.1: dot of dense·csr and
csr·row_sparse, sparse_retain and _square_sum on row_sparse arrays, forward and gradient, and the
scatter ops (_scatter_plus_scalar, _scatter_minus_scalar, _scatter_elemwise_div) forward, so
that weft's C++ tests (sparse_ops_test.cc) and the binding's Python tests
(bindings/mxnet/tests/python/test_sparse_ops.py) check weft against it. (The shared fixture folder
is read-only to sessions, so the file sits beside sparse_update.json, as that generator's does.)

Run by hand (the tests only read the file; they never need MXNet):

    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/operator/gen_sparse_ops_fixtures.py

Every case runs in a fresh process (this script with --case N), because MXNet logs each distinct
storage-fallback message once per process: `warns` is whether that case's call printed MXNet's
"Storage type fallback detected" warning.

Contents (all deterministic):
  forward   op, attrs, inputs (storage type, shape, dtype, dense values and the sparse parts), the
            output (storage type, shape, dense values, stored rows / indptr + indices), warns.
  backward  autograd on MXNet: op, attrs, inputs as above, which inputs get a gradient buffer and
            of which storage type, the head gradient (dense), and each gradient (as an output),
            warns (the forward's or the backward's fallback); `mxnet_zero` lists gradients MXNet
            leaves zero where the true gradient is not (dot(dense, csr)'s rhs gradient).
  chain     several ops inside one autograd.record() reduced to a scalar loss, backward (once, or
            twice with grad_req='add'): inputs, the loss, each variable's gradient, warns. Where
            MXNet itself cannot run the chain's backward (_backward_sparse_retain takes a dense
            out_grad only, so a sparse_retain whose result feeds another sparse op fails with
            "Operator not implemented"), `mxnet_error` holds MXNet's message and the gradients are
            MXNet's for `reference`: the same loss written with dense ops (retain as a row mask),
            each gradient then given the storage type of its buffer and no stored rows.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "1"
import mxnet as mx  # noqa: E402
from mxnet import autograd  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def describe(a):
    d = {"stype": a.stype, "shape": list(a.shape), "dtype": np.dtype(a.dtype).name,
         "dense": a.asnumpy().astype(np.float64).ravel().tolist()}
    if a.stype != "default":
        d["data"] = a.data.asnumpy().astype(np.float64).ravel().tolist()
        d["indices"] = a.indices.asnumpy().astype(np.int64).tolist()
    if a.stype == "csr":
        d["indptr"] = a.indptr.asnumpy().astype(np.int64).tolist()
    return d


def csr(dtype="float32"):
    """4x5 csr: row 1 empty, column 2 never stored, an explicitly stored zero at (3, 4)."""
    data = np.array([1.5, -2, 3, 0.5, 4, 0], dtype=dtype)
    indices = np.array([0, 3, 1, 4, 0, 4], dtype=np.int64)
    indptr = np.array([0, 2, 2, 4, 6], dtype=np.int64)
    return mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(4, 5), dtype=dtype)


def rsp(rows, cols, stored, dtype="float32", seed=3):
    """row_sparse (rows, cols) storing `stored` rows; the second stored row is all zero."""
    rs = np.random.RandomState(seed)
    values = rs.uniform(-2, 2, (len(stored), cols)).round(2).astype(dtype)
    if len(stored) > 1:
        values[1] = 0
    return mx.nd.sparse.row_sparse_array((values, np.array(stored, dtype=np.int64)), shape=(rows, cols), dtype=dtype)


def dense(shape, seed, dtype="float32"):
    return mx.nd.array(np.random.RandomState(seed).uniform(-2, 2, shape).round(2), dtype=dtype)


def forward_cases():
    """(name, op, attrs, inputs factory)."""
    return [
        ("dns_csr", "dot", {}, lambda: [dense((3, 4), 1), csr()]),
        ("dns_csr_hint_csr", "dot", {"forward_stype": "csr"}, lambda: [dense((3, 4), 1), csr()]),
        ("dns_csr_hint_default", "dot", {"forward_stype": "default"}, lambda: [dense((3, 4), 1), csr()]),
        ("dns_csrT_hint_default", "dot", {"transpose_b": True, "forward_stype": "default"},
         lambda: [dense((3, 5), 2), csr()]),
        ("dns_csrT_fallback", "dot", {"transpose_b": True}, lambda: [dense((3, 5), 2), csr()]),
        ("dns_csr_hint_rsp_fallback", "dot", {"forward_stype": "row_sparse"}, lambda: [dense((3, 4), 1), csr()]),
        ("dns_csr_f64", "dot", {}, lambda: [dense((2, 4), 4, "float64"), csr("float64")]),
        ("csr_rsp", "dot", {}, lambda: [csr(), rsp(5, 3, [0, 2, 3])]),
        ("csr_rsp_hint_default", "dot", {"forward_stype": "default"}, lambda: [csr(), rsp(5, 3, [0, 2, 3])]),
        ("csrT_rsp", "dot", {"transpose_a": True}, lambda: [csr(), rsp(4, 3, [0, 1, 2])]),
        ("csrT_rsp_hint_rsp", "dot", {"transpose_a": True, "forward_stype": "row_sparse"},
         lambda: [csr(), rsp(4, 3, [2, 3])]),
        ("csr_rsp_f64", "dot", {}, lambda: [csr("float64"), rsp(5, 2, [1, 4], "float64")]),
        ("retain", "_sparse_retain", {}, lambda: [rsp(6, 3, [0, 1, 4]), mx.nd.array([0, 2, 4])]),
        ("retain_int64", "_sparse_retain", {}, lambda: [rsp(6, 3, [0, 1, 4]), mx.nd.array([1, 5], dtype="int64")]),
        ("retain_f64", "_sparse_retain", {}, lambda: [rsp(6, 2, [2, 3], "float64"), mx.nd.array([3])]),
        ("square_sum_axis1_keepdims", "_square_sum", {"axis": 1, "keepdims": True}, lambda: [rsp(6, 3, [0, 2, 5])]),
        ("square_sum_axis1", "_square_sum", {"axis": 1}, lambda: [rsp(6, 3, [0, 2, 5])]),
        ("square_sum_axis0", "_square_sum", {"axis": 0}, lambda: [rsp(6, 3, [0, 2, 5])]),
        ("square_sum_axis0_keepdims", "_square_sum", {"axis": 0, "keepdims": True}, lambda: [rsp(6, 3, [1, 2])]),
        # The scatter ops compute only the values a sparse lhs stores (MXNet's elemwise_scatter_op.cc).
        ("scatter_plus_rsp", "_scatter_plus_scalar", {"scalar": 2.5}, lambda: [rsp(6, 3, [0, 2, 5])]),
        ("scatter_minus_rsp_f64", "_scatter_minus_scalar", {"scalar": 1.5}, lambda: [rsp(6, 3, [1, 4], "float64")]),
        ("scatter_plus_csr", "_scatter_plus_scalar", {"scalar": 3}, lambda: [csr()]),
        ("scatter_minus_csr_f64", "_scatter_minus_scalar", {"scalar": 0.5}, lambda: [csr("float64")]),
        ("scatter_div_rsp_dns", "_scatter_elemwise_div", {}, lambda: [rsp(6, 3, [0, 2, 5]), dense((6, 3), 7) + 3]),
        ("scatter_div_rsp_rsp", "_scatter_elemwise_div", {},
         lambda: [rsp(6, 3, [0, 2, 5]), mx.nd.sparse.row_sparse_array(
             (np.random.RandomState(4).uniform(1, 2, (4, 3)).round(2), [0, 1, 2, 5]), shape=(6, 3), dtype="float32")]),
        ("scatter_div_rsp_csr", "_scatter_elemwise_div", {},
         lambda: [rsp(4, 5, [0, 3], seed=5), mx.nd.array(csr().asnumpy() + 10).tostype("csr")]),
        ("scatter_div_csr_dns_fallback", "_scatter_elemwise_div", {}, lambda: [csr(), dense((4, 5), 8) + 3]),
    ]


def backward_cases():
    """(name, op, attrs, inputs factory, grad stypes per input (None: no gradient), mxnet_zero)."""
    return [
        ("csr_dns_wgrad_rsp", "dot", {}, lambda: [csr(), dense((5, 3), 5)], [None, "row_sparse"], []),
        ("csr_rsp_wgrad_rsp", "dot", {}, lambda: [csr(), rsp(5, 3, [0, 2, 3])], [None, "row_sparse"], []),
        ("dns_csr_xgrad", "dot", {}, lambda: [dense((3, 4), 1), csr()], ["default", None], []),
        ("dns_csr_both_dense", "dot", {}, lambda: [dense((3, 4), 1), csr()], ["default", "default"], [1]),
        ("dns_csrT_xgrad", "dot", {"transpose_b": True, "forward_stype": "default"},
         lambda: [dense((3, 5), 2), csr()], ["default", None], []),
        ("retain", "_sparse_retain", {}, lambda: [rsp(6, 3, [0, 1, 4]), mx.nd.array([0, 2, 4])],
         ["row_sparse", None], []),
        ("square_sum_axis1_keepdims", "_square_sum", {"axis": 1, "keepdims": True},
         lambda: [rsp(6, 3, [0, 2, 5])], ["row_sparse"], []),
        ("square_sum_axis1", "_square_sum", {"axis": 1}, lambda: [rsp(6, 3, [0, 2, 5])], ["row_sparse"], []),
        ("square_sum_axis0", "_square_sum", {"axis": 0}, lambda: [rsp(6, 3, [0, 2, 5])], ["row_sparse"], []),
    ]


def row_mask(rows, cols, keep):
    """The dense (rows, cols) 0/1 mask of the rows sparse_retain keeps."""
    m = np.zeros((rows, cols), dtype=np.float32)
    m[keep] = 1
    return mx.nd.array(m)


def chain_cases():
    """(name, loss of the inputs, dense reference loss or None, inputs factory, grad stypes per
    input (None: no gradient; "like": attach_grad() without stype), grad_req, passes)."""
    nd = mx.nd
    keep = [0, 2, 4]

    def retain(x):
        return nd.sparse.retain(x, nd.array(keep))

    return [
        ("retain_square_sum_sum",
         lambda x: nd.sum(nd._internal._square_sum(retain(x), axis=1, keepdims=True)),
         lambda x: nd.sum(nd.sum(nd.square(x * row_mask(6, 3, keep)), axis=1, keepdims=True)),
         lambda: [rsp(6, 3, [0, 1, 4])], ["row_sparse"], "write", 1),
        ("retain_dot_square_sum",
         lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, nd.sparse.retain(w, nd.array([0, 1, 3]))))),
         lambda a, w: nd.sum(nd.square(nd.dot(a, w * row_mask(5, 3, [0, 1, 3])))),
         lambda: [csr(), rsp(5, 3, [0, 2, 3])], [None, "row_sparse"], "write", 1),
        ("csr_dns_scaled_wgrad_rsp", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w * 2))), None,
         lambda: [csr(), dense((5, 3), 5)], [None, "row_sparse"], "write", 1),
        ("csr_dns_scaled_wgrad_dns", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w * 2))), None,
         lambda: [csr(), dense((5, 3), 5)], [None, "default"], "write", 1),
        ("csr_dns_used_twice", lambda a, w: nd.sum(nd.sparse.dot(a, w) * nd.sparse.dot(a, w)), None,
         lambda: [csr(), dense((5, 3), 5)], [None, "row_sparse"], "write", 1),
        ("csrT_dns", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w, transpose_a=True))), None,
         lambda: [csr(), dense((4, 3), 5)], [None, "default"], "write", 1),
        ("csr_dns_add_twice", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w))), None,
         lambda: [csr(), dense((5, 3), 5)], [None, "default"], "add", 2),
        ("csr_rsp_square_sum", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w))), None,
         lambda: [csr(), rsp(5, 3, [0, 2, 3])], [None, "row_sparse"], "write", 1),
        # attach_grad() without stype: a buffer of the array's own storage type (zeros_like).
        ("square_sum_grad_like_data", lambda x: nd.sum(nd._internal._square_sum(x, axis=1)), None,
         lambda: [rsp(6, 3, [0, 2, 5])], ["like"], "write", 1),
        ("csr_rsp_grad_like_data", lambda a, w: nd.sum(nd.square(nd.sparse.dot(a, w))), None,
         lambda: [csr(), rsp(5, 3, [0, 2, 3])], [None, "like"], "write", 1),
    ]


def call(op, inputs, attrs):
    fn = mx.nd.sparse.retain if op == "_sparse_retain" else getattr(mx.nd, op, None)
    if fn is None:
        fn = getattr(mx.nd._internal, op)
    return fn(*inputs, **attrs)


def run_forward(i):
    name, op, attrs, make = forward_cases()[i]
    inputs = make()
    y = call(op, inputs, attrs)
    y.wait_to_read()
    return {"name": name, "op": op, "attrs": {k: str(v) for k, v in attrs.items()},
            "inputs": [describe(a) for a in inputs], "output": describe(y)}


def run_backward(i):
    name, op, attrs, make, grad_stypes, mxnet_zero = backward_cases()[i]
    inputs = make()
    for a, g in zip(inputs, grad_stypes):
        if g is not None:
            a.attach_grad(stype=g)
    with autograd.record():
        y = call(op, inputs, attrs)
    head = mx.nd.array(np.arange(1, 1 + int(np.prod(y.shape)), dtype=np.float64).reshape(y.shape) / 4,
                       dtype=inputs[0].dtype)
    y.backward(head)
    grads = [describe(a.grad) if g is not None else None for a, g in zip(inputs, grad_stypes)]
    return {"name": name, "op": op, "attrs": {k: str(v) for k, v in attrs.items()},
            "inputs": [describe(a) for a in inputs], "grad_stypes": grad_stypes, "output": describe(y),
            "head_grad": describe(head), "grads": grads, "mxnet_zero": mxnet_zero}


def chain_backward(loss_fn, inputs, grad_stypes, grad_req, passes):
    for a, g in zip(inputs, grad_stypes):
        if g is not None:
            a.attach_grad(grad_req=grad_req, stype=None if g == "like" else g)
    for _ in range(passes):
        with autograd.record():
            loss = loss_fn(*inputs)
        loss.backward()
    return loss, [describe(a.grad) if g is not None else None for a, g in zip(inputs, grad_stypes)]


def run_chain(i, reference_on_error=False):
    """Chain case i; with reference_on_error (the generator, on MXNet), MXNet's error and the dense
    reference's gradients where MXNet cannot run the chain."""
    name, loss_fn, reference, make, grad_stypes, grad_req, passes = chain_cases()[i]
    inputs = make()
    case = {"name": name, "inputs": [describe(a) for a in inputs], "grad_stypes": grad_stypes,
            "grad_req": grad_req, "passes": passes, "mxnet_error": None}
    try:
        loss, grads = chain_backward(loss_fn, inputs, grad_stypes, grad_req, passes)
    except mx.base.MXNetError as e:
        if not (reference_on_error and reference is not None):
            raise
        line = next(line for line in str(e).splitlines() if "not implemented" in line)
        case["mxnet_error"] = line[line.index("Operator not implemented"):]  # without the time of day
        dense_inputs = [a.tostype("default") for a in make()]
        loss, grads = chain_backward(reference, dense_inputs, [g and "default" for g in grad_stypes], grad_req,
                                     passes)
        for g, stype in zip(grads, grad_stypes):
            if g is not None:
                g["stype"] = stype  # weft converts into the buffer's storage type, as MXNet does
                g.pop("indices", None)
                g.pop("data", None)
    case["loss"] = describe(loss)
    case["grads"] = grads
    return case


def one_case(kind, i):
    """Runs case i of `kind` in a fresh process; returns it with `warns`."""
    with tempfile.TemporaryFile("w+") as err:
        out = subprocess.run([sys.executable, __file__, "--case", kind, str(i)], stdout=subprocess.PIPE,
                             stderr=err, check=True, text=True).stdout
        err.seek(0)
        case = json.loads(out)
        case["warns"] = "Storage type fallback detected" in err.read()
    return case


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--case":
        i = int(sys.argv[3])
        if sys.argv[2] == "chain":
            print(json.dumps(run_chain(i, reference_on_error=True)))
        else:
            print(json.dumps((run_forward if sys.argv[2] == "forward" else run_backward)(i)))
        return
    out = {"forward": [one_case("forward", i) for i in range(len(forward_cases()))],
           "backward": [one_case("backward", i) for i in range(len(backward_cases()))],
           "chain": [one_case("chain", i) for i in range(len(chain_cases()))]}
    os.makedirs(HERE, exist_ok=True)
    with open(os.path.join(HERE, "sparse_ops.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
