"""Operators and behaviours MXNet 1.9.1's own unit tests reach for (test_random, test_ndarray,
test_symbol, test_infer_shape, test_loss), through MXNet's unmodified frontend on weft. Expected
values are MXNet 1.9.1's (checked against the real libmxnet when these tests were written)."""
import numpy as np
import pytest


def test_samplers_take_parameter_arrays(mx):
    # mx.nd.random.* with NDArray parameters call _sample_*: shape params.shape + shape, float32.
    lo = mx.nd.array([[0, 2.5], [-9.75, -1.0]])
    hi = mx.nd.array([[1, 3.7], [4.2, 10.5]])
    mx.random.seed(128)
    a = mx.nd.random.uniform(lo, hi, shape=(20000,))
    mx.random.seed(128)
    b = mx.nd.random.uniform(lo, hi, shape=(20000,))
    assert a.shape == (2, 2, 20000) and a.dtype == np.float32
    assert (a.asnumpy() == b.asnumpy()).all()
    mean = a.asnumpy().mean(axis=2)
    assert np.abs(mean - (lo + hi).asnumpy() / 2).max() < 0.1
    x = mx.nd.random.negative_binomial(mx.nd.array([3.0, 6.0]), mx.nd.array([0.4, 0.84]), shape=20000).asnumpy()
    assert np.abs(x.mean(axis=1) - [4.5, 6 * 0.16 / 0.84]).max() < 0.15
    s = mx.sym.random.gamma(mx.sym.var('a'), mx.sym.var('b'), shape=(3,))
    assert s.infer_shape(a=(2,), b=(2,))[1] == [(2, 3)]


def test_multinomial_seeds_and_log_probability_gradient(mx):
    probs = mx.nd.array([0.125, 0.25, 0.25, 0.0625, 0.125, 0.1875], dtype='float16')
    mx.random.seed(1234)
    s1 = mx.nd.random.multinomial(data=probs, shape=1000)
    mx.random.seed(1234)
    s2 = mx.nd.random.multinomial(data=probs, shape=1000)
    assert s1.dtype == np.int32 and (s1.asnumpy() == s2.asnumpy()).all()
    # With get_prob the log-probabilities' gradient is 1/p at each draw (MXNet's: [[0, 3.75], ...]).
    p = mx.nd.array([[0.0, 1.0], [0.5, 0.5]])
    p.attach_grad()
    with mx.autograd.record():
        idx, logp = mx.nd.random.multinomial(p, shape=3, get_prob=True)
    logp.backward()
    drawn = idx.asnumpy()
    want = np.zeros((2, 2))
    for r in range(2):
        for c in drawn[r]:
            want[r, c] += 1 / p.asnumpy()[r, c]
    assert (drawn[0] == 1).all()
    assert np.allclose(p.grad.asnumpy(), want)
    assert np.allclose(logp.asnumpy(), np.log(np.take_along_axis(p.asnumpy(), drawn, 1)))


def test_shuffle_permutes_rows(mx):
    a = mx.nd.arange(12).reshape((4, 3))
    b = mx.nd.random.shuffle(a).asnumpy()
    assert sorted(b[:, 0].tolist()) == [0, 3, 6, 9]
    assert (b[:, 1] == b[:, 0] + 1).all()


def test_batch_take_has_no_gradient_unless_stopped(mx):
    # MXNet's test_zero_prop2: behind stop_gradient batch_take binds and runs backward without
    # head gradients; as a head it cannot be bound with gradients.
    x, idx = mx.sym.var('x'), mx.sym.var('idx')
    y = mx.sym.batch_take(x, idx)
    types = {'x': np.float32, 'idx': np.int32}
    exe = mx.sym.stop_gradient(y).simple_bind(ctx=mx.cpu(), x=(3, 2), idx=(3,), type_dict=types)
    exe.arg_dict['x'][:] = mx.nd.arange(6).reshape((3, 2))
    exe.arg_dict['idx'][:] = mx.nd.array([-1, 1, 5], dtype='int32')
    exe.forward()
    exe.backward()
    assert exe.outputs[0].asnumpy().tolist() == [0, 3, 5]  # positions clipped, as MXNet
    assert (exe.grad_dict['x'].asnumpy() == 0).all()
    # MXNet's simple_bind re-raises the library's error as RuntimeError, the message kept.
    with pytest.raises(RuntimeError, match="operator 'batch_take' is not differentiable"):
        y.simple_bind(ctx=mx.cpu(), x=(3, 2), idx=(3,), type_dict=types)


def test_legacy_ndarray_functions(mx):
    a = mx.nd.arange(6).reshape((3, 2))
    assert mx.nd.choose_element_0index(a, mx.nd.array([0, 1, 1])).asnumpy().tolist() == [0, 3, 5]
    got = mx.nd.fill_element_0index(a, mx.nd.array([7, 8, 9]), mx.nd.array([-1, 0, 1.7]))
    assert got.asnumpy().tolist() == [[0, 1], [8, 3], [4, 9]]
    # A NumPy scalar becomes a 0-d array (MXNet's array() reshapes its (1,) array to ()).
    s = mx.nd.array(np.ones([]))
    assert s.shape == () and s.asnumpy() == 1


def test_backward_shape_inference_through_identity_with_attr_like_rhs(mx):
    w, wshift = mx.sym.var('weight'), mx.sym.var('wshift', shape=(1,))
    wt = mx.symbol._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, wshift), w)
    net = mx.sym.FullyConnected(data=mx.sym.var('data'), weight=wt, num_hidden=11, no_bias=True)
    args, _, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), args))['weight'] == (11, 100)


