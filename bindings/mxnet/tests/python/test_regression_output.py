"""The regression heads (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput)
through MXNet's unmodified frontend on weft, and the factorization machine of MXNet's
example/sparse/factorization_machine (csr data, row_sparse weights, _square_sum, a logistic head)
trained with a Module. Expected numbers are MXNet 1.9.1's (the real libmxnet on the same inputs)."""
import numpy as np
import pytest

X = [[0.5, -1.0, 0.25], [0.0, 2.0, -0.5]]
LABEL = [[0.5, 1.0, 0.0], [1.0, 0.0, -0.5]]
T = 2.0 / 3.0  # grad_scale 2 over 3 label elements per sample
# op: (forward, data gradient with grad_scale=2), MXNet 1.9.1's. MAE's is −1 where x == label.
EXPECTED = {
    'LinearRegressionOutput': (sum(X, []), [0.0, -2 * T, 0.25 * T, -T, 2 * T, 0.0]),
    'LogisticRegressionOutput': ([0.62245935, 0.26894143, 0.56217653, 0.5, 0.88079703, 0.37754068],
                                 [0.08163957, -0.4873724, 0.37478435, -0.33333334, 0.58719802, 0.58502716]),
    'MAERegressionOutput': (sum(X, []), [-T, -T, T, -T, T, -T]),
}


@pytest.mark.parametrize('op', sorted(EXPECTED))
def test_regression_head_matches_mxnet(mx, op):
    fwd, grad = EXPECTED[op]
    data, label = mx.sym.Variable('data'), mx.sym.Variable('label')
    sym = getattr(mx.sym, op)(data, label, grad_scale=2.0)
    assert sym.infer_shape(data=(4, 1)) == ([(4, 1), (4,)], [(4, 1)], [])
    ex = sym.bind(mx.cpu(), {'data': mx.nd.array(X), 'label': mx.nd.array(LABEL)},
                  args_grad={'data': mx.nd.zeros((2, 3))})
    out = ex.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out.ravel(), fwd, rtol=1e-6, atol=1e-7)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict['data'].asnumpy().ravel(), grad, rtol=1e-5, atol=1e-7)
    # autograd: the head ignores the out-gradient it is given; grad_scale defaults to 1.
    x = mx.nd.array(X)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, op)(x, mx.nd.array(LABEL))
    y.backward(mx.nd.ones((2, 3)) * 5)
    np.testing.assert_allclose(x.grad.asnumpy().ravel(), np.array(grad) / 2, rtol=1e-5, atol=1e-7)


def test_regression_head_takes_a_label_of_one_dimension_less(mx):
    # MXNet's test_regression: data (N, 1), label (N,).
    sym = mx.sym.LogisticRegressionOutput(mx.sym.Variable('data'), mx.sym.Variable('label'))
    ex = sym.bind(mx.cpu(), {'data': mx.nd.array([[0.3], [-0.2]]), 'label': mx.nd.array([1, 0])},
                  args_grad={'data': mx.nd.zeros((2, 1))})
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict['data'].asnumpy().ravel(), [-0.42555749, 0.45016602], rtol=1e-5)


def _factorization_machine(mx, factor_size, num_features):
    """The model of MXNet's example/sparse/factorization_machine/model.py (its structure; names as
    there): a linear term, pairwise interactions through v, a logistic head."""
    x = mx.sym.Variable('data', stype='csr')
    v = mx.sym.Variable('v', shape=(num_features, factor_size), stype='row_sparse', init=mx.init.Normal(0.01))
    w = mx.sym.Variable('w', shape=(num_features, 1), stype='row_sparse', init=mx.init.Normal(0.01))
    w0 = mx.sym.Variable('w0', shape=(1,), init=mx.init.Zero())
    w1 = mx.sym.broadcast_add(mx.sym.dot(x, w), w0)
    v_s = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    bd_sum = mx.sym.dot(x.square(), v_s)
    w2_squared = 0.5 * mx.sym.square(data=mx.sym.dot(x, v))
    model = mx.sym.Concat(w1, w2_squared, dim=1).sum(axis=1, keepdims=True) - 0.5 * bd_sum
    return mx.sym.LogisticRegressionOutput(data=model, label=mx.sym.Variable('softmax_label'))


def test_factorization_machine_example_trains(mx):
    # On libmxnet this data and schedule reach 0.951 training accuracy in the fifth epoch (weft
    # 0.9465 on the run that set the bound; their initial draws differ).
    rs = np.random.RandomState(0)
    n, f = 2000, 100
    data = (rs.rand(n, f) < 0.05) * rs.rand(n, f)
    label = (data.dot(rs.randn(f)) > 0).astype('f')
    it = mx.io.NDArrayIter(mx.nd.array(data).tostype('csr'), mx.nd.array(label), batch_size=100,
                           last_batch_handle='discard')
    mod = mx.mod.Module(_factorization_machine(mx, 4, f), data_names=['data'], label_names=['softmax_label'])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mx.random.seed(0)
    mod.init_params()
    mod.init_optimizer(optimizer='adam', optimizer_params={'learning_rate': 0.05})
    for _ in range(5):
        it.reset()
        correct = 0
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
            p = mod.get_outputs()[0].asnumpy()[:, 0]
            correct += ((p > 0.5) == (batch.label[0].asnumpy() > 0.5)).sum()
    assert correct / n > 0.92
    grads = mod._exec_group.execs[0].grad_dict
    assert grads['v'].stype == 'row_sparse' and grads['w'].stype == 'row_sparse'
    assert mod.get_params()[0]['v'].stype == 'row_sparse'
