"""The Python examples of the KVStore seed (shared/seeds/mxnet.kvstore.txt), with its numbers.

The seed's `gpus = [mx.gpu(i) for i in range(4)]` become four cpu devices (weft's cpu plugin
has four, as MXNet's own test_kvstore.py uses mx.cpu(i)): what is summed and copied is the same.
The row_sparse examples (init, push, row_sparse_pull with sorted, duplicate and unsorted row ids)
are checked with the seed's numbers too."""
import numpy as np
import pytest

SHAPE = (2, 3)


@pytest.fixture
def devices(mx):
    return [mx.cpu(i) for i in range(4)]


@pytest.fixture
def kv(mx):
    kv = mx.kv.create('local')
    kv.init('3', mx.nd.ones(SHAPE) * 2)
    return kv


def test_init_and_pull(mx, kv):
    a = mx.nd.zeros(SHAPE)
    kv.pull('3', out=a)
    np.testing.assert_array_equal(a.asnumpy(), [[2, 2, 2], [2, 2, 2]])
    keys = ['5', '7', '9']
    kv.init(keys, [mx.nd.ones(SHAPE)] * len(keys))


def test_pull_examples(mx, kv, devices):
    a = mx.nd.zeros(SHAPE)
    kv.pull('3', out=a)
    np.testing.assert_array_equal(a.asnumpy(), np.full(SHAPE, 2))
    b = [mx.nd.ones(SHAPE, d) for d in devices]
    kv.pull('3', out=b)
    np.testing.assert_array_equal(b[1].asnumpy(), np.full(SHAPE, 2))
    keys = ['5', '7', '9']
    kv.init(keys, [mx.nd.ones(SHAPE) * 2] * len(keys))
    b = [mx.nd.zeros(SHAPE)] * len(keys)
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1].asnumpy(), np.full(SHAPE, 2))
    keys = ['6', '8', '10']
    kv.init(keys, [mx.nd.ones(SHAPE) * 2] * len(keys))
    b = [[mx.nd.ones(SHAPE, d) for d in devices]] * len(keys)
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1][1].asnumpy(), np.full(SHAPE, 2))


def test_push_examples(mx, kv, devices):
    a = mx.nd.zeros(SHAPE)
    kv.push('3', mx.nd.ones(SHAPE) * 8)
    kv.pull('3', out=a)
    np.testing.assert_array_equal(a.asnumpy(), np.full(SHAPE, 8))
    b = [mx.nd.ones(SHAPE, d) for d in devices]
    kv.push('3', b)
    kv.pull('3', out=a)
    np.testing.assert_array_equal(a.asnumpy(), np.full(SHAPE, 4))
    keys = ['4', '5', '6']
    kv.init(keys, [mx.nd.zeros(SHAPE)] * len(keys))
    kv.push(keys, [mx.nd.ones(SHAPE)] * len(keys))
    b = [mx.nd.zeros(SHAPE)] * len(keys)
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1].asnumpy(), np.full(SHAPE, 1))
    keys = ['7', '8', '9']
    kv.init(keys, [mx.nd.zeros(SHAPE)] * len(keys))
    b = [[mx.nd.ones(SHAPE, d) for d in devices]] * len(keys)
    kv.push(keys, b)
    kv.pull(keys, out=b)
    np.testing.assert_array_equal(b[1][1].asnumpy(), np.full(SHAPE, 4))


def test_pushpull_examples(mx, kv, devices):
    a = mx.nd.zeros(SHAPE)
    kv.pushpull('3', mx.nd.ones(SHAPE) * 8, out=a)
    np.testing.assert_array_equal(a.asnumpy(), np.full(SHAPE, 8))
    b = [mx.nd.ones(SHAPE, d) for d in devices]
    kv.pushpull('3', b, out=a)
    np.testing.assert_array_equal(a.asnumpy(), np.full(SHAPE, 4))
    keys = ['4', '5', '6']
    kv.init(keys, [mx.nd.zeros(SHAPE)] * len(keys))
    b = [mx.nd.zeros(SHAPE)] * len(keys)
    kv.pushpull(keys, [mx.nd.ones(SHAPE)] * len(keys), out=b)
    np.testing.assert_array_equal(b[1].asnumpy(), np.full(SHAPE, 1))
    keys = ['7', '8', '9']
    kv.init(keys, [mx.nd.zeros(SHAPE)] * len(keys))
    b = [[mx.nd.ones(SHAPE, d) for d in devices]] * len(keys)
    kv.pushpull(keys, b)
    np.testing.assert_array_equal(b[1][1].asnumpy(), np.full(SHAPE, 4))


