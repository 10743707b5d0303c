"""Gluon layers whose kernels weft added for MXNet's test_gluon.py (issue 29): gluon.rnn's LSTM, GRU
and RNN (the fused RNN op and _rnn_param_concat), Dropout with `axes`, 3-D Conv/Pool, float64
Conv2D. Each is checked against NumPy implementations of the layers' equations (float64) written
here from MXNet's documented definitions, hybridized and not. MXNet's own outputs for the fused
RNN are compared in C++ (tests/compat, probes_rnn)."""
import numpy as np
import pytest


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _cell(mode, x, h, c, wx, wh, bx, bh):
    """One step of MXNet's cells for a batch: returns (h', c')."""
    gx, gh = x @ wx.T + bx, h @ wh.T + bh
    n = h.shape[1]
    if mode == 'lstm':
        i, f, g, o = (gx[:, k * n:(k + 1) * n] + gh[:, k * n:(k + 1) * n] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        return _sigmoid(o) * np.tanh(c), c
    if mode == 'gru':
        r = _sigmoid(gx[:, :n] + gh[:, :n])
        z = _sigmoid(gx[:, n:2 * n] + gh[:, n:2 * n])
        cand = np.tanh(gx[:, 2 * n:] + r * gh[:, 2 * n:])
        return (1 - z) * cand + z * h, c
    pre = gx + gh
    return (np.tanh(pre) if mode == 'rnn_tanh' else np.maximum(pre, 0)), c


def _numpy_rnn(mode, layers, dirs, params, x, h0, c0):
    """The stacked (bi)directional network on time-major x (T, N, I) with gluon's parameters."""
    t_len = x.shape[0]
    h_out, c_out = [], []
    for l in range(layers):
        outs = []
        for d in range(dirs):
            p = lambda kind, part: params['%s%d_%s_%s' % ('lr'[d], l, kind, part)]  # noqa: E731
            h, c = h0[l * dirs + d], c0[l * dirs + d]
            seq = [None] * t_len
            for t in (range(t_len) if d == 0 else reversed(range(t_len))):
                h, c = _cell(mode, x[t], h, c, p('i2h', 'weight'), p('h2h', 'weight'), p('i2h', 'bias'),
                             p('h2h', 'bias'))
                seq[t] = h
            outs.append(np.stack(seq))
            h_out.append(h)
            c_out.append(c)
        x = np.concatenate(outs, axis=2)
    return x, np.stack(h_out), np.stack(c_out)


LAYERS = [('lstm', 'LSTM', {}), ('gru', 'GRU', {}), ('rnn_tanh', 'RNN', {'activation': 'tanh'}),
          ('rnn_relu', 'RNN', {'activation': 'relu'})]


@pytest.mark.parametrize('hybridize', [False, True])
@pytest.mark.parametrize('mode,cls,kw', LAYERS)
def test_rnn_layer_matches_numpy(mx, mode, cls, kw, hybridize):
    t_len, batch, inp, hidden, layers = 5, 3, 4, 6, 2
    layer = getattr(mx.gluon.rnn, cls)(hidden, num_layers=layers, bidirectional=True, input_size=inp, **kw)
    layer.initialize(mx.init.Uniform(0.4))
    if hybridize:
        layer.hybridize()
    rng = np.random.RandomState(7)
    x = mx.nd.array(rng.uniform(-1, 1, (t_len, batch, inp)))
    states = [mx.nd.array(rng.uniform(-1, 1, s.shape)) for s in layer.begin_state(batch)]
    x.attach_grad()
    with mx.autograd.record():
        out, new_states = layer(x, states)
        loss = (out * out).sum() + (new_states[0] * 3).sum()
    loss.backward()
    params = {k[len(layer.prefix):]: v.data().asnumpy().astype(np.float64) for k, v in layer.collect_params().items()}
    c0 = states[1].asnumpy() if mode == 'lstm' else np.zeros((layers * 2, batch, hidden))
    want, want_h, want_c = _numpy_rnn(mode, layers, 2, params, x.asnumpy().astype(np.float64),
                                      states[0].asnumpy().astype(np.float64), c0)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_states[0].asnumpy(), want_h, rtol=1e-4, atol=1e-5)
    if mode == 'lstm':
        np.testing.assert_allclose(new_states[1].asnumpy(), want_c, rtol=1e-4, atol=1e-5)
    # The input's gradient by central differences of the NumPy network (float64) at a few places.
    def numpy_loss(xv):
        o, h, _ = _numpy_rnn(mode, layers, 2, params, xv, states[0].asnumpy().astype(np.float64), c0)
        return (o * o).sum() + (h * 3).sum()
    base = x.asnumpy().astype(np.float64)
    for idx in [(0, 0, 0), (2, 1, 3), (4, 2, 1)]:
        e = np.zeros_like(base)
        e[idx] = 1e-5
        fd = (numpy_loss(base + e) - numpy_loss(base - e)) / 2e-5
        assert abs(x.grad.asnumpy()[idx] - fd) <= 1e-3 * max(1.0, abs(fd)), (idx, x.grad.asnumpy()[idx], fd)


