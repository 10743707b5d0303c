"""Sparse NDArrays (row_sparse, csr) through MXNet's unmodified mx.nd.sparse on weft: creation from
parts and from dense, tostype/cast_storage, the parts, check_format, copies, files and the dense
fallback of other operators. Expected values follow MXNet's documentation of mx.nd.sparse."""
import numpy as np
import pytest


def test_row_sparse_from_parts_and_back(mx):
    data = np.array([[1, 2], [3, 4]], dtype=np.float32)
    a = mx.nd.sparse.row_sparse_array((data, [1, 3]), shape=(5, 2))
    assert a.stype == 'row_sparse' and a.shape == (5, 2) and a.dtype == np.float32
    np.testing.assert_array_equal(a.indices.asnumpy(), [1, 3])
    assert a.indices.dtype == np.int64
    np.testing.assert_array_equal(a.data.asnumpy(), data)
    dense = np.zeros((5, 2), dtype=np.float32)
    dense[[1, 3]] = data
    np.testing.assert_array_equal(a.asnumpy(), dense)
    np.testing.assert_array_equal(a.tostype('default').asnumpy(), dense)


def test_csr_from_parts_and_from_dense(mx):
    dense = np.array([[0, 1, 0], [0, 0, 0], [2, 0, 3]], dtype=np.float32)
    c = mx.nd.array(dense).tostype('csr')
    assert c.stype == 'csr'
    np.testing.assert_array_equal(c.indptr.asnumpy(), [0, 1, 1, 3])
    np.testing.assert_array_equal(c.indices.asnumpy(), [1, 0, 2])
    np.testing.assert_array_equal(c.data.asnumpy(), [1, 2, 3])
    d = mx.nd.sparse.csr_matrix(([1, 2, 3], [1, 0, 2], [0, 1, 1, 3]), shape=(3, 3))
    np.testing.assert_array_equal(d.asnumpy(), dense)
    np.testing.assert_array_equal(mx.nd.sparse.cast_storage(d, stype='default').asnumpy(), dense)
    r = c.tostype('default').tostype('row_sparse')
    assert r.stype == 'row_sparse'
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2])
    # MXNet's cast_storage has no csr -> row_sparse kernel; the op refuses it as MXNet does.
    with pytest.raises(mx.base.MXNetError, match='csr to row_sparse'):
        mx.nd.cast_storage(c, stype='row_sparse')


def test_zeros_and_empty_arrays(mx):
    z = mx.nd.sparse.zeros('csr', (2, 4))
    assert z.stype == 'csr'
    np.testing.assert_array_equal(z.indptr.asnumpy(), [0, 0, 0])
    assert z.data.shape == (0,)
    r = mx.nd.sparse.zeros('row_sparse', (3, 2), dtype='float64')
    assert r.dtype == np.float64 and r.indices.shape == (0,)
    np.testing.assert_array_equal(r.asnumpy(), np.zeros((3, 2)))


def test_check_format_errors(mx):
    bad = mx.nd.sparse.row_sparse_array(([[1.0], [2.0]], [2, 1]), shape=(4, 1))
    bad.check_format(full_check=False)
    with pytest.raises(mx.base.MXNetError, match='ascending order'):
        bad.check_format()
    out_of_range = mx.nd.sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 3))
    with pytest.raises(mx.base.MXNetError, match='less than the number of columns'):
        out_of_range.check_format()


def test_save_and_load_keep_storage(mx, tmp_path):
    r = mx.nd.sparse.row_sparse_array(([[1.5, 2.5]], [2]), shape=(3, 2))
    c = mx.nd.array([[0, 7], [8, 0]]).tostype('csr')
    path = str(tmp_path / 's.params')
    mx.nd.save(path, {'r': r, 'c': c})
    back = mx.nd.load(path)
    assert back['r'].stype == 'row_sparse' and back['c'].stype == 'csr'
    np.testing.assert_array_equal(back['r'].asnumpy(), r.asnumpy())
    np.testing.assert_array_equal(back['c'].asnumpy(), [[0, 7], [8, 0]])