def test_ops_without_parameters_keep_any_attribute(mx):
    # Gluon's cosine loss calls broadcast_maximum(..., axis=1); MXNet keeps and ignores it.
    got = mx.nd.broadcast_maximum(mx.nd.array([0]), mx.nd.array([[1, -1]]), axis=1)
    assert got.asnumpy().tolist() == [[1, 0]]
    assert '"axis": "1"' in mx.sym.broadcast_maximum(mx.sym.var('a'), mx.sym.var('b'), axis=1).tojson()
    with pytest.raises(mx.base.MXNetError, match="has no attribute 'foo'"):
        mx.nd.sum(mx.nd.ones(2), foo=1)


def test_partial_shapes_as_mxnet(mx):
    x, y, c = mx.sym.var('x'), mx.sym.var('y'), mx.sym.var('cond')
    z = mx.sym.batch_dot(x, y)
    assert z.infer_shape_partial(x=(0, 3, 4), y=(0, 4, 5))[1] == [(0, 3, 5)]
    assert z.infer_shape_partial(x=(0, 3, 4), y=(0, 0, 5))[1] == [()]
    w = mx.sym.where(c, x, y)
    assert w.infer_shape_partial(cond=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]
    assert w.infer_shape_partial(cond=(2, 2), x=(0, 2))[1] == [(0, 2)]
    # A consumer's known part gives SliceChannel's data its unknown extent.
    a = mx.sym.var('a', shape=(0, 10))
    d = mx.sym.SliceChannel(a, num_outputs=10, axis=1, squeeze_axis=True)[1] + mx.sym.var('c', shape=(5,))
    assert dict(zip(d.list_arguments(), d.infer_shape()[0]))['a'] == (5, 10)


def test_nd_indexing_with_integer_indices(mx):
    # gather_nd / scatter_nd take indices of their own dtype (advanced indexing passes int32).
    data = mx.nd.arange(6).reshape((3, 2))
    data.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(data, mx.nd.array([[2, 0, -1]], dtype='int32'))
    y.backward(mx.nd.ones_like(y))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.asnumpy(), [[4, 5], [0, 1], [4, 5]])
    np.testing.assert_array_equal(data.grad.asnumpy(), [[1, 1], [0, 0], [2, 2]])
    z = mx.nd.scatter_nd(mx.nd.array([1, 2], dtype='float16'), mx.nd.array([[0, 2]], dtype='int64'), shape=(3,))
    assert z.dtype == np.float16
    np.testing.assert_array_equal(z.asnumpy(), [1, 0, 2])
    x = mx.nd.zeros((3, 4))
    x[mx.nd.array([0, 2], dtype='int32'), mx.nd.array([1, 3], dtype='int32')] = 7
    np.testing.assert_array_equal(x[[0, 2], [1, 3]].asnumpy(), [7, 7])
    s = mx.sym.gather_nd(mx.sym.var('d'), mx.sym.var('i'))
    assert s.infer_type(d='float64', i='int32')[0] == [np.float64, np.int32]


def test_contrib_allclose_as_assert_almost_equal_uses_it(mx):
    a = mx.nd.array([1, 2, np.nan])
    b = mx.nd.array([1, 2.00001, np.nan])
    flag = mx.nd.contrib.allclose(a, b)
    assert flag.shape == () and flag.dtype == np.uint8 and flag.asscalar() == 1
    assert mx.nd.contrib.allclose(a, b, equal_nan=False).asscalar() == 0
    assert mx.nd.contrib.allclose(a, b, rtol=0, atol=0).asscalar() == 0
    # test_utils.assert_almost_equal compares two arrays of one context and dtype with it.
    mx.test_utils.assert_almost_equal(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) + 1e-7)
    with pytest.raises(AssertionError):
        mx.test_utils.assert_almost_equal(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 1.1)
    with pytest.raises(mx.base.MXNetError, match="'b'"):
        mx.nd.contrib.allclose(mx.nd.ones((2, 3)), mx.nd.ones((3, 2)))


def test_linalg_gelqf_forward_and_gradient(mx):
    # MXNet's documented example (signs included), then the gradient of test_infer_type's
    # sum(L) against MXNet's formula dA = L^-T (dQ + copyltu(L^T dL - dQ Q^T) Q) in NumPy.
    a = mx.nd.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]], dtype='float64')
    a.attach_grad()
    with mx.autograd.record():
        q, l = mx.nd.linalg.gelqf(a)
        s = mx.nd.sum(l)
    s.backward()
    np.testing.assert_allclose(q.asnumpy()[1], [[-0.50257071, -0.57436653, -0.64616234],
                                                [0.7620735, 0.05862104, -0.64483142]], rtol=1e-7)
    np.testing.assert_allclose(l.asnumpy()[0], [[-3.74165739, 0.], [-8.55235974, 1.96396101]], rtol=1e-7)
    for b in range(2):
        qb, lb = q.asnumpy()[b], l.asnumpy()[b]
        m = lb.T @ np.ones((2, 2))
        want = np.linalg.solve(lb.T, (np.tril(m) + np.tril(m, -1).T) @ qb)
        np.testing.assert_allclose(a.grad.asnumpy()[b], want, rtol=1e-10)
    sym = mx.sym.linalg.gelqf(mx.sym.var('a'))
    assert sym.infer_shape(a=(4, 2, 3))[1] == [(4, 2, 3), (4, 2, 2)]
    with pytest.raises(mx.base.MXNetError, match='Last dimension must be >= than second to last'):
        mx.nd.linalg.gelqf(mx.nd.ones((3, 2)))
