#!/usr/bin/env python3
"""Writes the sparse NDArray fixtures under tests/ndarray/data/ with the real MXNet 1.9.1.

Run by hand (the tests only read the files; they never need MXNet):

    MXNET_SUBGRAPH_BACKEND=NONE /work/mxvenv/bin/python tests/ndarray/gen_sparse_fixtures.py

Files (all deterministic):
  sparse_mxnet.params  mx.nd.save of a dict of row_sparse and csr arrays (names in sorted order,
                       as weft's NDArray::Save writes a map, so that weft can rewrite the file and
                       compare bytes): built from parts and from dense, empty ones, an empty csr
                       row, float64/int32/float16 values, a 3-d row_sparse, and one dense array.
  sparse_dense.params  the same names, each array converted by MXNet's tostype('default').
  sparse_parts.json    per sparse name: stype, shape, and the data/indices/indptr MXNet reports.
"""
import json
import os

import numpy as np

os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
import mxnet as mx  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def arrays():
    rs = np.random.RandomState(30)
    dense_rsp = np.zeros((6, 3), dtype=np.float32)
    dense_rsp[[1, 4]] = rs.uniform(-2, 2, (2, 3)).astype(np.float32)
    dense_csr = np.array([[0, 1.5, 0, -2], [0, 0, 0, 0], [3.25, 0, 0, 4]], dtype=np.float64)
    out = {
        "csr_empty": mx.nd.sparse.zeros("csr", (2, 5)),
        "csr_f64_from_dense": mx.nd.array(dense_csr, dtype="float64").tostype("csr"),
        "csr_f32_parts": mx.nd.sparse.csr_matrix(
            (np.array([1, 2, 3, 4, 5], dtype=np.float32), np.array([0, 3, 1, 2, 3]), np.array([0, 2, 2, 5])),
            shape=(3, 4)),
        "csr_i32_parts": mx.nd.sparse.csr_matrix(
            (np.array([7, -8], dtype=np.int32), np.array([4, 0]), np.array([0, 1, 2])), shape=(2, 6),
            dtype="int32"),
        "dense": mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "rsp_3d": mx.nd.sparse.row_sparse_array(
            (rs.uniform(-1, 1, (2, 2, 2)).astype(np.float64), np.array([0, 5])), shape=(6, 2, 2),
            dtype="float64"),
        "rsp_empty": mx.nd.sparse.zeros("row_sparse", (4, 3)),
        "rsp_f16_parts": mx.nd.sparse.row_sparse_array(
            (np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float16), np.array([1, 2, 7])), shape=(8, 2),
            dtype="float16"),
        "rsp_f32_from_dense": mx.nd.array(dense_rsp).tostype("row_sparse"),
    }
    return dict(sorted(out.items()))


def main():
    os.makedirs(HERE, exist_ok=True)
    a = arrays()
    mx.nd.save(os.path.join(HERE, "sparse_mxnet.params"), a)
    mx.nd.save(os.path.join(HERE, "sparse_dense.params"), {k: v.tostype("default") for k, v in a.items()})
    parts = {}
    for k, v in a.items():
        if v.stype == "default":
            continue
        p = {"stype": v.stype, "shape": list(v.shape), "dtype": str(np.dtype(v.dtype)),
             "data": v.data.asnumpy().astype(np.float64).ravel().tolist(), "indices": v.indices.asnumpy().tolist()}
        if v.stype == "csr":
            p["indptr"] = v.indptr.asnumpy().tolist()
        parts[k] = p
    with open(os.path.join(HERE, "sparse_parts.json"), "w") as f:
        json.dump(parts, f, indent=1, sort_keys=True)
        f.write("\n")
    # MXNet reads back what it wrote (the same check weft's test makes on weft's rewrite).
    back = mx.nd.load(os.path.join(HERE, "sparse_mxnet.params"))
    for k, v in a.items():
        assert back[k].stype == v.stype
        np.testing.assert_array_equal(back[k].asnumpy(), v.asnumpy())


if __name__ == "__main__":
    main()
