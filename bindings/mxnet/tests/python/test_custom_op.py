"""An operator written in Python with mx.operator.CustomOp runs as a weft op: imperatively, in an
executor (forward and backward), inside a Module, and its errors reach the caller."""
import numpy as np
import pytest


@pytest.fixture(scope='module')
def sqr(mx):
    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0].asnumpy()
            self.assign(out_data[0], req[0], mx.nd.array(x * x))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register('weft_test_sqr')
    class SqrProp(mx.operator.CustomOpProp):
        def __init__(self, scale='1'):
            super(SqrProp, self).__init__(need_top_grad=True)
            self.scale = float(scale)

        def list_arguments(self):
            return ['data']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Sqr()

    return 'weft_test_sqr'


def test_imperative(mx, sqr):
    y = mx.nd.Custom(mx.nd.array([1, 2, 3]), op_type=sqr)
    np.testing.assert_array_equal(y.asnumpy(), [1, 4, 9])


def test_executor_forward_backward(mx, sqr):
    s = mx.sym.Custom(mx.sym.Variable('data'), op_type=sqr, scale='2', name='sq')
    assert s.list_arguments() == ['data']
    assert s.infer_shape(data=(3,))[1] == [(3,)]
    ex = s.simple_bind(mx.cpu(), data=(3,))
    ex.arg_dict['data'][:] = mx.nd.array([1, 2, 3])
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [1, 4, 9])
    ex.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(ex.grad_dict['data'].asnumpy(), [2, 4, 6])


def test_in_a_network_with_other_ops(mx, sqr):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(mx.sym.Custom(data, op_type=sqr), num_hidden=2, name='fc', no_bias=True)
    ex = net.simple_bind(mx.cpu(), data=(1, 3))
    ex.arg_dict['data'][:] = mx.nd.array([[1, 2, 3]])
    ex.arg_dict['fc_weight'][:] = 1
    ex.forward(is_train=True)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [[14, 14]])
    ex.backward(mx.nd.ones((1, 2)))
    np.testing.assert_array_equal(ex.grad_dict['data'].asnumpy(), [[4, 8, 12]])


def test_forward_error_reaches_the_caller(mx):
    class Broken(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise RuntimeError('broken forward')

    @mx.operator.register('weft_test_broken')
    class BrokenProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Broken()

    y = mx.nd.Custom(mx.nd.ones((2,)), op_type='weft_test_broken')
    with pytest.raises(mx.base.MXNetError, match='weft_test_broken.*forward failed'):
        y.asnumpy()
    # The engine goes on working afterwards.
    np.testing.assert_array_equal((mx.nd.ones((2,)) + 1).asnumpy(), [2, 2])


def test_unknown_op_type(mx):
    with pytest.raises(mx.base.MXNetError, match="no operator registered as op_type 'nope'"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type='nope')
