"""MXNet's gpu on weft: mx.gpu(i) is device i of one GPU-class plugin (cuda, else hip, else vulkan;
WEFT_MXNET_GPU chooses). On machines without a GPU that is Mesa's lavapipe, a real Vulkan device."""
import os

import numpy as np
import pytest


@pytest.fixture
def gpu(mx):
    if mx.context.num_gpus() == 0:
        if os.environ.get('WEFT_REQUIRE_ALL') == '1':
            pytest.fail('no GPU-class device (cuda, hip or vulkan) although WEFT_REQUIRE_ALL=1')
        pytest.skip('no GPU-class device (cuda, hip or vulkan; lavapipe comes with mesa-vulkan-drivers)')
    return mx.gpu(0)


def test_gpu_count_and_context(mx, gpu):
    a = mx.nd.ones((2, 3), ctx=gpu)
    assert a.context == gpu
    assert a.context.device_type == 'gpu'
    np.testing.assert_array_equal((a * 3).asnumpy(), np.full((2, 3), 3))


def test_fully_connected_on_gpu_matches_cpu(mx, gpu):
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(4, 8), rng.randn(5, 8), rng.randn(5)
    data = mx.sym.Variable('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(data, name='fc', num_hidden=5), act_type='relu')
    outs = []
    for ctx in (mx.cpu(), gpu):
        ex = net.simple_bind(ctx, data=(4, 8))
        ex.arg_dict['data'][:] = x
        ex.arg_dict['fc_weight'][:] = w
        ex.arg_dict['fc_bias'][:] = b
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4, 5), ctx=ctx))
        outs.append((ex.outputs[0].asnumpy(), ex.grad_dict['fc_weight'].asnumpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-5)


def test_copy_between_cpu_and_gpu(mx, gpu):
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    b = a.copyto(gpu)
    c = b.as_in_context(mx.cpu())
    np.testing.assert_array_equal(c.asnumpy(), a.asnumpy())


def test_several_cpu_devices(mx):
    a = mx.nd.ones((2,), ctx=mx.cpu(1))
    assert a.context == mx.cpu(1)
    np.testing.assert_array_equal(a.copyto(mx.cpu(0)).asnumpy(), [1, 1])


def test_cpu_ids_as_mxnet_tests_use_them(mx):
    # MXNet's cpu(i) is the host CPU for any i; its test_module_ctx_group places groups on cpu(4)
    # and cpu(5). The binding asks weft's cpu plugin for 8 devices; WEFT_CPU_DEVICES still decides
    # when it is set.
    n = int(os.environ.get('WEFT_CPU_DEVICES', '8'))
    a = mx.nd.ones((2, 2), ctx=mx.cpu(n // 2))
    b = a.copyto(mx.cpu(n - 1)) * 2
    assert a.context == mx.cpu(n // 2) and b.context == mx.cpu(n - 1)
    np.testing.assert_array_equal(b.asnumpy(), np.full((2, 2), 2))
    with pytest.raises(mx.base.MXNetError, match='no device cpu\\(%d\\)' % n):
        mx.nd.ones(1, ctx=mx.cpu(n))


def ks_statistic(draws, cdf):
    """Kolmogorov–Smirnov D of the draws against a continuous CDF (a vectorised function)."""
    x = np.sort(draws.astype(np.float64))
    f = cdf(x)
    n = len(x)
    return max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max())


def test_random_samplers_on_gpu(mx, gpu):
    # 10^6 draws each pass the Kolmogorov–Smirnov test at p > 0.001 (D·√n below 1.9495, the
    # Kolmogorov distribution's 0.999 quantile), the same seed reproduces them, and the device
    # draws the cpu's numbers (the same counter-based stream) up to float rounding.
    import math
    n = 1000000
    normal_cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf((v - 1.5) / (2 * math.sqrt(2)))))
    for sampler, cdf in ((lambda ctx: mx.nd.random.uniform(-2, 3, shape=(n,), ctx=ctx), lambda x: (x + 2) / 5),
                         (lambda ctx: mx.nd.random.normal(1.5, 2, shape=(n,), ctx=ctx), normal_cdf)):
        mx.random.seed(11, ctx=gpu)
        a = sampler(gpu).asnumpy()
        mx.random.seed(11, ctx=gpu)
        b = sampler(gpu).asnumpy()
        mx.random.seed(11, ctx=mx.cpu())
        on_cpu = sampler(mx.cpu()).asnumpy()
        assert (a == b).all()
        np.testing.assert_allclose(a, on_cpu, rtol=0, atol=1e-4)
        assert ks_statistic(a, cdf) * math.sqrt(n) < 1.9495
    with pytest.raises(mx.base.MXNetError, match="'scale'"):
        mx.nd.random.normal(0, -1, shape=(4,), ctx=gpu).asnumpy()
