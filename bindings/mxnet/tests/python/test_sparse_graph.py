"""Bound graphs with sparse storage through MXNet's unmodified frontend on weft: cast_storage,
sparse_retain, unary ops of row_sparse and csr arguments and the scatter ops inside a Symbol bound
with sparse arguments and gradients. Each case is MXNet 1.9.1's own run of the same graph
(data/sparse_graph.json, written by gen_sparse_graph_fixtures.py with the real libmxnet): the
outputs' storage types, values and stored rows or elements, the gradients' storage types and
values, and the storage types simple_bind gives gradients and outputs."""
import json
import os

import numpy as np
import pytest

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'sparse_graph.json')) as f:
    FIXTURES = json.load(f)['cases']


def _nd(mx, a):
    return mx.nd.array(np.array(a['dense']).reshape(a['shape']), dtype=a.get('dtype', 'float32')).tostype(a['stype'])


def _dense(values):
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _check(got, want, what):
    assert got.stype == want['stype'], what
    np.testing.assert_allclose(got.asnumpy().astype(np.float64).ravel(), _dense(want['dense']), rtol=1e-5, atol=1e-6,
                               err_msg=what)
    if want['stype'] == 'row_sparse':
        assert got.indices.asnumpy().tolist() == want['indices'], what + ': stored rows'
    if want['stype'] == 'csr':
        assert got.indptr.asnumpy().tolist() == want['indptr'], what + ': indptr'
        assert got.indices.asnumpy().tolist() == want['indices'], what + ': indices'


def _bind(mx, case):
    sym = mx.sym.load_json(case['symbol'])
    names = sym.list_arguments()
    assert names == [a['name'] for a in case['args']]
    args = {a['name']: _nd(mx, a) for a in case['args']}
    grads = {a['name']: mx.nd.zeros(a['shape'], stype=s) for a, s in zip(case['args'], case['grad_stypes']) if s}
    reqs = {n: 'write' if n in grads else 'null' for n in names}
    return sym, sym.bind(mx.cpu(), args, args_grad=grads, grad_req=reqs), grads


@pytest.mark.parametrize('case', FIXTURES, ids=[c['name'] for c in FIXTURES])
def test_bound_graph_matches_mxnet(mx, case):
    sym, exe, grads = _bind(mx, case)
    exe.forward(is_train=True)
    for i, (got, want) in enumerate(zip(exe.outputs, case['outputs'])):
        _check(got, want, '%s output %d' % (case['name'], i))
    heads = case['heads']
    exe.backward(None if heads is None else [_nd(mx, h) for h in heads])
    for a, want in zip(case['args'], case['grads']):
        if want is not None:
            got = grads[a['name']]
            assert got.stype == want['stype'], a['name']
            np.testing.assert_allclose(got.asnumpy().ravel(), _dense(want['dense']), rtol=1e-5, atol=1e-6,
                                       err_msg='%s gradient of %s' % (case['name'], a['name']))


@pytest.mark.parametrize('case', FIXTURES, ids=[c['name'] for c in FIXTURES])
def test_simple_bind_storage_types_match_mxnet(mx, case):
    sym = mx.sym.load_json(case['symbol'])
    shapes = {a['name']: tuple(a['shape']) for a in case['args']}
    exe = sym.simple_bind(mx.cpu(), stype_dict={a['name']: a['stype'] for a in case['args']},
                          type_dict={a['name']: a['dtype'] for a in case['args']}, **shapes)
    names = sym.list_arguments()
    assert [exe.grad_dict[n].stype for n in names] == case['simple_bind']['grad_stypes']
    assert [o.stype for o in exe.outputs] == case['simple_bind']['output_stypes']


def test_outputs_follow_new_arguments(mx):
    # A second forward after the argument's stored rows change: the output stores the new rows.
    x = mx.sym.var('x')
    arr = mx.nd.array([[1, 2], [0, 0], [3, 4]]).tostype('row_sparse')
    exe = mx.sym.relu(x).bind(mx.cpu(), {'x': arr})
    exe.forward()
    assert exe.outputs[0].indices.asnumpy().tolist() == [0, 2]
    exe.arg_dict['x'][:] = mx.nd.array([[0, 0], [-1, 5], [0, 0]]).tostype('row_sparse')
    exe.forward()
    out = exe.outputs[0]
    assert out.stype == 'row_sparse' and out.indices.asnumpy().tolist() == [1]
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0], [0, 5], [0, 0]])


def test_cast_storage_between_sparse_types_is_refused_at_bind(mx):
    x = mx.sym.var('x')
    csr = mx.nd.array([[1, 0], [0, 2]]).tostype('csr')
    with pytest.raises(mx.base.MXNetError, match='cast_storage'):
        mx.sym.cast_storage(x, stype='row_sparse').bind(mx.cpu(), {'x': csr}).forward()
