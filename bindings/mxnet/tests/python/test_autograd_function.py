"""mx.autograd.Function (a forward run imperatively, a backward written by the user) through MXNet's
own Python package on weft: MXCustomFunctionRecord records the call, Backward calls the user's
backward, and the tape frees the Function once its node goes. Expected gradients are analytic."""
import gc
import weakref

import numpy as np
import pytest


def _sigmoid_class(mx):
    class Sigmoid(mx.autograd.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)
    return Sigmoid


def test_sigmoid_uses_saved_tensors(mx):
    x_np = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=np.float32)
    x = mx.nd.array(x_np)
    x.attach_grad()
    head = mx.nd.array([1.0, 2.0, 3.0, 4.0, 5.0])
    with mx.autograd.record():
        y = _sigmoid_class(mx)()(x)
    y.backward(head)
    s = 1 / (1 + np.exp(-x_np))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), head.asnumpy() * s * (1 - s), rtol=1e-5)


def test_two_inputs_two_outputs(mx):
    class MulAdd(mx.autograd.Function):
        # (a, b) -> (a * b, a + 2b)
        def forward(self, a, b):
            self.save_for_backward(a, b)
            return a * b, a + 2 * b

        def backward(self, dp, dq):
            a, b = self.saved_tensors
            return dp * b + dq, dp * a + 2 * dq

    a_np = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    b_np = np.array([0.5, 4.0, -1.0], dtype=np.float32)
    a, b = mx.nd.array(a_np), mx.nd.array(b_np)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        p, q = MulAdd()(a, b)
        loss = 3 * p + q * q
    loss.backward()
    dq = 2 * (a_np + 2 * b_np)
    np.testing.assert_allclose(a.grad.asnumpy(), 3 * b_np + dq, rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), 3 * a_np + 2 * dq, rtol=1e-5)


def test_only_one_output_used(mx):
    # No gradient flows into q: its ograd is zeros, and only b needs a gradient.
    class Pair(mx.autograd.Function):
        def forward(self, a, b):
            return a * 2, b * 3

        def backward(self, dp, dq):
            return dp * 2, dq * 3

    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    b.attach_grad()
    with mx.autograd.record():
        p, q = Pair()(b, a)
    p.backward()
    np.testing.assert_allclose(b.grad.asnumpy(), [2.0, 2.0])


def test_function_inside_a_recorded_graph(mx):
    rng = np.random.RandomState(3)
    x_np = rng.randn(4, 5).astype(np.float32)
    w1_np = rng.randn(3, 5).astype(np.float32)
    w2_np = rng.randn(2, 3).astype(np.float32)
    x, w1, w2 = mx.nd.array(x_np), mx.nd.array(w1_np), mx.nd.array(w2_np)
    w1.attach_grad()
    w2.attach_grad()
    with mx.autograd.record():
        h = mx.nd.FullyConnected(x, w1, num_hidden=3, no_bias=True)
        s = _sigmoid_class(mx)()(h)
        out = mx.nd.FullyConnected(s, w2, num_hidden=2, no_bias=True)
        loss = out.sum()
    loss.backward()
    h_np = x_np @ w1_np.T
    s_np = 1 / (1 + np.exp(-h_np))
    d_out = np.ones((4, 2), dtype=np.float32)
    np.testing.assert_allclose(w2.grad.asnumpy(), d_out.T @ s_np, rtol=1e-4, atol=1e-5)
    d_h = (d_out @ w2_np) * s_np * (1 - s_np)
    np.testing.assert_allclose(w1.grad.asnumpy(), d_h.T @ x_np, rtol=1e-4, atol=1e-5)


def test_backward_that_raises_is_an_mxnet_error(mx):
    class Broken(mx.autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            raise ValueError('broken backward')

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = Broken()(x)
    with pytest.raises(mx.base.MXNetError, match='autograd.Function.backward failed'):
        y.backward()
    # The error did not leave the library in a bad state.
    with mx.autograd.record():
        z = x * 3
    z.backward()
    assert x.grad.asnumpy().tolist() == [3.0, 3.0]


def test_backward_returning_a_wrong_count_is_an_mxnet_error(mx):
    class TooFew(mx.autograd.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, dy):
            return dy

    a, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    a.attach_grad()
    with mx.autograd.record():
        y = TooFew()(a, b)
    with pytest.raises(mx.base.MXNetError):
        y.backward()


def _collect(mx):
    # Work pushed on the graph's arrays may hold them until it has run.
    mx.nd.waitall()
    gc.collect()


def test_function_freed_after_backward(mx):
    # The Function saves its output, so it refers to its own node: a backward without
    # retain_graph releases it (the delete callback), which breaks that cycle.
    x = mx.nd.array([0.5, -0.5])
    x.attach_grad()
    f = _sigmoid_class(mx)()
    ref = weakref.ref(f)
    with mx.autograd.record():
        y = f(x)
    del f
    _collect(mx)
    assert ref() is not None  # the tape still holds it
    y.backward()
    _collect(mx)
    assert ref() is None
    assert not mx.autograd.Function._registry.ref_holder


def test_function_freed_with_its_graph(mx):
    class Double(mx.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * 2

        def backward(self, dy):
            return dy * 2

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    f = Double()
    ref = weakref.ref(f)
    with mx.autograd.record():
        y = f(x)
        z = y + 1
    del f
    _collect(mx)
    assert ref() is not None
    del y
    _collect(mx)
    assert ref() is not None  # z still refers into the graph
    del z
    _collect(mx)
    assert ref() is None
    assert not mx.autograd.Function._registry.ref_holder


def test_not_recorded_when_no_input_needs_a_gradient(mx):
    f = _sigmoid_class(mx)()
    ref = weakref.ref(f)
    x = mx.nd.array([0.0])
    with mx.autograd.record():
        y = f(x)
    assert y.asnumpy().tolist() == [0.5]
    del f
    _collect(mx)
    assert ref() is None
    with pytest.raises(mx.base.MXNetError, match='not in a computational graph'):
        y.backward()


def test_forward_returning_its_input_is_refused(mx):
    class Identity(mx.autograd.Function):
        def forward(self, x):
            return x

        def backward(self, dy):
            return dy

    x = mx.nd.array([1.0])
    x.attach_grad()
    with mx.autograd.record():
        with pytest.raises(mx.base.MXNetError, match='already part of a recorded graph'):
            Identity()(x)
    assert not mx.autograd.Function._registry.ref_holder
