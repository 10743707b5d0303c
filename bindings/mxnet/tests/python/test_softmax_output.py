"""SoftmaxOutput's two label forms beside class indices, through MXNet's unmodified frontend on
weft: preserve_shape (softmax over the last axis, one class per row of it) and a label of the
output's own shape, which MXNet reads as probabilities (gradient (output − label)·grad_scale, with
no normalisation). Expected numbers are MXNet 1.9.1's (the real libmxnet on the same inputs)."""
import numpy as np

X = [[0.5, -1.0, 0.25, 2.0], [0.0, 1.5, -0.5, 0.75], [1.0, 1.0, -2.0, 0.0]]
# Softmax of each row of X (each row is also a last-axis row of X as (1, 3, 4)).
Y = [0.15423483, 0.03441444, 0.12011821, 0.69123256, 0.12187363, 0.54619974, 0.07392009, 0.25800648,
     0.413622, 0.413622, 0.02059302, 0.15216303]
PROB = [[0.25, 0.25, 0.5, 0.0], [0.0, 1.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]]


def run(mx, x, label, **attrs):
    x = mx.nd.array(x)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SoftmaxOutput(x, mx.nd.array(label), **attrs)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


def test_preserve_shape_takes_softmax_over_the_last_axis(mx):
    # Labels 3, ignored, 1; 'valid' divides grad_scale 2 by the 2 rows not ignored.
    y, g = run(mx, [X], [[3, -1, 1]], preserve_shape=True, use_ignore=True, normalization='valid', grad_scale=2.0)
    assert y.shape == (1, 3, 4)
    np.testing.assert_allclose(y.ravel(), Y, rtol=1e-6)
    want = [0.15423483, 0.03441444, 0.12011821, -0.30876744, 0, 0, 0, 0,
            0.413622, -0.586378, 0.02059302, 0.15216303]
    np.testing.assert_allclose(g.ravel(), want, rtol=1e-5, atol=1e-7)


def test_label_of_the_output_shape_is_a_probability(mx):
    y, g = run(mx, X, PROB, normalization='batch', grad_scale=3.0)
    np.testing.assert_allclose(y.ravel(), Y, rtol=1e-6)
    want = [-0.28729552, -0.64675665, -1.1396453, 2.0736976, 0.3656209, -1.3614008, 0.22176027, 0.7740195,
            0.940866, 0.640866, -0.83822095, -0.74351096]
    np.testing.assert_allclose(g.ravel(), want, rtol=1e-5, atol=1e-6)
    # The same through a bound executor (what a Module does with such labels).
    data, label = mx.sym.Variable('data'), mx.sym.Variable('label')
    sym = mx.sym.SoftmaxOutput(data, label, normalization='batch', grad_scale=3.0)
    ex = sym.bind(mx.cpu(), {'data': mx.nd.array(X), 'label': mx.nd.array(PROB)},
                  args_grad={'data': mx.nd.zeros((3, 4))})
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict['data'].asnumpy().ravel(), want, rtol=1e-5, atol=1e-6)


def test_class_label_out_of_range_names_the_fix(mx):
    import pytest
    with pytest.raises(mx.base.MXNetError, match='probability label'):
        run(mx, X, [0, 7, 1])