def test_copies_and_dense_fallback(mx):
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    c = r.copy()
    assert c.stype == 'row_sparse'
    np.testing.assert_array_equal(c.asnumpy(), r.asnumpy())
    f = r.astype('float64')
    assert f.stype == 'row_sparse' and f.dtype == np.float64
    # An operator without a sparse kernel runs on a dense copy (MXNet's storage fallback).
    s = mx.nd.exp(r)
    assert s.stype == 'default'
    np.testing.assert_allclose(s.asnumpy(), np.exp(r.asnumpy()), rtol=1e-6)


def test_kvstore_pull_into_sparse_outs(mx):
    kv = mx.kv.create('local')
    kv.init('w', mx.nd.ones((3, 2)) * 2)
    r = mx.nd.sparse.zeros('row_sparse', (3, 2))
    kv.pull('w', out=r)  # ignore_sparse (the default) leaves a row_sparse out alone, as MXNet does
    assert r.indices.shape == (0,)
    kv.pull('w', out=r, ignore_sparse=False)
    assert r.stype == 'row_sparse'
    np.testing.assert_array_equal(r.asnumpy(), np.full((3, 2), 2))
    with pytest.raises(mx.base.MXNetError, match='out must be row_sparse'):
        kv.row_sparse_pull('w', out=mx.nd.zeros((3, 2)), row_ids=mx.nd.array([0]))
    with pytest.raises(mx.base.MXNetError, match=r'row_ids\[0\] = 3 is outside'):
        kv.row_sparse_pull('w', out=r, row_ids=mx.nd.array([3]))


def test_scalar_comparisons_keep_storage_where_mxnet_does(mx):
    # MXNet keeps the storage type when comparing 0 with the scalar gives 0 (1 == 0 is false),
    # else the result is dense (0 == 0 everywhere outside the stored rows).
    for stype in ['row_sparse', 'csr']:
        y = mx.nd.array([[0, 1], [2, 0]]).tostype(stype)
        z = y == 1
        assert z.stype == stype
        np.testing.assert_array_equal(z.asnumpy(), [[0, 1], [0, 0]])
        z = y == 0
        assert z.stype == 'default'
        np.testing.assert_array_equal(z.asnumpy(), [[1, 0], [0, 1]])
        assert (y > 1).stype == stype and (y <= 1).stype == 'default'


def test_sparse_namespace_aliases_and_lazy_update(mx):
    c = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')
    # mx.nd.sparse.slice is MXNet's alias _sparse_slice of slice.
    np.testing.assert_array_equal(mx.nd.sparse.slice(c, begin=(1, 0), end=(2, 3)).asnumpy(), [[2, 0, 3]])
    w = mx.nd.ones((3, 2))
    g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [1]), shape=(3, 2))
    # MXNet's lazy update touches only row 1; the dense one (lazy_update=False) decays rows 0 and 2 too.
    mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 1], [0.89, 0.89], [1, 1]], rtol=1e-6)
    w[:] = 1
    mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, lazy_update=False, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[0.99, 0.99], [0.89, 0.89], [0.99, 0.99]], rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match='pass out=weight'):
        mx.nd.sgd_update(w, g, lr=0.1, out=mx.nd.zeros((3, 2)))


def test_getnnz(mx):
    c = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')
    n = mx.nd.contrib.getnnz(c)
    assert n.dtype == np.int64
    np.testing.assert_array_equal(n.asnumpy(), [3])
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(c, axis=1).asnumpy(), [1, 2])
    with pytest.raises(mx.base.MXNetError, match='axis = 0 is not supported'):
        mx.nd.contrib.getnnz(c, axis=0)