def test_rnn_layer_hybridized_equals_imperative_and_float64(mx):
    rng = np.random.RandomState(3)
    for dtype in ['float32', 'float64']:
        results = []
        for hybridize in [False, True]:
            layer = mx.gluon.rnn.GRU(5, num_layers=2, layout='NTC', input_size=3)
            layer.initialize(mx.init.Constant(0.1))
            layer.cast(dtype)
            if hybridize:
                layer.hybridize()
            x = mx.nd.array(rng.uniform(-1, 1, (2, 4, 3)) if not results else results[0][2], dtype=dtype)
            x.attach_grad()
            with mx.autograd.record():
                out = layer(x)
            out.backward()
            grads = [p.grad().asnumpy() for p in layer.collect_params().values()]
            results.append((out.asnumpy(), x.grad.asnumpy(), x.asnumpy(), grads))
        (o0, g0, _, p0), (o1, g1, _, p1) = results
        assert o0.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(o0, o1)
        np.testing.assert_array_equal(g0, g1)
        for a, b in zip(p0, p1):
            np.testing.assert_array_equal(a, b)


def test_rnn_dropout_between_layers_only_in_training(mx):
    rng = np.random.RandomState(11)
    x = mx.nd.array(rng.uniform(-1, 1, (6, 2, 3)))
    nets = []
    for rate in [0.0, 0.5]:
        net = mx.gluon.rnn.LSTM(8, num_layers=2, dropout=rate, input_size=3)
        net.initialize(mx.init.Constant(0.3))
        nets.append(net)
    plain, dropped = nets
    np.testing.assert_array_equal(plain(x).asnumpy(), dropped(x).asnumpy())  # inference: no dropout
    x.attach_grad()
    with mx.autograd.record():
        y = dropped(x)
    y.backward()
    assert not np.allclose(y.asnumpy(), plain(x).asnumpy())  # training: layer 2's input is masked
    assert np.isfinite(x.grad.asnumpy()).all() and np.abs(x.grad.asnumpy()).sum() > 0


def test_rnn_refuses_projection_by_name(mx):
    layer = mx.gluon.rnn.LSTM(4, projection_size=2, input_size=3)
    layer.initialize()
    with pytest.raises(mx.base.MXNetError, match='projection_size'):
        layer(mx.nd.ones((2, 1, 3))).wait_to_read()


@pytest.mark.parametrize('axes', [(0,), (1, 3), (0, 2, 3)])
def test_dropout_axes_shares_the_mask(mx, axes):
    shape = (4, 16, 6, 8)
    x = mx.nd.ones(shape)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.gluon.nn.Dropout(0.5, axes=axes)(x)
    y.backward(mx.nd.full(shape, 2.0))
    yv, gv = y.asnumpy(), x.grad.asnumpy()
    assert set(np.unique(yv)) <= {0.0, 2.0} and 0 < (yv == 0).sum() < yv.size
    for a in axes:
        first = np.take(yv, [0], axis=a)
        assert (yv == first).all(), 'mask differs along axis %d' % a
    np.testing.assert_array_equal(gv, 2.0 * yv)  # out_grad · mask (mask = y for x = 1)
    assert (mx.gluon.nn.Dropout(0.5, axes=axes)(x).asnumpy() == 1).all()  # identity outside training


