"""Executor.backward's head gradients: MXNet copies each into the executor's own buffer with
CopyFromTo, which casts a dense array to the output's dtype, so a head gradient of another dtype
(int32, float64 for a float32 output) is taken as its values in the output's dtype."""
import numpy as np
import pytest


@pytest.mark.parametrize('head_dtype', ['int32', 'float64', 'float16'])
def test_head_gradient_of_another_dtype_is_cast(mx, head_dtype):
    a = mx.sym.Variable('a')
    y = a * 3 + 1
    grad = mx.nd.zeros((2, 3))
    exe = y.bind(mx.cpu(), args={'a': mx.nd.ones((2, 3))}, args_grad={'a': grad})
    exe.forward(is_train=True)
    head = np.arange(6, dtype=head_dtype).reshape(2, 3) - 2
    exe.backward(mx.nd.array(head, dtype=head_dtype))
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad.asnumpy(), 3 * head.astype(np.float32))


def test_head_gradient_of_another_shape_is_refused(mx):
    a = mx.sym.Variable('a')
    exe = (a * 2).bind(mx.cpu(), args={'a': mx.nd.ones((2, 3))}, args_grad={'a': mx.nd.zeros((2, 3))})
    exe.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match='shape'):
        exe.backward(mx.nd.ones((3, 2), dtype='int32'))
