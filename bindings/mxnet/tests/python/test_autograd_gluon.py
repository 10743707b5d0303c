"""Imperative autograd, CachedOp (hybridize) and cpu_shared arrays through MXNet's own Python package
on weft: mx.autograd's calls, gluon blocks hybridized and not, gluon.Trainer, the errors MXNet gives.
Expected values are MXNet 1.9.1's (the cases follow tests/python/unittest/test_autograd.py)."""
import numpy as np
import pytest


def test_record_backward_attach_grad(mx):
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    assert x.grad is not None and x.grad.asnumpy().tolist() == [0, 0, 0]
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        y = x * x + 2 * x - 1
    y.backward()
    assert x.grad.asnumpy().tolist() == [4, 6, 8]
    assert x._fresh_grad
    x._fresh_grad = False
    assert not x._fresh_grad
    assert mx.nd.ones((2,)).grad is None


def test_grad_add_retain_graph_and_head_grads(mx):
    x = mx.nd.ones((2, 2))
    dx = mx.nd.zeros((2, 2))
    mx.autograd.mark_variables([x], [dx], grad_reqs='add')
    with mx.autograd.record():
        y = x + 1
        y.backward(retain_graph=True)
        y.backward(out_grad=mx.nd.full((2, 2), 3))
    assert (dx.asnumpy() == 4).all()
    with mx.autograd.record():
        y = x + 1
    y.backward()
    with pytest.raises(mx.base.MXNetError, match='retain_graph'):
        y.backward()


def test_out_grads_of_split(mx):
    x = mx.nd.ones((3, 5))
    dx = mx.nd.zeros_like(x)
    mx.autograd.mark_variables([x], [dx])
    with mx.autograd.record():
        a, b, c = mx.nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
        mx.autograd.backward([a, b, c], [None, mx.nd.array([1, 2, 3, 4, 5]), mx.nd.array([5, 4, 3, 2, 1])])
    assert (dx.asnumpy() == [[1] * 5, [1, 2, 3, 4, 5], [5, 4, 3, 2, 1]]).all()


def test_autograd_grad_second_order(mx):
    x = mx.nd.ones((1,))
    x.attach_grad()
    with mx.autograd.record():
        z = mx.nd.elemwise_add(mx.nd.exp(x), x)
    dx, = mx.autograd.grad(z, [x], create_graph=True)
    assert abs(dx.asscalar() - 3.71828175) < 1e-6
    dx.backward()
    assert abs(x.grad.asscalar() - 2.71828175) < 1e-6


def test_views_detach_and_symbol(mx):
    x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    x.attach_grad()
    with mx.autograd.record():
        y = (x[1:3].reshape((4,)) * 2).sum() + x[0].sum() + x.detach().sum()
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1, 1], [2, 2], [2, 2]]
    with mx.autograd.record():
        s = x * x + 1
    assert len(mx.autograd.get_symbol(s).list_arguments()) == 1


def test_errors_name_the_misuse(mx):
    x = mx.nd.ones((2,))
    x.attach_grad()
    with pytest.raises(mx.base.MXNetError, match='not in a computational graph'):
        (x * 2).backward()
    with mx.autograd.record():
        y = x * 2
        with pytest.raises(mx.base.MXNetError, match='already in a computational graph'):
            y += 1
    with mx.autograd.record():
        y = x * x
    x[:] = 5
    with pytest.raises(mx.base.MXNetError, match='written since'):
        y.backward()


def test_assignment_into_an_array_while_recording_is_refused(mx):
    # MXNet: an op that writes into one of its inputs (x[idx] = y, out=x) cannot be recorded,
    # also when x itself is a plain array and only y is part of the graph.
    y = mx.nd.ones((3,))
    y.attach_grad()
    for dtype in ['float32', 'int32']:
        for index in [0, slice(1, 2), ([0, 2], [1, 1])]:
            x = mx.nd.zeros((4, 3), dtype=dtype)
            with pytest.raises(mx.base.MXNetError, match=r'Inplace operations \(\+=, -=, x\[:\]=, etc\) are not'):
                with mx.autograd.record():
                    x[index] = y[:2] if isinstance(index, tuple) else y
    x = mx.nd.zeros((4, 3))
    with mx.autograd.record():
        z = y * 2
    x[0] = z  # outside the record section: a plain assignment
    assert x.asnumpy()[0].tolist() == [2, 2, 2]


def test_copies_and_casts_keep_the_graph(mx):
    y = mx.nd.array([1, 2, 3])
    y.attach_grad()
    with mx.autograd.record():
        r = mx.nd.zeros((3,))
        y.copyto(r)
        h = y.astype('float64')
        loss = (r * 2).sum() + (h * 3).sum().astype('float32')
    loss.backward()
    assert y.grad.asnumpy().tolist() == [5, 5, 5]
    i = mx.nd.array([[1, 2], [0, 1]], dtype='int32')
    i.attach_grad()
    with mx.autograd.record():
        g = i[[0, 0, 1], [1, 1, 0]]  # gather_nd on int32 data: repeated positions add up
    g.backward()
    assert i.grad.asnumpy().tolist() == [[0, 2], [1, 0]]


