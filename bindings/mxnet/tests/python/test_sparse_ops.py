"""dot(dense, csr), dot(csr, row_sparse), sparse.retain and _square_sum of row_sparse arrays from
MXNet's unmodified Python on weft, against MXNet 1.9.1's own results (tests/operator/data/
sparse_ops.json, written by tests/operator/gen_sparse_ops_fixtures.py): each case runs in its own
process, as the generator ran it on the real libmxnet, so that MXNet's storage-fallback warning
(printed once per message and process) is seen exactly where MXNet printed it. Forward: the
output's storage type, stored rows / indptr and indices, and values. Gradients (autograd records
the sparse kernels' calls): the recorded output as in the forward cases, each gradient's storage
type, stored rows and values (except where MXNet leaves a gradient zero), and, in chains of ops
inside one record(), each variable's gradient."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
GEN = os.path.join(ROOT, "tests", "operator", "gen_sparse_ops_fixtures.py")
with open(os.path.join(ROOT, "tests", "operator", "data", "sparse_ops.json")) as f:
    FIXTURES = json.load(f)
FALLBACK = "Storage type fallback detected"


def run_case(kind, i):
    """Runs the generator's case on weft (this process's MXNET_LIBRARY_PATH): (its result, stderr)."""
    code = textwrap.dedent("""
        import importlib.util, json, sys
        import mxnet
        assert 'weft' in mxnet.base._LIB._name
        spec = importlib.util.spec_from_file_location("gen", sys.argv[1])
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        run = {"forward": gen.run_forward, "backward": gen.run_backward, "chain": gen.run_chain}[sys.argv[2]]
        print(json.dumps(run(int(sys.argv[3]))))
    """)
    out = subprocess.run([sys.executable, "-c", code, GEN, kind, str(i)], capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def expect_like(got, want, what, parts=True):
    assert got["stype"] == want["stype"], what
    assert got["shape"] == want["shape"], what
    if parts:
        assert got.get("indices") == want.get("indices"), what
        assert got.get("indptr") == want.get("indptr"), what
    np.testing.assert_allclose(got["dense"], want["dense"], rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("i", range(len(FIXTURES["forward"])), ids=[c["name"] for c in FIXTURES["forward"]])
def test_sparse_op_matches_mxnet(i):
    want = FIXTURES["forward"][i]
    got, err = run_case("forward", i)
    # The fallback cases give MXNet's storage type, made of the dense result's non-zero entries
    # as MXNet's fallback does, so their parts match too.
    expect_like(got["output"], want["output"], want["name"])
    assert (FALLBACK in err) == want["warns"], err[-2000:]


@pytest.mark.parametrize("i", range(len(FIXTURES["backward"])), ids=[c["name"] for c in FIXTURES["backward"]])
def test_sparse_op_gradient_matches_mxnet(i):
    want = FIXTURES["backward"][i]
    got, err = run_case("backward", i)
    expect_like(got["output"], want["output"], want["name"])
    # MXNet warns in none of these (its sparse zeros for the gradient buffers included).
    assert (FALLBACK in err) == want["warns"], err[-2000:]
    for k, (g, w) in enumerate(zip(got["grads"], want["grads"])):
        if w is None or k in want["mxnet_zero"]:
            continue
        expect_like(g, w, "%s gradient %d" % (want["name"], k))


@pytest.mark.parametrize("i", range(len(FIXTURES["chain"])), ids=[c["name"] for c in FIXTURES["chain"]])
def test_sparse_chain_gradient_matches_mxnet(i):
    # Where MXNet cannot run the chain's backward (mxnet_error), weft's tape can (it hands
    # _backward_sparse_retain a dense out_grad), and the fixture holds MXNet's gradients of the same
    # loss written with dense ops: values and storage type then, not stored rows. MXNet's
    # warnings are not compared: weft runs a backward no sparse kernel claims on dense copies
    # without one.
    want = FIXTURES["chain"][i]
    got, _ = run_case("chain", i)
    expect_like(got["loss"], want["loss"], want["name"] + " loss")
    for k, (g, w) in enumerate(zip(got["grads"], want["grads"])):
        if w is not None:
            expect_like(g, w, "%s gradient %d" % (want["name"], k), parts=want["mxnet_error"] is None)


def test_bad_sparse_inputs_are_refused_by_name(mx):
    # A row_sparse array whose indices are not sorted (made from parts, which only check shapes),
    # a retained row outside data, and shapes that do not fit: errors naming the array and where.
    unsorted = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [3, 1]), shape=(5, 2))
    with pytest.raises(mx.base.MXNetError, match=r"row_sparse data's index 1 at position 1"):
        mx.nd._internal._square_sum(unsorted, axis=1, keepdims=True).wait_to_read()
    data = mx.nd.sparse.row_sparse_array(([[1, 2]], [1]), shape=(4, 2))
    with pytest.raises(mx.base.MXNetError, match=r"indices\[1\] = 4.* is not a row of data"):
        mx.nd.sparse.retain(data, mx.nd.array([0, 4])).wait_to_read()
    csr = mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1, 1, 1]), shape=(3, 4))
    with pytest.raises(mx.base.MXNetError, match=r"lhs.*rhs"):
        mx.nd.sparse.dot(mx.nd.ones((1, 2)), csr).wait_to_read()