def _numpy_conv(x, w, b, stride, pad, dilate, groups):
    """Direct N-d convolution (channels first) in float64."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + a] - (dilate[a] * (k[a] - 1) + 1)) // stride[a] + 1 for a in range(nd)]
    y = np.zeros((n, f) + tuple(out_sp))
    fg = f // groups
    for o in np.ndindex(*out_sp):
        sl = tuple(slice(o[a] * stride[a], o[a] * stride[a] + dilate[a] * (k[a] - 1) + 1, dilate[a]) for a in range(nd))
        for g in range(groups):
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            y[(slice(None), slice(g * fg, (g + 1) * fg)) + o] = np.tensordot(patch, w[g * fg:(g + 1) * fg],
                                                                             axes=(list(range(1, nd + 2)),
                                                                                   list(range(1, nd + 2))))
    return y + b.reshape((1, f) + (1,) * nd)


@pytest.mark.parametrize('hybridize', [False, True])
def test_conv3d_and_float64_conv2d_match_numpy(mx, hybridize):
    rng = np.random.RandomState(5)
    cases = [(mx.gluon.nn.Conv3D(4, (2, 3, 2), strides=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2,
                                 in_channels=2), (2, 2, 4, 5, 3), 'float32', 1e-4),
             (mx.gluon.nn.Conv2D(3, (3, 2), strides=2, padding=1, in_channels=2), (2, 2, 5, 6), 'float64', 1e-10)]
    for layer, shape, dtype, tol in cases:
        layer.initialize(mx.init.Uniform(1.0))
        layer.cast(dtype)
        if hybridize:
            layer.hybridize()
        x = mx.nd.array(rng.uniform(-1, 1, shape), dtype=dtype)
        x.attach_grad()
        with mx.autograd.record():
            y = layer(x)
            loss = (y * y).sum()
        loss.backward()
        assert y.dtype == np.dtype(dtype)
        w, b = layer.weight.data().asnumpy().astype(np.float64), layer.bias.data().asnumpy().astype(np.float64)
        args = (layer._kwargs['stride'], layer._kwargs['pad'], layer._kwargs['dilate'], layer._kwargs['num_group'])
        want = _numpy_conv(x.asnumpy().astype(np.float64), w, b, *args)
        np.testing.assert_allclose(y.asnumpy(), want, rtol=tol, atol=tol)
        # d loss / d bias = Σ 2y over each filter's outputs.
        axes = (0,) + tuple(range(2, want.ndim))
        np.testing.assert_allclose(layer.bias.grad().asnumpy(), (2 * want).sum(axis=axes), rtol=tol * 10, atol=tol)
        # d loss / d x at one element, by central differences of the NumPy convolution.
        e = np.zeros(shape)
        e[(1, 1) + (1,) * (len(shape) - 2)] = 1e-6
        xv = x.asnumpy().astype(np.float64)
        fd = ((_numpy_conv(xv + e, w, b, *args) ** 2).sum() - (_numpy_conv(xv - e, w, b, *args) ** 2).sum()) / 2e-6
        got = x.grad.asnumpy()[(1, 1) + (1,) * (len(shape) - 2)]
        assert abs(got - fd) <= 1e-3 * max(1.0, abs(fd)), (got, fd)


def test_pool3d_matches_numpy(mx):
    rng = np.random.RandomState(9)
    x = mx.nd.array(rng.uniform(-1, 1, (2, 3, 4, 5, 6)))
    xv = x.asnumpy()
    x.attach_grad()
    with mx.autograd.record():
        y = mx.gluon.nn.MaxPool3D((2, 2, 3), strides=(2, 1, 3))(x)
    y.backward()
    want = np.zeros((2, 3, 2, 4, 2), np.float32)
    for o in np.ndindex(2, 4, 2):
        win = xv[:, :, 2 * o[0]:2 * o[0] + 2, o[1]:o[1] + 2, 3 * o[2]:3 * o[2] + 3]
        want[(slice(None), slice(None)) + o] = win.reshape(2, 3, -1).max(axis=2)
    np.testing.assert_array_equal(y.asnumpy(), want)
    assert x.grad.asnumpy().sum() == y.size  # each window's gradient goes to one maximum
    avg = mx.gluon.nn.AvgPool3D(2, padding=1, count_include_pad=False)(x).asnumpy()
    pad = np.pad(xv, [(0, 0)] * 2 + [(1, 1)] * 3, constant_values=np.nan)
    for o in [(0, 0, 0), (1, 2, 3), (2, 1, 0)]:
        win = pad[:, :, 2 * o[0]:2 * o[0] + 2, 2 * o[1]:2 * o[1] + 2, 2 * o[2]:2 * o[2] + 2].reshape(2, 3, -1)
        np.testing.assert_allclose(avg[(slice(None), slice(None)) + o], np.nanmean(win, axis=2), rtol=1e-6)
    glob = mx.gluon.nn.GlobalAvgPool3D()(x).asnumpy()
    np.testing.assert_allclose(glob[:, :, 0, 0, 0], xv.mean(axis=(2, 3, 4)), rtol=1e-5)