def test_set_optimizer_sgd(mx):
    kv = mx.kv.create()
    shape = (2, 2)
    weight = mx.nd.zeros(shape)
    kv.init(3, weight)
    kv.set_optimizer(mx.optimizer.SGD())
    grad = mx.nd.ones(shape)
    kv.push(3, grad)
    kv.pull(3, out=weight)
    np.testing.assert_allclose(weight.asnumpy(), [[-0.01, -0.01], [-0.01, -0.01]], rtol=1e-6)


def test_custom_updater(mx):
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.ones(SHAPE))
    calls = []

    def update(key, grad, weight):
        calls.append(key)
        weight += grad * 2

    kv._set_updater(update)
    kv.push(3, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3))
    assert calls == [3]


def test_type_rank_size(mx):
    kv = mx.kv.create('device')
    assert kv.type == 'device'
    assert kv.rank == 0
    assert kv.num_workers == 1


def test_row_sparse_init_and_pull(mx, kv):
    kv.init('4', mx.nd.ones(SHAPE).tostype('row_sparse'))
    b = mx.nd.sparse.zeros('row_sparse', SHAPE)
    kv.row_sparse_pull('4', row_ids=mx.nd.array([0, 1]), out=b)
    assert repr(b) == '\n<RowSparseNDArray 2x3 @cpu(0)>'
    np.testing.assert_array_equal(b.asnumpy(), np.ones(SHAPE))


def test_row_sparse_push(mx, kv):
    b = mx.nd.sparse.zeros('row_sparse', SHAPE)
    kv.init('10', mx.nd.sparse.zeros('row_sparse', SHAPE))
    kv.push('10', mx.nd.ones(SHAPE).tostype('row_sparse'))
    kv.row_sparse_pull('10', row_ids=mx.nd.array([0, 1]), out=b)
    assert b.stype == 'row_sparse'
    np.testing.assert_array_equal(b.asnumpy(), np.ones(SHAPE))


def test_row_sparse_pull_row_ids(mx, kv):
    shape = (3, 3)
    kv.init('3r', mx.nd.ones(shape).tostype('row_sparse'))
    a = mx.nd.sparse.zeros('row_sparse', shape)
    kv.row_sparse_pull('3r', out=a, row_ids=mx.nd.array([0, 2], dtype='int64'))
    np.testing.assert_array_equal(a.asnumpy(), [[1, 1, 1], [0, 0, 0], [1, 1, 1]])
    kv.row_sparse_pull('3r', out=a, row_ids=mx.nd.array([2, 2], dtype='int64'))
    np.testing.assert_array_equal(a.asnumpy(), [[0, 0, 0], [0, 0, 0], [1, 1, 1]])
    np.testing.assert_array_equal(a.indices.asnumpy(), [2])
    kv.row_sparse_pull('3r', out=a, row_ids=mx.nd.array([1, 0], dtype='int64'))
    np.testing.assert_array_equal(a.asnumpy(), [[1, 1, 1], [1, 1, 1], [0, 0, 0]])
    np.testing.assert_array_equal(a.indices.asnumpy(), [0, 1])


@pytest.mark.parametrize('kind', ['local', 'device'])
def test_broadcast_keeps_a_recorded_source_readable(mx, kind):
    # Gluon's Trainer broadcasts a parameter's first copy into all its copies, also in the middle of
    # a recorded forward pass (MXNet's test_trainer_multi_layer_init): the backward still reads the
    # recorded copy, and every other copy receives its value.
    w0, w1 = mx.nd.array([1.0, 2.0], ctx=mx.cpu(0)), mx.nd.zeros(2, ctx=mx.cpu(1))
    w0.attach_grad()
    with mx.autograd.record():
        y = (w0 * w0).sum()
        kv = mx.kv.create(kind)
        kv.broadcast('w', w0, out=[w0, w1])
    y.backward()
    np.testing.assert_array_equal(w0.grad.asnumpy(), [2, 4])
    np.testing.assert_array_equal(w1.asnumpy(), [1, 2])
    # A broadcast into other arrays still writes them all.
    outs = [mx.nd.zeros(2, ctx=mx.cpu(i)) for i in range(2)]
    kv.broadcast('v', mx.nd.array([3.0, 4.0]), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), [3, 4])
