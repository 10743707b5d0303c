"""Sparse graph variables and lazy updates through MXNet's unmodified frontend on weft: executors
bound with row_sparse / csr arguments and row_sparse gradients, _square_sum, SparseEmbedding, the
optimizer updates MXNet runs lazily on row_sparse gradients, and a Module with sparse parameters.
Expected values are MXNet 1.9.1's own (tests/operator/data/sparse_update.json, written by
tests/operator/gen_sparse_update_fixtures.py)."""
import json
import os

import numpy as np
import pytest

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'tests', 'operator',
                        'data', 'sparse_update.json')


@pytest.fixture(scope='module')
def fixtures():
    with open(FIXTURES) as f:
        return json.load(f)


def _array(mx, values, shape, stype):
    a = np.array(values, dtype=np.float32).reshape(shape)
    if stype == 'row_sparse' and not a.any():
        return mx.nd.sparse.zeros('row_sparse', shape)  # MXNet's zeros store no row
    return mx.nd.array(a).tostype(stype)


def _grad(mx, values, rows, shape):
    full = np.array(values, dtype=np.float32).reshape(shape)
    return mx.nd.sparse.row_sparse_array((full[rows], np.array(rows, dtype=np.int64)), shape=shape)


def test_optimizer_updates_match_mxnet(mx, fixtures):
    shape = tuple(fixtures['shape'])
    for case in fixtures['updates']:
        weight = _array(mx, case['weight'], shape, case['weight_stype'])
        states = [_array(mx, s, shape, t) for s, t in zip(case['states'], case['state_stypes'])]
        name = case['op']  # MXNet's frontend puts _sparse_X ops in mx.nd.sparse as X
        op = getattr(mx.nd.sparse, name[8:]) if name.startswith('_sparse_') else getattr(mx.nd, name)
        attrs = {k: (v == 'True' if v in ('True', 'False') else float(v)) for k, v in case['attrs'].items()}
        for i, step in enumerate(case['steps']):
            op(weight, _grad(mx, step['grad'], step['rows'], shape), *states, out=weight, **attrs)
            where = '%s step %d' % (case['name'], i)
            np.testing.assert_allclose(weight.asnumpy().ravel(), step['weight'], rtol=1e-5, atol=1e-6, err_msg=where)
            for s, want in zip(states, step['states']):
                np.testing.assert_allclose(s.asnumpy().ravel(), want, rtol=1e-5, atol=1e-6, err_msg=where)
        assert weight.stype == case['weight_stype']
        assert [s.stype for s in states] == case['state_stypes']


def test_sparse_adagrad_refuses_weight_decay(mx):
    w = mx.nd.ones((3, 2))
    g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [1]), shape=(3, 2))
    with pytest.raises(mx.base.MXNetError, match='weight decay'):
        mx.nd.sparse.adagrad_update(w, g, mx.nd.zeros((3, 2)), out=w, lr=0.1, wd=0.1)


def test_square_sum_storage_matches_mxnet(mx, fixtures):
    s = fixtures['square_sum']
    shape = tuple(fixtures['shape'])
    full = np.array(s['input'], dtype=np.float32).reshape(shape)
    # The input stores a row of zeros too: MXNet's row_sparse result stores the input's rows.
    x = mx.nd.sparse.row_sparse_array((full[s['input_rows']], s['input_rows']), shape=shape)
    for case in s['cases']:
        attrs = {k: (v == 'True' if v in ('True', 'False') else int(v)) for k, v in case['attrs'].items()}
        y = mx.nd._internal._square_sum(x, **attrs)
        assert y.stype == case['stype'], case['attrs']
        assert list(y.shape) == case['shape']
        np.testing.assert_allclose(y.asnumpy().ravel(), case['value'], rtol=1e-6)
        if 'rows' in case:
            assert y.indices.asnumpy().tolist() == case['rows']


def test_dot_csr_transposed_is_row_sparse_as_in_mxnet(mx, fixtures):
    d = fixtures['dot_transposed']
    x = mx.nd.sparse.csr_matrix((d['data'], d['indices'], d['indptr']), shape=tuple(d['shape']))
    rhs = mx.nd.array(np.array(d['rhs'], dtype=np.float32).reshape(d['shape'][0], -1))
    y = mx.nd.sparse.dot(x, rhs, transpose_a=True)
    assert y.stype == d['stype']
    assert y.indices.asnumpy().tolist() == d['rows']  # column 7 stores a zero: its row is stored
    np.testing.assert_allclose(y.asnumpy().ravel(), d['value'], rtol=1e-6)


