"""NDArray calls of the C API through mx.nd: creation, dtypes, views, files, DLPack."""
import numpy as np
import pytest


def test_dtypes_round_trip(mx):
    for dtype in ['float32', 'float64', 'float16', 'uint8', 'int8', 'int32', 'int64']:
        x = np.arange(6).reshape(2, 3).astype(dtype)
        a = mx.nd.array(x, dtype=dtype)
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(a.asnumpy(), x)


def test_views_share_memory(mx):
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    row = a[1]
    np.testing.assert_array_equal(row.asnumpy(), [4, 5, 6, 7])
    part = a[1:3]
    assert part.shape == (2, 4)
    r = a.reshape((4, 3))
    assert r.shape == (4, 3)
    np.testing.assert_array_equal(a.reshape((-1,)).asnumpy(), np.arange(12))
    np.testing.assert_array_equal(a.reshape((0, -1)).asnumpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(a.reshape((-3,)).asnumpy(), np.arange(12))


def test_save_load_list_and_dict(mx, tmp_path):
    a, b = mx.nd.array([1, 2]), mx.nd.array([[3.5]])
    mx.nd.save(str(tmp_path / 'l.params'), [a, b])
    la = mx.nd.load(str(tmp_path / 'l.params'))
    assert isinstance(la, list) and len(la) == 2
    np.testing.assert_array_equal(la[1].asnumpy(), [[3.5]])
    mx.nd.save(str(tmp_path / 'd.params'), {'x': a, 'y': b})
    ld = mx.nd.load(str(tmp_path / 'd.params'))
    assert sorted(ld) == ['x', 'y']
    np.testing.assert_array_equal(ld['x'].asnumpy(), [1, 2])


def test_pickle_uses_raw_bytes(mx):
    import pickle
    a = mx.nd.array([[1, 2], [3, 4]])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


def test_dlpack_shares_memory_both_ways(mx):
    a = mx.nd.array([1, 2, 3])
    b = mx.nd.from_dlpack(a.to_dlpack_for_write())
    b += 1
    np.testing.assert_array_equal(a.asnumpy(), [2, 3, 4])  # the same memory
    c = mx.nd.from_dlpack(mx.nd.array([[1, 2], [3, 4]], dtype='float64').to_dlpack_for_read())
    assert c.dtype == np.float64 and c.shape == (2, 2)
    np.testing.assert_array_equal(c.asnumpy(), [[1, 2], [3, 4]])


def test_context_and_waits(mx):
    a = mx.nd.zeros((2, 2), ctx=mx.cpu(0))
    assert a.context == mx.cpu(0)
    a.wait_to_read()
    mx.nd.waitall()
    assert a.stype == 'default'


def test_basic_index_assignment(mx):
    # x[a:b] = y on a 2-d array: MXNet's frontend passes step=(None, None) to _slice_assign.
    import numpy as np
    x = mx.nd.zeros((6, 3))
    x[1:3] = mx.nd.ones((2, 3))
    x[4:, 1:] = 7
    x[::5, 0] = mx.nd.array([5, 5])
    expected = np.zeros((6, 3))
    expected[1:3] = 1
    expected[4:, 1:] = 7
    expected[::5, 0] = 5
    np.testing.assert_array_equal(x.asnumpy(), expected)
    np.testing.assert_array_equal(x[1:6:2].asnumpy(), expected[1:6:2])