def test_parts_of_another_dtype_are_converted(mx):
    # MXNet's test_create_sparse_nd_infer_shape: float32 values into an int32 csr (truncated), the
    # shape inferred from the int64 indices' max.
    data = mx.nd.array([1.7, -2.5, 3.2])
    indices, indptr = mx.nd.array([0, 4, 1], dtype='int64'), mx.nd.array([0, 2, 3], dtype='int64')
    a = mx.nd.sparse.csr_matrix((data, indices, indptr), dtype='int32')
    assert a.dtype == np.int32 and a.shape == (2, 5)
    assert a.data.asnumpy().tolist() == [1, -2, 3]
    r = mx.nd.sparse.row_sparse_array((mx.nd.array([[1.5, 2.5]]), mx.nd.array([2], dtype='int64')), dtype='int32')
    assert r.shape == (3, 2) and r.asnumpy().tolist() == [[0, 0], [0, 0], [1, 2]]
    assert mx.nd.max(mx.nd.array([3, 2 ** 40, -1], dtype='int64')).asscalar() == 2 ** 40


def test_take_of_csr_rows_is_csr(mx):
    # As MXNet's csr take (axis 0, clip or wrap): the rows of an int32 csr by float positions.
    d = mx.nd.array([[1, 0, 2], [0, 3, 0]], dtype='int32').tostype('csr')
    for mode, want in [('clip', [[0, 3, 0], [1, 0, 2], [0, 3, 0]]), ('wrap', [[0, 3, 0], [1, 0, 2], [0, 3, 0]])]:
        got = mx.nd.take(d, mx.nd.array([1, 0, 5]), mode=mode)
        assert got.stype == 'csr' and got.dtype == np.int32
        assert got.asnumpy().tolist() == want and got.indptr[0].asscalar() == 0
    assert mx.nd.take(d, mx.nd.array([1, 0]), mode='raise').stype == 'default'
    assert mx.nd.take(d, mx.nd.array([1]), axis=1).stype == 'default'


def test_sparse_gradient_buffers_and_sparse_variables(mx):
    # Gluon's grad_stype='row_sparse' (MXNet's test_trainer_sparse_kv): a dense variable's gradient
    # goes into a row_sparse buffer.
    x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    x.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        y = x * 2
    y.backward()
    assert x.grad.stype == 'row_sparse'
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((3, 2), 2))
    with mx.autograd.record():  # two terms: their sum goes into the buffer
        y = x * x + x * 3
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * x.asnumpy() + 3)
    # A row_sparse variable used by an op weft runs densely (row_sparse_data's w + 1): the gradient
    # reaches it through the dense copy.
    w = mx.nd.sparse.row_sparse_array((mx.nd.array([[1.0], [2.0]]), mx.nd.array([0, 2], dtype='int64')), shape=(3, 1))
    w.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        z = (w + 1) * mx.nd.array([[1.0], [2.0], [3.0]])
    z.backward()
    assert w.grad.stype == 'row_sparse'
    np.testing.assert_array_equal(w.grad.asnumpy(), [[1], [2], [3]])


def test_lazy_update_of_every_row_is_the_dense_update(mx):
    # A row_sparse gradient that stores every row: sgd's lazy update is the dense one (Gluon's
    # Trainer steps a row_sparse-gradient parameter this way); a gradient of some rows is refused.
    weight = mx.nd.ones((3, 2))
    grad = mx.nd.array([[1, 2], [3, 4], [5, 6]]).tostype('row_sparse')
    mx.nd.sgd_update(weight, grad, lr=0.5, wd=0.1, out=weight)
    np.testing.assert_allclose(weight.asnumpy(), 0.95 - 0.5 * np.array([[1, 2], [3, 4], [5, 6]]), rtol=1e-6)


