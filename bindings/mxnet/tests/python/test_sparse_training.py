"""Sparse operators on weft's sparse kernels (SDK 2.1), seen from MXNet's unmodified Python: dot of
a csr lhs runs without MXNet's storage-fallback warning (no dense copy of the csr) and gives the
dense dot's values; so does dense·csr, while dense·csrᵀ, which MXNet has no kernel for either,
falls back with the warning; and the benchmark's training program (bench/sparse: LibSVMIter,
sparse.dot, row_sparse gradients, lazy Adam through a local KVStore) learns a planted model from
a tiny generated file. Each case runs in
its own process, since the warning is printed once per operator and process."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BENCH = os.path.join(ROOT, "bench", "sparse")
FALLBACK = "Storage type fallback detected"


def run_python(code):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def test_csr_dot_runs_on_the_sparse_kernel():
    out = run_python("""
        import mxnet as mx, numpy as np
        assert 'weft' in mx.base._LIB._name
        rng = np.random.RandomState(0)
        d = (rng.rand(40, 30) < 0.1) * rng.randn(40, 30)
        d[5] = 0
        x = mx.nd.array(d).tostype('csr')
        r, g = rng.randn(30, 4), rng.randn(40, 4)
        y = mx.nd.sparse.dot(x, mx.nd.array(r))
        assert y.stype == 'default'
        np.testing.assert_allclose(y.asnumpy(), d.dot(r), rtol=1e-4, atol=1e-5)
        t = mx.nd.sparse.dot(x, mx.nd.array(g), transpose_a=True)
        assert t.stype == 'row_sparse'
        np.testing.assert_array_equal(t.indices.asnumpy(), np.unique(x.indices.asnumpy()))
        np.testing.assert_allclose(t.asnumpy(), d.T.dot(g), rtol=1e-4, atol=1e-5)
    """)
    assert FALLBACK not in out.stderr, out.stderr


def test_dense_times_csr_runs_on_the_sparse_kernel_and_its_transpose_falls_back():
    # MXNet 1.9.1 on the cpu: dense·csr has a kernel (csr result storing the csr's columns in
    # every row); dense·csrᵀ has none and falls back with the warning (a csr of the non-zeros).
    code = """
        import mxnet as mx, numpy as np
        rng = np.random.RandomState(1)
        a, b = rng.randn(3, 4), (rng.rand(4, 5) < 0.5) * rng.randn(4, 5)
        b[:, 2] = 0
        y = mx.nd.sparse.dot(mx.nd.array(a), mx.nd.array(b).tostype('csr'){}).tostype('default')
        np.testing.assert_allclose(y.asnumpy(), a.dot(b{}), rtol=1e-4, atol=1e-5)
    """
    out = run_python(code.format("", ""))
    assert FALLBACK not in out.stderr, out.stderr
    out = run_python(code.format(", transpose_b=True", ".T").replace("rng.randn(3, 4)", "rng.randn(3, 5)"))
    assert FALLBACK in out.stderr


@pytest.mark.parametrize("model", ["linear", "fm"])
def test_the_benchmark_program_learns_a_planted_model(tmp_path, model):
    gen = subprocess.run([sys.executable, os.path.join(BENCH, "gen_libsvm.py"), "--out", str(tmp_path), "--rows", "6000",
                          "--test-rows", "2000", "--features", "20000", "--nnz", "20", "--signal", "1000"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert gen.returncode == 0, gen.stderr
    train = subprocess.run([sys.executable, os.path.join(BENCH, "train_sparse.py"), "--data", str(tmp_path), "--model",
                            model, "--expect", "weft", "--epochs", "3", "--batch", "64", "--lr", "0.02"],
                           capture_output=True, text=True, timeout=600, check=False)
    assert train.returncode == 0, train.stderr[-3000:]
    result = json.loads(train.stdout.strip().splitlines()[-1])
    assert result["accuracy"] > 0.62, result  # chance is 0.5 (balanced classes)
    # Every dot of the program (csr·dense, csrᵀ·dense) ran on the sparse kernel.
    assert FALLBACK not in train.stderr, train.stderr[-3000:]


def test_exit_while_a_libsvm_iter_is_mid_epoch_is_clean(tmp_path):
    # Issue 30: "pure virtual method called" at exit with a LibSVMIter mid-epoch. The iterator is
    # leaked on purpose (Python never frees it, as with a reference held by a C extension), its
    # loader kept busy (small batches, a deep queue): exit must stop it before the engine and the
    # plugins shut down. And after MXNotifyShutdown an iterator refuses to go on, by name.
    lines = "".join(f"{i % 2} {i % 50}:0.5 {50 + i % 50}:1.25\n" for i in range(30000))
    (tmp_path / "d.t").write_text(lines)
    out = run_python(f"""
        import ctypes, mxnet as mx
        it = mx.io.LibSVMIter(data_libsvm={str(tmp_path / 'd.t')!r}, data_shape=(100,), batch_size=4,
                              prefetch_buffer=100000)
        next(it)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(it))
    """)
    assert out.stderr == "", out.stderr
    out = run_python(f"""
        import mxnet as mx
        it = mx.io.LibSVMIter(data_libsvm={str(tmp_path / 'd.t')!r}, data_shape=(100,), batch_size=4)
        next(it)
        mx.base._LIB.MXNotifyShutdown()
        try:
            next(it)
        except mx.base.MXNetError as e:
            assert "the process is shutting down" in str(e), e
        else:
            raise AssertionError("next() after MXNotifyShutdown gave a batch")
    """)
    assert out.stderr == "", out.stderr