def _net(mx, hybrid):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, kernel_size=3, activation='tanh'), nn.MaxPool2D(2), nn.BatchNorm(),
                nn.Flatten(), nn.Dense(16, activation='relu'), nn.Dropout(0.0), nn.Dense(10))
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    if hybrid:
        net.hybridize(static_alloc=True, static_shape=True)
    return net


def _loss(mx, out, label):
    # Cross-entropy written out (gluon.loss.SoftmaxCrossEntropyLoss takes a mean with exclude=True,
    # which weft's mean does not have yet).
    return -mx.nd.pick(mx.nd.log_softmax(out), label)


def test_hybridized_equals_imperative_bit_for_bit(mx):
    rng = np.random.RandomState(0)
    data = mx.nd.array(rng.uniform(-1, 1, (4, 1, 12, 12)))
    label = mx.nd.array([1, 3, 5, 7])
    results = []
    for hybrid in (False, True):
        mx.random.seed(1)
        net = _net(mx, hybrid)
        net(data)  # shapes known
        for p, v in zip(net.collect_params().values(), [np.random.RandomState(i).uniform(-0.3, 0.3, p.shape)
                                                         for i, p in enumerate(net.collect_params().values())]):
            p.set_data(mx.nd.array(v))
        with mx.autograd.record():
            loss = _loss(mx, net(data), label)
        loss.backward()
        results.append(([loss.asnumpy()] + [p.grad().asnumpy() for p in net.collect_params().values()
                                             if p.grad_req != 'null']))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_get_symbol_of_a_hybridized_block_is_one_cached_op_unless_inlined(mx):
    import json
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.BatchNorm(), mx.gluon.nn.Dense(2))
    net.initialize()
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    counts, outputs = {}, {}
    for limit in (4, 0):
        net.hybridize(inline_limit=limit)
        with mx.autograd.record():
            y = net(x)
        sym = mx.autograd.get_symbol(y)
        counts[limit] = [n['op'] for n in json.loads(sym.tojson())['nodes'] if n['op'] != 'null']
        # Both symbols list the same 7 arguments and 2 aux states (the moving statistics) in the same
        # order, and bound to the same arrays by position they compute the same.
        arg_shapes, _, aux_shapes = sym.infer_shape(**{sym.list_arguments()[0]: x.shape})
        assert (len(arg_shapes), len(aux_shapes)) == (7, 2)
        rs = np.random.RandomState(3)
        args = [mx.nd.array(rs.uniform(-1, 1, s)) for s in arg_shapes]
        aux = [mx.nd.array(rs.uniform(0.5, 1, s)) for s in aux_shapes]
        ex = sym.bind(mx.cpu(), args, aux_states=aux)
        outputs[limit] = ex.forward(is_train=False)[0].asnumpy()
        y.backward()
    assert counts[4] == ['FullyConnected', 'BatchNorm', 'FullyConnected']
    assert counts[0] == ['_CachedOp']
    assert np.array_equal(outputs[4], outputs[0])


def test_gluon_trainer_learns_with_a_new_batch_size(mx):
    rng = np.random.RandomState(2)
    net = _net(mx, True)
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    x = mx.nd.array(rng.uniform(-1, 1, (20, 1, 12, 12)))
    y = mx.nd.array(rng.randint(0, 10, (20,)))
    first = None
    for step in range(30):
        n = 20 if step % 2 == 0 else 10  # two batch sizes: the cached op keeps two plans
        with mx.autograd.record():
            loss = _loss(mx, net(x[:n]), y[:n])
        loss.backward()
        trainer.step(n)
        value = loss.mean().asscalar()
        first = value if first is None else first
    assert value < first * 0.5


def test_cpu_shared_arrays(mx):
    a = mx.nd.array([1, 2, 3], ctx=mx.Context('cpu_shared', 0))
    assert a.context == mx.Context('cpu_shared', 0)
    pid, fd, shape, dtype = a._to_shared_mem()
    b = mx.nd.NDArray(mx.nd.ndarray._new_from_shared_mem(pid, fd, shape, dtype))
    b[:] = 7
    assert a.asnumpy().tolist() == [7, 7, 7]
    # Creation ops asked for cpu_shared make shared-memory arrays too.
    c = mx.nd.full((2, 3), 4, ctx=mx.Context('cpu_shared', 0), dtype='int32')
    assert c.context == mx.Context('cpu_shared', 0) and c.dtype == np.int32
    pid, fd, shape, dtype = c._to_shared_mem()
    d = mx.nd.NDArray(mx.nd.ndarray._new_from_shared_mem(pid, fd, shape, dtype))
    assert d.asnumpy().tolist() == [[4, 4, 4], [4, 4, 4]]