def _symbols(mx):
    data, x, d = mx.sym.var('data'), mx.sym.var('x', stype='csr'), mx.sym.var('d')
    v = mx.sym.var('v', stype='row_sparse')
    w = mx.sym.var('embed_weight', stype='row_sparse')
    vs = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    return {
        'sparse_embedding': mx.sym.contrib.SparseEmbedding(data=data, weight=w, input_dim=8, output_dim=3,
                                                           name='embed'),
        'embedding_sparse_grad': mx.sym.Embedding(data=data, input_dim=8, output_dim=3, sparse_grad=True, name='emb'),
        'dot_csr_rsp': mx.sym.dot(x, v),
        'dot_csr_transposed': mx.sym.dot(x, d, transpose_a=True),
        'factorization_machine': mx.sym.elemwise_add(
            mx.sym.dot(mx.sym.square(x), vs), mx.sym.sum(mx.sym.square(mx.sym.dot(x, v)), axis=1, keepdims=True)),
        'square_sum_axis0': mx.sym._internal._square_sum(data=v, axis=0),
    }


def _arg(mx, a):
    shape = tuple(a['shape'])
    if a['stype'] == 'csr':
        return mx.nd.sparse.csr_matrix((a['data'], a['indices'], a['indptr']), shape=shape)
    dense = np.array(a['value'], dtype=np.float32).reshape(shape)
    if a['stype'] == 'row_sparse':
        rows = [i for i in range(shape[0]) if dense[i].any()]
        return mx.nd.sparse.row_sparse_array((dense[rows], rows), shape=shape)
    return mx.nd.array(dense)


def _check_case(mx, sym, case):
    args = {k: _arg(mx, a) for k, a in case['args'].items()}
    exe = sym.simple_bind(mx.cpu(), grad_req=case['grad_req'], **{k: a.shape for k, a in args.items()})
    for k, a in args.items():
        assert exe.arg_dict[k].stype == a.stype, (case['name'], k)
        a.copyto(exe.arg_dict[k])
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy().ravel(), case['output'], rtol=1e-5, atol=1e-6)
    head = np.array(case['head'], dtype=np.float32).reshape(exe.outputs[0].shape)
    exe.backward([mx.nd.array(head)])
    for k, want in case['grads'].items():
        g = exe.grad_dict[k]
        where = '%s: gradient of %s' % (case['name'], k)
        assert g.stype == want['stype'], where
        if 'rows' in want:
            assert g.indices.asnumpy().tolist() == want['rows'], where
        np.testing.assert_allclose(g.asnumpy().ravel(), want['value'], rtol=1e-5, atol=1e-6, err_msg=where)


def test_executor_sparse_gradients_match_mxnet(mx, fixtures):
    symbols = _symbols(mx)
    for case in fixtures['executors']:
        _check_case(mx, symbols[case['name']], case)


def test_split_executor_matches_mxnet(mx, fixtures):
    # dot(csr, row_sparse) inside a dense graph: the executor runs the dot on the sparse kernels
    # outside the dense graph (SparseSplit). identity passes values and gradients through, so
    # MXNet's numbers for the bare dot hold (its rows: the csr's stored columns).
    case = next(c for c in fixtures['executors'] if c['name'] == 'dot_csr_rsp')
    x, v = mx.sym.var('x', stype='csr'), mx.sym.var('v', stype='row_sparse')
    _check_case(mx, mx.sym.identity(mx.sym.dot(x, v)), case)


def test_split_with_dense_emulation_of_the_rest(mx, fixtures):
    # The dot is cut; square(x) keeps x sparse in the remainder, which the dense emulation runs.
    # The added term is 0, so MXNet's numbers for the bare dot hold.
    case = next(c for c in fixtures['executors'] if c['name'] == 'dot_csr_rsp')
    x, v = mx.sym.var('x', stype='csr'), mx.sym.var('v', stype='row_sparse')
    zero = 0 * mx.sym.sum(mx.sym.square(x), axis=1, keepdims=True)
    _check_case(mx, mx.sym.broadcast_add(mx.sym.dot(x, v), zero), case)


def test_split_executor_inside_autograd_record(mx, fixtures):
    # An executor run inside autograd.record() is not recorded, its cut dots included.
    case = next(c for c in fixtures['executors'] if c['name'] == 'dot_csr_rsp')
    x, v = mx.sym.var('x', stype='csr'), mx.sym.var('v', stype='row_sparse')
    with mx.autograd.record():
        _check_case(mx, mx.sym.identity(mx.sym.dot(x, v)), case)