def test_sparse_retain_keeps_the_named_rows(mx):
    # mx.nd.sparse.retain (Gluon's Parameter.row_sparse_data): the values are MXNet 1.9.1's for
    # this case; MXNet keeps the indices in the order given ([3, 0, 1]), weft stores them sorted
    # (a row_sparse array's own format), which gives the same dense array.
    x = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 2, 3]), shape=(5, 2))
    r = mx.nd.sparse.retain(x, mx.nd.array([3, 0, 1]))
    assert r.stype == 'row_sparse'
    r.check_format(True)
    np.testing.assert_array_equal(r.asnumpy(), [[1, 2], [0, 0], [0, 0], [5, 6], [0, 0]])
    assert sorted(r.indices.asnumpy().tolist()) == [0, 1, 3]
    with pytest.raises(mx.base.MXNetError, match='takes a row_sparse array'):
        mx.nd.sparse.retain(mx.nd.ones((2, 2)), mx.nd.array([0]))


def test_csr_row_slice_stays_csr(mx):
    # MXNet slices a csr array along its rows into a csr array (NDArrayIter's batches of csr data);
    # the parts are sliced, so an explicitly stored zero stays stored.
    x = mx.nd.sparse.csr_matrix(([1.0, 0.0, 2.0, 3.0], [0, 3, 1, 2], [0, 2, 3, 4]), shape=(3, 4))
    y = x[1:3]
    assert y.stype == 'csr' and y.shape == (2, 4)
    assert y.indptr.asnumpy().tolist() == [0, 1, 2] and y.indices.asnumpy().tolist() == [1, 2]
    np.testing.assert_array_equal(y.asnumpy(), [[0, 2, 0, 0], [0, 0, 3, 0]])
    z = x[0:1]
    assert z.indices.asnumpy().tolist() == [0, 3] and z.data.asnumpy().tolist() == [1.0, 0.0]


def test_kvstore_row_sparse_push_updates_lazily(mx):
    # kv.push of row_sparse gradients from two devices with an optimizer set: the updater gets
    # their row_sparse sum, and sgd's lazy_update changes only those rows (weight decay included):
    # the other rows keep their values, as on MXNet (MXNet's SGD with lazy_update=True).
    shape = (5, 3)
    w0 = np.arange(15, dtype=np.float32).reshape(shape)
    for momentum in (0.0, 0.9):
        kv = mx.kv.create('local')
        kv.init('w', mx.nd.array(w0))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, wd=0.1, momentum=momentum))
        want, mom = w0.copy(), np.zeros(shape, dtype=np.float32)
        for step in range(3):
            rows_a, rows_b = [1, 3], [3 if step < 2 else 4]
            ga = np.full((2, 3), step + 1, dtype=np.float32)
            gb = np.full((1, 3), 2, dtype=np.float32)
            kv.push('w', [mx.nd.sparse.row_sparse_array((ga, rows_a), shape=shape, ctx=mx.cpu(0)),
                          mx.nd.sparse.row_sparse_array((gb, rows_b), shape=shape, ctx=mx.cpu(1))])
            g = np.zeros(shape, dtype=np.float32)
            g[rows_a] += ga
            g[rows_b] += gb
            for r in sorted(set(rows_a + rows_b)):  # sgd_(mom_)update's lazy rows
                mom[r] = momentum * mom[r] - 0.1 * (g[r] + 0.1 * want[r])
                want[r] = want[r] + mom[r]
        out = mx.nd.zeros(shape)
        kv.pull('w', out=out)
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out.asnumpy()[[0, 2]], w0[[0, 2]])


