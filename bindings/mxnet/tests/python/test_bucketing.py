"""mx.mod.BucketingModule, shared executors, mx.mon.Monitor and a two-input / two-label Module from
MXNet's frontend on weft (issue 32's C API part: MXExecutorSimpleBindEx with a shared executor,
the monitor callback). MXNet's Python drives weft's executors unchanged."""
import numpy as np


def _task(rng, n, length):
    """Sequences of `length` 3-vectors; the label is the index of the largest feature mean."""
    x = rng.uniform(-1, 1, (n, length, 3)).astype(np.float32)
    x[np.arange(n), :, rng.randint(0, 3, n)] += 0.8
    return x, x.mean(axis=1).argmax(axis=1).astype(np.float32)


def _sym_gen(mx):
    def sym_gen(length):
        data = mx.sym.Variable('data')
        hidden = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.mean(data, axis=1), num_hidden=16, name='fc1'),
                                   act_type='relu')
        out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=3, name='fc2'), name='softmax')
        return out, ('data',), ('softmax_label',)
    return sym_gen


def _batch(mx, x, y, length):
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=length,
                           provide_data=[mx.io.DataDesc('data', x.shape)],
                           provide_label=[mx.io.DataDesc('softmax_label', y.shape)])


def test_bucketing_module_trains_three_buckets_on_shared_parameters(mx):
    mx.random.seed(0)
    rng = np.random.RandomState(0)
    mod = mx.mod.BucketingModule(_sym_gen(mx), default_bucket_key=8, context=mx.cpu())
    mod.bind(data_shapes=[('data', (20, 8, 3))], label_shapes=[('softmax_label', (20,))])
    mod.init_params(initializer=mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    for step in range(60):
        length = (8, 4, 6)[step % 3]
        x, y = _task(rng, 20, length)
        mod.forward(_batch(mx, x, y, length), is_train=True)
        mod.backward()
        mod.update()
    assert sorted(mod._buckets) == [4, 6, 8]
    # Every bucket's executor holds the default bucket's parameter arrays, not copies.
    default = mod._buckets[8]._exec_group.execs[0]
    for key in (4, 6):
        other = mod._buckets[key]._exec_group.execs[0]
        for name in ('fc1_weight', 'fc2_bias'):
            a, b = default.arg_dict[name], other.arg_dict[name]
            before = b.asnumpy()
            a += 1  # a write through one is seen through the other
            np.testing.assert_array_equal(b.asnumpy(), before + 1)
            a -= 1
    metric = mx.metric.Accuracy()
    for length in (4, 6, 8):
        x, y = _task(np.random.RandomState(10 + length), 200, length)
        mod.forward(_batch(mx, x, y, length), is_train=False)
        metric.update([mx.nd.array(y)], mod.get_outputs())
    assert metric.get()[1] > 0.9, metric.get()


def test_monitor_prints_mxnet_stat_lines(mx):
    mx.random.seed(1)
    mod = mx.mod.BucketingModule(_sym_gen(mx), default_bucket_key=5, context=mx.cpu())
    mod.bind(data_shapes=[('data', (4, 5, 3))], label_shapes=[('softmax_label', (4,))])
    mod.init_params(initializer=mx.init.Constant(0.25))
    mon = mx.mon.Monitor(1, pattern='fc1.*')
    mod.install_monitor(mon)
    x = np.ones((4, 5, 3), np.float32)
    mon.tic()
    mod.forward(_batch(mx, x, np.zeros(4, np.float32), 5), is_train=False)
    stats = {name: float(value) for _, name, value in mon.toc()}
    # Monitor's default stat is norm(x)/sqrt(size): 0.25 for the weight (Constant), 0 for the bias
    # (MXNet's initializers zero biases), 3 * 0.25 for each output of fc1 (the mean of ones is 1).
    assert abs(stats['fc1_weight'] - 0.25) < 1e-6, stats
    assert stats['fc1_bias'] == 0.0, stats
    assert abs(stats['fc1_output'] - 0.75) < 1e-6, stats
    assert all(name.startswith('fc1') for name in stats)


def test_module_with_two_inputs_and_two_labels_trains(mx):
    mx.random.seed(2)
    rng = np.random.RandomState(3)
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    joint = mx.sym.Concat(mx.sym.FullyConnected(a, num_hidden=8, name='fa'),
                          mx.sym.FullyConnected(b, num_hidden=8, name='fb'), dim=1)
    hidden = mx.sym.Activation(joint, act_type='relu')
    cls = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(hidden, num_hidden=2, name='fc'), name='cls')
    reg = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(hidden, num_hidden=1, name='fr'), name='reg')
    net = mx.sym.Group([cls, reg])
    n = 400
    xa, xb = rng.uniform(-1, 1, (n, 4)).astype(np.float32), rng.uniform(-1, 1, (n, 4)).astype(np.float32)
    y_cls = (xa.sum(axis=1) > xb.sum(axis=1)).astype(np.float32)
    y_reg = (xa[:, :1] - xb[:, :1]).astype(np.float32)
    it = mx.io.NDArrayIter({'a': xa, 'b': xb}, {'cls_label': y_cls, 'reg_label': y_reg}, batch_size=20)
    mod = mx.mod.Module(net, data_names=['a', 'b'], label_names=['cls_label', 'reg_label'], context=mx.cpu())
    mod.fit(it, num_epoch=15, initializer=mx.init.Xavier(), optimizer='sgd',
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    it.reset()
    outputs = mod.predict(it)
    accuracy = ((outputs[0].asnumpy().argmax(axis=1)) == y_cls).mean()
    mse = ((outputs[1].asnumpy() - y_reg) ** 2).mean()
    assert accuracy > 0.9 and mse < 0.05, (accuracy, mse)