def test_split_gradient_add_keeps_union(mx):
    # grad_req 'add' on the split's row_sparse gradient: it adds and stores the union of the rows
    # (the csr's stored columns, an explicitly stored 0 in column 5 included).
    y = mx.sym.identity(mx.sym.dot(mx.sym.var('x', stype='csr'), mx.sym.var('v', stype='row_sparse')))
    exe = y.simple_bind(mx.cpu(), grad_req={'x': 'null', 'v': 'add'}, x=(2, 6), v=(6, 2))
    exe.arg_dict['v'][:] = mx.nd.ones((6, 2)).tostype('row_sparse')
    batches = [([1.0, 2.0, 3.0], [1, 3, 4], [0, 2, 3]), ([4.0, 0.0], [3, 5], [0, 1, 2])]
    want = np.zeros((6, 2), dtype=np.float32)
    for data, indices, indptr in batches:
        x = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(2, 6))
        x.copyto(exe.arg_dict['x'])
        exe.forward(is_train=True)
        np.testing.assert_allclose(exe.outputs[0].asnumpy(), x.asnumpy().dot(np.ones((6, 2))))
        head = np.array([[1, 2], [3, 4]], dtype=np.float32)
        exe.backward([mx.nd.array(head)])
        want += x.asnumpy().T.dot(head)
    g = exe.grad_dict['v']
    assert g.stype == 'row_sparse'
    assert g.indices.asnumpy().tolist() == [1, 3, 4, 5]
    np.testing.assert_allclose(g.asnumpy(), want)


