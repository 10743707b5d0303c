"""Bad use gives MXNet's error path (an MXNetError with weft's message), never a crash."""
import ctypes

import numpy as np
import pytest


def last_error(mx):
    return mx.base.py_str(mx.base._LIB.MXGetLastError())


def test_null_handle(mx):
    out = ctypes.c_int()
    assert mx.base._LIB.MXNDArrayGetDType(None, ctypes.byref(out)) == -1
    assert 'NDArrayHandle is NULL' in last_error(mx)


def test_freed_handle(mx):
    a = mx.nd.ones((2,))
    handle = ctypes.c_void_p(a.handle.value)
    mx.base.check_call(mx.base._LIB.MXNDArrayFree(handle))
    a.handle = None  # the frontend must not free it again
    out = ctypes.c_int()
    assert mx.base._LIB.MXNDArrayGetDType(handle, ctypes.byref(out)) == -1
    assert 'invalid NDArrayHandle' in last_error(mx) and 'freed' in last_error(mx)


def test_handle_of_another_kind(mx):
    s = mx.sym.Variable('x')
    out = ctypes.c_int()
    assert mx.base._LIB.MXNDArrayGetDType(s.handle, ctypes.byref(out)) == -1
    assert 'it is a SymbolHandle' in last_error(mx)


def test_mixed_key_types(mx):
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.ones((2,)))
    with pytest.raises(mx.base.MXNetError, match='(?i)key'):
        kv.init('a', mx.nd.ones((2,)))


def test_mismatched_shapes(mx):
    with pytest.raises(mx.base.MXNetError, match=r'\(2, 3\).*\(3, 2\)|\(3, 2\).*\(2, 3\)'):
        (mx.nd.ones((2, 3)) + mx.nd.ones((3, 2))).asnumpy()
    kv = mx.kv.create('local')
    kv.init(5, mx.nd.ones((2, 3)))
    with pytest.raises(mx.base.MXNetError, match='shape'):
        kv.push(5, mx.nd.ones((3, 3)))


def test_unknown_op_attribute(mx):
    with pytest.raises(mx.base.MXNetError, match="has no attribute 'num_hiden'.*did you mean 'num_hidden'"):
        mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((3, 2)), mx.nd.ones((3,)), num_hiden=3)


def test_bad_attribute_value(mx):
    with pytest.raises(mx.base.MXNetError, match="act_type"):
        mx.nd.Activation(mx.nd.ones((2,)), act_type='reluu')


def test_python_updater_that_raises(mx):
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.zeros((2,)))

    def update(key, grad, weight):
        raise ValueError('the updater failed on purpose')

    kv._set_updater(update)
    with pytest.raises(mx.base.MXNetError, match='the updater failed on purpose'):
        kv.push(3, mx.nd.ones((2,)))


def test_updater_errors_after_good_pushes_and_a_new_unraisable_hook(mx, monkeypatch):
    """The hook that records a callback's exception is installed once and found again on later calls
    (without being run again); a hook the program sets afterwards is wrapped anew, and still called."""
    import sys
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.zeros((2,)))
    fail = []

    def update(key, grad, weight):
        if fail:
            raise ValueError(fail[-1])
        weight += grad

    kv._set_updater(update)
    for _ in range(3):
        kv.push(3, mx.nd.ones((2,)))
    fail.append('failed after three good pushes')
    with pytest.raises(mx.base.MXNetError, match='failed after three good pushes'):
        kv.push(3, mx.nd.ones((2,)))
    seen = []
    monkeypatch.setattr(sys, 'unraisablehook', lambda u: seen.append(str(u.exc_value)))
    fail.append('failed under the new hook')
    with pytest.raises(mx.base.MXNetError, match='failed under the new hook'):
        kv.push(3, mx.nd.ones((2,)))
    assert seen == ['failed under the new hook']
    fail.clear()
    kv.push(3, mx.nd.ones((2,)))
    out = mx.nd.zeros((2,))
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), [4, 4])


def test_engine_error_surfaces_at_wait_and_engine_goes_on(mx):
    x = mx.nd.ones((2, 2))
    w = mx.nd.ones((3, 5))  # wrong inner size: refused at the call, nothing pushed
    with pytest.raises(mx.base.MXNetError, match='FullyConnected'):
        mx.nd.FullyConnected(x, w, num_hidden=3, no_bias=True)
    np.testing.assert_array_equal((x * 2).asnumpy(), np.full((2, 2), 2))
