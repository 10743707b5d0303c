"""MXNet's random samplers (mx.nd.random.*, the _random_* ops) through the unmodified frontend on weft:
dtypes and shapes as MXNet gives them, mx.random.seed reproducibility, the initializers that draw
with them, and the exception-handling example of MXNet's documentation (a negative scale raises at
asnumpy, not at the call)."""
import numpy as np
import pytest


def test_samplers_give_mxnets_dtypes_and_shapes(mx):
    nd = mx.nd
    assert nd.random.uniform(-1, 2, shape=(3, 4)).dtype == np.float32
    assert nd.random.normal(0, 1, shape=(5,), dtype='float64').dtype == np.float64
    r = nd.random.randint(-3, 5, shape=(1000,))
    assert r.dtype == np.int32 and set(r.asnumpy().tolist()) == set(range(-3, 5))
    assert nd.random.randint(0, 2, shape=(2,), dtype='int64').dtype == np.int64
    for a in (nd.random.exponential(2, shape=(4, 2)), nd.random.gamma(2, 3, shape=(4, 2)),
              nd.random.poisson(3, shape=(4, 2))):
        assert a.shape == (4, 2) and (a.asnumpy() >= 0).all()
    like = nd.random.uniform_like(nd.zeros((2, 3), dtype='float64'), low=5, high=6)
    assert like.dtype == np.float64 and like.shape == (2, 3) and ((like.asnumpy() >= 5) & (like.asnumpy() < 6)).all()
    assert nd.random.normal_like(nd.zeros((3,))).shape == (3,)
    # MXNet's aliases, and the symbol API.
    assert nd.uniform(shape=(2,)).shape == (2,) and nd.random_normal(shape=(2,)).shape == (2,)
    ex = mx.sym.random.normal(loc=1, scale=0.1, shape=(100,)).bind(mx.cpu(), {})
    assert abs(ex.forward()[0].asnumpy().mean() - 1) < 0.05


def test_moments_follow_the_parameters(mx):
    nd = mx.nd
    n = 100000
    # (draws, mean, standard deviation): 5 standard errors of the mean.
    for a, mean, sd in ((nd.random.uniform(-2, 3, shape=(n,)), 0.5, 5 / 12 ** 0.5),
                        (nd.random.normal(1.5, 2, shape=(n,)), 1.5, 2),
                        (nd.random.exponential(4, shape=(n,)), 4, 4),  # the frontend's scale = 1/lam
                        (nd.random.gamma(9, 0.5, shape=(n,)), 4.5, 1.5),
                        (nd.random.poisson(40, shape=(n,)), 40, 40 ** 0.5)):
        assert abs(a.asnumpy().astype(np.float64).mean() - mean) < 5 * sd / n ** 0.5


def test_seed_reproduces_draws(mx):
    mx.random.seed(7)
    a = mx.nd.random.normal(shape=(100,)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random.normal(shape=(100,)).asnumpy()
    mx.random.seed(8)
    c = mx.nd.random.normal(shape=(100,)).asnumpy()
    assert (a == b).all() and not (a == c).all()


def test_negative_scale_raises_at_asnumpy(mx):
    # MXNet's architecture/exception_handling example: the call returns, the wait raises.
    a = mx.nd.random.normal(0, -1, (2, 2))
    with pytest.raises(mx.base.MXNetError, match="'scale'"):
        a.asnumpy()
    b = mx.nd.random.uniform(1, 0, shape=(2,))
    with pytest.raises(mx.base.MXNetError, match="'high'"):
        b.wait_to_read()


@pytest.mark.parametrize('init', ['uniform', 'normal', 'xavier'])
def test_gluon_initializers_draw_with_the_samplers(mx, init):
    make = {'uniform': lambda: mx.init.Uniform(0.1), 'normal': lambda: mx.init.Normal(0.1),
            'xavier': lambda: mx.init.Xavier()}[init]
    net = mx.gluon.nn.Dense(64, in_units=32)
    net.initialize(make())
    w = net.weight.data().asnumpy()
    assert w.shape == (64, 32) and w.std() > 0.01
    if init == 'uniform':
        assert (np.abs(w) <= 0.1).all()


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_symbolic_sampler_is_seeded_when_pushed_and_differentiates(mx, dtype):
    # A sampler inside a bound graph draws the numbers of the seed set before forward, whatever
    # the engine does afterwards; the graph's gradient runs in the data's dtype (float16 too).
    x = mx.sym.var('x')
    y = (mx.sym.random.uniform(-1.5, 3.0, shape=(40, 30), dtype=dtype) + x) * x
    xv = mx.nd.ones((40, 30), dtype=dtype) * 2
    grad = mx.nd.zeros((40, 30), dtype=dtype)
    ex = y.bind(mx.cpu(), {'x': xv}, {'x': grad})
    draws = []
    for _ in range(4):
        mx.random.seed(1234)
        ex.forward(is_train=True)
        mx.random.seed(99)  # too late to change what forward draws
        ex.backward(mx.nd.ones((40, 30), dtype=dtype))
        draws.append(ex.outputs[0].asnumpy() / 2 - 2)
        assert grad.dtype == np.dtype(dtype)
        # d/dx (u + x) x = u + 2x
        np.testing.assert_allclose(grad.asnumpy(), draws[-1] + 4, rtol=2e-3, atol=1e-2)
    for d in draws[1:]:
        np.testing.assert_array_equal(d, draws[0])
    assert draws[0].min() >= -1.5 and draws[0].max() <= 3.0 and draws[0].std() > 0.5


def test_every_like_sampler_takes_the_data_shape_and_dtype(mx):
    # mx.nd.random.*_like call MXNet's _random_*_like ops; means over 10^5 draws within 5 standard
    # errors of the law's (the distributions themselves are checked by the conformance suite).
    x = mx.nd.zeros((200, 500), dtype='float64')
    cases = [('exponential_like', dict(lam=2.0), 0.5, 0.25), ('gamma_like', dict(alpha=2.0, beta=0.5), 1.0, 0.5),
             ('poisson_like', dict(lam=3.0), 3.0, 3.0), ('negative_binomial_like', dict(k=3, p=0.4), 4.5, 11.25),
             ('generalized_negative_binomial_like', dict(mu=2.0, alpha=0.3), 2.0, 3.2),
             ('uniform_like', dict(low=1.0, high=3.0), 2.0, 1 / 3), ('normal_like', dict(loc=-1.0, scale=2.0), -1.0, 4.0)]
    for name, kw, mean, var in cases:
        y = getattr(mx.nd.random, name)(x, **kw)
        assert y.shape == x.shape and y.dtype == np.float64, name
        assert abs(float(y.mean().asscalar()) - mean) < 5 * (var / y.size) ** 0.5, name