_NO_DENSE_COPY = """
import resource, numpy as np, mxnet as mx
nfeat, batch, nnz = 1000000, 512, 100
rs = np.random.RandomState(0)
indices = np.empty((batch, nnz), dtype=np.int64)
for i in range(batch):  # one row at a time: choice's result views an 8 MB permutation
    indices[i] = np.sort(rs.choice(nfeat, nnz, replace=False))
indices = indices.ravel()
x = mx.nd.sparse.csr_matrix((rs.uniform(size=batch * nnz).astype(np.float32), indices, np.arange(batch + 1) * nnz),
                            shape=(batch, nfeat))
label = mx.nd.array(rs.randint(0, 2, batch))
w = mx.sym.var('weight', shape=(nfeat, 2), stype='row_sparse')
pred = mx.sym.broadcast_add(mx.sym.sparse.dot(mx.sym.var('data', stype='csr'), w), mx.sym.var('bias', shape=(2,)))
net = mx.sym.SoftmaxOutput(pred, mx.sym.var('softmax_label'), name='out')
mod = mx.mod.Module(net, data_names=['data'], label_names=['softmax_label'])
mx.nd.waitall()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
mod.bind(data_shapes=[('data', (batch, nfeat))], label_shapes=[('softmax_label', (batch,))])
mod.init_params()
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
for _ in range(2):
    mod.forward_backward(mx.io.DataBatch([x], [label]))
    mod.update()
g = mod._exec_group.execs[0].grad_dict['weight']
assert g.stype == 'row_sparse' and g.indices.asnumpy().tolist() == sorted(set(indices.tolist()))
mx.nd.waitall()
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


def test_sparse_module_has_no_dense_copy_of_csr_batch():
    # MXNet's sparse linear classifier on 1M features, batch 512: a dense copy of one csr batch is
    # 2 GB (512 x 1M floats); the split binds it with none, so the process's peak memory grows by
    # far less (the weight and its optimizer state are 8 MB each). A fresh process, so that the
    # peak is this test's.
    import subprocess
    import sys
    out = subprocess.run([sys.executable, '-c', _NO_DENSE_COPY], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    grown_mb = int(out.stdout.split()[-1])
    assert grown_mb < 400, 'peak RSS grew by %d MB: a dense copy of the csr batch' % grown_mb


def test_row_sparse_gradient_add_keeps_union(mx):
    data = mx.sym.var('data')
    emb = mx.sym.Embedding(data=data, input_dim=6, output_dim=2, sparse_grad=True, name='e')
    exe = emb.simple_bind(mx.cpu(), grad_req='add', data=(2,))
    exe.arg_dict['e_weight'][:] = 1
    for rows in ([1, 3], [3, 4]):
        exe.arg_dict['data'][:] = mx.nd.array(rows)
        exe.forward(is_train=True)
        exe.backward([mx.nd.ones((2, 2))])
    g = exe.grad_dict['e_weight']
    assert g.stype == 'row_sparse'
    assert g.indices.asnumpy().tolist() == [1, 3, 4]
    np.testing.assert_array_equal(g.asnumpy()[:, 0], [0, 1, 0, 2, 1, 0])


def test_sparse_embedding_index_out_of_range(mx):
    data = mx.sym.var('data')
    emb = mx.sym.contrib.SparseEmbedding(data=data, input_dim=4, output_dim=2, name='e')
    exe = emb.simple_bind(mx.cpu(), data=(2,))
    exe.arg_dict['data'][:] = mx.nd.array([1, 9])
    exe.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match=r'data\[1\] = 9 is outside'):
        exe.backward([mx.nd.ones((2, 2))])
        exe.grad_dict['e_weight'].asnumpy()


def _fm_module(mx, feature_dim, optimizer):
    x = mx.sym.var('data', stype='csr')
    v = mx.sym.var('v', shape=(feature_dim, 2), init=mx.init.Normal(0.1), stype='row_sparse')
    w = mx.sym.var('w', shape=(feature_dim, 1), init=mx.init.Normal(0.1), stype='row_sparse')
    vs = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    out = mx.sym.dot(x, w) + 0.5 * (mx.sym.sum(mx.sym.square(mx.sym.dot(x, v)), axis=1, keepdims=True)
                                    - mx.sym.dot(mx.sym.square(x), vs))
    model = mx.sym.LinearRegressionOutput(out, mx.sym.var('label'))
    rs = np.random.RandomState(3)
    dense = rs.uniform(0, 1, (64, feature_dim)) * (rs.uniform(0, 1, (64, feature_dim)) < 0.2)
    dense[:, feature_dim - 5:] = 0  # the last 5 features never occur: their rows must never change
    it = mx.io.NDArrayIter(mx.nd.array(dense).tostype('csr'), {'label': mx.nd.array(dense.sum(axis=1, keepdims=True))},
                           batch_size=16, last_batch_handle='discard')
    mod = mx.mod.Module(model, data_names=['data'], label_names=['label'])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mx.random.seed(5)  # the initial weights: a run is the same whatever ran before it
    mod.init_params()
    mod.init_optimizer(optimizer=optimizer)
    return mod, it


@pytest.mark.parametrize('optimizer', ['sgd', 'adam', 'adagrad'])
def test_module_with_sparse_parameters_updates_lazily(mx, optimizer):
    opt = {'sgd': mx.optimizer.SGD(learning_rate=0.01, momentum=0.9, wd=0.1),
           'adam': mx.optimizer.Adam(learning_rate=0.01, wd=0.1),
           'adagrad': mx.optimizer.AdaGrad(learning_rate=0.1)}[optimizer]
    mod, it = _fm_module(mx, 30, opt)
    args, _ = mod.get_params()
    assert args['v'].stype == 'row_sparse' and args['w'].stype == 'row_sparse'
    assert mod._exec_group.execs[0].grad_dict['v'].stype == 'row_sparse'
    before = {k: args[k].asnumpy() for k in ('v', 'w')}
    metric = mx.metric.create('mse')
    errors = []
    for _ in range(4):
        it.reset()
        metric.reset()
        for batch in it:
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            mod.update()
        errors.append(metric.get()[1])
    assert errors[-1] < errors[0], errors
    after, _ = mod.get_params()
    for k in ('v', 'w'):
        now = after[k].asnumpy()
        # Lazy updates: the rows no batch names keep their values (no weight decay, no momentum).
        np.testing.assert_array_equal(now[-5:], before[k][-5:])
        assert not np.allclose(now[:-5], before[k][:-5])


def test_bind_with_sparse_arrays(mx):
    # Executor.bind with the frontend's own arrays: a csr input (an explicitly stored 0 in column
    # 3) and a row_sparse gradient buffer, which receives the csr's stored columns as its rows.
    y = mx.sym.dot(mx.sym.var('x', stype='csr'), mx.sym.var('v'))
    x = mx.nd.sparse.csr_matrix(([1.0, 0.0, 2.0], [0, 3, 1], [0, 2, 3]), shape=(2, 4))
    grad = mx.nd.sparse.zeros('row_sparse', (4, 2))
    exe = y.bind(mx.cpu(), args={'x': x, 'v': mx.nd.ones((4, 2))}, args_grad={'v': grad},
                 grad_req={'x': 'null', 'v': 'write'})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [[1, 1], [2, 2]])
    exe.backward([mx.nd.ones((2, 2))])
    assert grad.stype == 'row_sparse' and grad.indices.asnumpy().tolist() == [0, 1, 3]
    np.testing.assert_allclose(grad.asnumpy(), [[1, 1], [2, 2], [0, 0], [0, 0]])