def test_gluon_losses_match_their_formulas(mx):
    # Gluon's losses call make_loss and pick(keepdims=True) with an index lacking the axis.
    pred = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], dtype=np.float32)
    label = np.array([0, 2], dtype=np.float32)
    ce = mx.gluon.loss.SoftmaxCrossEntropyLoss()(mx.nd.array(pred), mx.nd.array(label)).asnumpy()
    logp = pred - np.log(np.exp(pred).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(ce, -logp[[0, 1], [0, 2]], rtol=1e-5)
    l2 = mx.gluon.loss.L2Loss()(mx.nd.array(pred), mx.nd.zeros((2, 3))).asnumpy()
    np.testing.assert_allclose(l2, (pred ** 2).mean(axis=1) / 2, rtol=1e-6)


def test_dataloader_with_worker_processes(mx):
    # gluon.data.DataLoader(num_workers=2) forks worker processes that run weft's engine (batchify
    # into cpu_shared arrays) while the parent keeps using it: every sample arrives once, in order.
    data = np.arange(60, dtype='float32').reshape(30, 2)
    labels = np.arange(30, dtype='float32')
    dataset = mx.gluon.data.ArrayDataset(mx.nd.array(data), mx.nd.array(labels))
    loader = mx.gluon.data.DataLoader(dataset, batch_size=7, num_workers=2)
    for _ in range(2):  # a second epoch reuses the same worker pool
        seen = []
        for x, y in loader:
            assert x.shape[1] == 2
            np.testing.assert_array_equal(x.asnumpy()[:, 0], 2 * y.asnumpy())
            seen.extend(y.asnumpy().tolist())
        assert seen == labels.tolist()


def test_zero_grad_resets_accumulated_gradients(mx):
    # grad_req='add' accumulates over backward passes; ParameterDict.zero_grad() zeroes the
    # gradients through MXNet's reset_arrays (MXNet's test_gluon.py test_req runs the same steps).
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize()
    for p in net.collect_params().values():
        p.grad_req = 'add'
    x = mx.nd.ones((2, 4))
    net.collect_params().zero_grad()
    for _ in range(2):
        with mx.autograd.record():
            y = net(x).sum()
        y.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), np.full((3, 4), 4.0))  # 2 passes x 2 rows
    net.collect_params().zero_grad()
    assert (net.weight.grad().asnumpy() == 0).all() and (net.bias.grad().asnumpy() == 0).all()
    a, b = mx.nd.ones((2,)), mx.nd.ones((3, 3))
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0
    with pytest.raises(mx.base.MXNetError, match='num_arrays = 3 but 2 arrays'):
        mx.nd.reset_arrays(a, b, num_arrays=3)


def test_ctc_loss_gluon_and_its_gradient(mx):
    # Uniform activations: -log p depends only on the label's length and repeats. MXNet 1.9.1 gives
    # 18.8282 for a 2-symbol label and 16.5058 for 3 symbols with one repeat, over 20 frames of 4
    # classes, whichever way the lengths are given (layouts NTC/TNC, padding or label_lengths).
    want = [18.82820702, 16.50581741]
    loss = mx.gluon.loss.CTCLoss()
    got = loss(mx.nd.ones((2, 20, 4)), mx.nd.array([[1, 0, -1, -1], [2, 1, 1, -1]]))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    tnc = mx.gluon.loss.CTCLoss(layout='TNC', label_layout='TN')
    got = tnc(mx.nd.ones((20, 2, 4)), mx.nd.array([[1, 0, -1, -1], [2, 1, 1, -1]]).T)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    got = loss(mx.nd.ones((2, 25, 4)), mx.nd.array([[2, 1, 3, 3], [3, 2, 2, 3]]), mx.nd.array([20, 20]),
               mx.nd.array([2, 3]))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    # The gradient reaching the activations is d(loss)/d(data) scaled by the head gradient: compare
    # it with central differences of the loss.
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (2, 6, 4)), dtype='float64')
    label = mx.nd.array([[1, 2, -1], [0, 0, 2]], dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        l = loss(x, label)
    l.backward(mx.nd.array([1.0, 2.0], dtype='float64'))

    def total(v):
        return float((loss(mx.nd.array(v, dtype='float64'), label) * mx.nd.array([1.0, 2.0], dtype='float64')).sum()
                     .asscalar())
    base = x.asnumpy()
    fd = np.zeros_like(base)
    for i in range(base.size):
        e = np.zeros(base.size)
        e[i] = 1e-6
        fd.flat[i] = (total(base + e.reshape(base.shape)) - total(base - e.reshape(base.shape))) / 2e-6
    np.testing.assert_allclose(x.grad.asnumpy(), fd, atol=1e-6)
    with pytest.raises(mx.base.MXNetError, match=r'label\[0, 1\] is 4'):
        loss(mx.nd.ones((2, 6, 4)), mx.nd.array([[1, 4], [0, 1]])).asnumpy()