def test_kvstore_pull_after_lazy_updates_is_the_whole_current_value(mx):
    # The sparse training loop: row_sparse pushes, lazy Adam through MXNet's Python updater, a pull
    # into the same dense out after each. weft copies only the rows updated since the out's last
    # pull; whatever happened in between, the out must equal the whole current value.
    import ctypes
    shape = (50, 2)
    rng = np.random.RandomState(0)
    kv = mx.kv.create('local')
    kv.init(0, mx.nd.array(rng.randn(*shape)))
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1, lazy_update=True))
    out = mx.nd.zeros(shape)

    def check(step):  # against every row, read by a row_sparse_pull
        every = mx.nd.sparse.zeros('row_sparse', shape)
        kv.row_sparse_pull(0, out=every, row_ids=mx.nd.arange(shape[0], dtype='int64'))
        np.testing.assert_array_equal(out.asnumpy(), every.asnumpy(), err_msg=step)

    def push(rows):
        g = rng.randn(len(rows), 2).astype(np.float32)
        kv.push(0, mx.nd.sparse.row_sparse_array((g, rows), shape=shape))

    kv.pull(0, out=out)
    check('first pull')
    for step in range(3):
        push([1, 7 + step, 30])
        kv.pull(0, out=out)
        check(f'push {step}')
    push([2])
    push([40, 41])  # two pushes, one pull: the rows of both
    kv.pull(0, out=out)
    check('two pushes')
    kv.pull(0, out=out)
    check('nothing pushed')
    out[:] = 5
    push([3])
    kv.pull(0, out=out)
    check('out written by out[:] = 5')
    # Written through its data pointer (the engine sees no write): the whole value is copied.
    out.wait_to_read()
    ptr = ctypes.c_void_p()
    mx.base.check_call(mx.base._LIB.MXNDArrayGetData(out.handle, ctypes.byref(ptr)))
    (ctypes.c_float * 100).from_address(ptr.value)[20] = 99.0  # row 10
    push([4])
    kv.pull(0, out=out)
    check('out written through MXNDArrayGetData')


def test_embedding_sparse_grad_under_autograd_stores_the_batch_rows(mx):
    # Embedding(sparse_grad=True) recorded by autograd (Gluon's nn.Embedding(sparse_grad=True)):
    # the weight's gradient is row_sparse and stores every row the batch names, ascending, a row
    # whose gradient sums to zero included; two lookups of one weight sum to the union of their
    # rows. Numbers and stored rows are MXNet 1.9.1's for these cases.
    w = mx.nd.arange(20).reshape((5, 4))
    w.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        a = mx.nd.Embedding(mx.nd.array([0, 2]), w, input_dim=5, output_dim=4, sparse_grad=True)
        b = mx.nd.Embedding(mx.nd.array([2, 3]), w, input_dim=5, output_dim=4, sparse_grad=True)
        y = a * 0 + b
    y.backward()
    assert w.grad.stype == 'row_sparse'
    assert w.grad.indices.asnumpy().tolist() == [0, 2, 3]
    np.testing.assert_array_equal(w.grad.data.asnumpy(), [[0] * 4, [1] * 4, [1] * 4])
    # Indices are truncated toward zero, as the forward reads them.
    with mx.autograd.record():
        a = mx.nd.Embedding(mx.nd.array([1.7, 3.2, 3]), w, input_dim=5, output_dim=4, sparse_grad=True)
    a.backward()
    assert w.grad.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_array_equal(w.grad.data.asnumpy()[:, 0], [1, 2])
    # An index outside [0, input_dim) is an error, as in MXNet (the dense gradient clips it).
    with mx.autograd.record():
        a = mx.nd.Embedding(mx.nd.array([0, 7, 2]), w, input_dim=5, output_dim=4, sparse_grad=True)
    with pytest.raises(mx.base.MXNetError, match=r'out of bound: data\[1\] = 7'):
        a.backward()
        w.grad.wait_to_read()


def test_gluon_sparse_embedding_trains_on_the_batch_rows(mx):
    # MXNet 1.9.1: gradient rows [2, 7, 9] with sums 2, 1, 3; one sgd step at rate 1 from 0.5.
    net = mx.gluon.nn.Embedding(10, 3, sparse_grad=True)
    net.initialize(mx.init.Constant(0.5))
    x = mx.nd.array([[7, 2], [2, 9]])
    with mx.autograd.record():
        y = (net(x) * mx.nd.array([[[1], [0]], [[2], [3]]])).sum()
    y.backward()
    g = net.weight.grad()
    assert g.stype == 'row_sparse' and g.indices.asnumpy().tolist() == [2, 7, 9]
    np.testing.assert_array_equal(g.data.asnumpy()[:, 0], [2, 1, 3])
    mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0}).step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy()[:, 0], [0.5, 0.5, -1.5, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, -2.5])
