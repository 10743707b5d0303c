"""The Python examples of the executor seed (shared/seeds/mxnet.executor.txt), with its numbers."""
import numpy as np
import pytest


def test_bind_two_a_plus_b(mx):
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    c = 2 * a + b
    texec = c.bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([2, 3])})
    texec.forward()
    np.testing.assert_array_equal(texec.outputs[0].asnumpy(), [4, 7])


def test_backward_on_loss_softmax(mx):
    net = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(net, name='fc', num_hidden=6)
    net = mx.sym.Activation(net, name='relu', act_type="relu")
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    args = {'data': mx.nd.ones((1, 4)), 'fc_weight': mx.nd.ones((6, 4)),
            'fc_bias': mx.nd.array((1, 4, 4, 4, 5, 6)), 'softmax_label': mx.nd.ones((1))}
    args_grad = {'fc_weight': mx.nd.zeros((6, 4)), 'fc_bias': mx.nd.zeros((6))}
    texec = net.bind(ctx=mx.cpu(), args=args, args_grad=args_grad)
    out = texec.forward(is_train=True)[0].copy()
    np.testing.assert_allclose(
        out.asnumpy(), [[0.00378404, 0.07600445, 0.07600445, 0.07600445, 0.20660152, 0.5616011]], rtol=1e-6)
    texec.backward()
    expected = np.array([0.00378404, -0.92399555, 0.07600445, 0.07600445, 0.20660152, 0.5616011])
    np.testing.assert_allclose(texec.grad_arrays[1].asnumpy(), np.repeat(expected[:, None], 4, axis=1), rtol=1e-6)


def test_backward_with_head_gradient(mx):
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    c = 2 * a + b
    args = {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([2, 3])}
    args_grad = {'a': mx.nd.zeros((2)), 'b': mx.nd.zeros((2))}
    texec = c.bind(ctx=mx.cpu(), args=args, args_grad=args_grad)
    out = texec.forward(is_train=True)[0].copy()
    np.testing.assert_array_equal(out.asnumpy(), [4., 7.])
    texec.backward(out)
    np.testing.assert_array_equal(texec.grad_arrays[0].asnumpy(), [8., 14.])
    np.testing.assert_array_equal(texec.grad_arrays[1].asnumpy(), [4., 7.])


def test_copy_params_from_checkpoint(mx, tmp_path):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, name='fc1', num_hidden=3)
    prefix = str(tmp_path / 'mx_mlp')
    arg = {'fc1_weight': mx.nd.array(np.arange(12).reshape(3, 4)), 'fc1_bias': mx.nd.array([1, 2, 3])}
    mx.model.save_checkpoint(prefix, 0, net, arg, {})
    sym, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
    texec = sym.simple_bind(mx.cpu(), data=(2, 4), grad_req='null')
    texec.copy_params_from(arg_params, aux_params)
    np.testing.assert_array_equal(texec.arg_dict['fc1_weight'].asnumpy(), arg['fc1_weight'].asnumpy())
    with pytest.raises(ValueError):
        texec.copy_params_from({'no_such_param': mx.nd.ones((1,))})
    texec.copy_params_from({'no_such_param': mx.nd.ones((1,))}, allow_extra_params=True)


def test_debug_str_layout(mx):
    with mx.name.NameManager():  # fresh name counters, as in the seed's session
        a = mx.sym.Variable('a')
        b = mx.sym.sin(a)
        c = 2 * a + b
    texec = c.bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([2, 3])})
    text = texec.debug_str()
    lines = text.splitlines()
    assert lines[0] == 'Symbol Outputs:'
    assert lines[1].strip() == 'output[0]=_plus0(0)'
    for line in ['Variable:a', 'Op:_mul_scalar, Name=_mulscalar0', 'Op:sin, Name=sin0', 'Op:elemwise_add, Name=_plus0']:
        assert line in lines, text
    assert lines[-2].startswith('Total ') and lines[-2].endswith(' MB allocated')
    assert lines[-1].endswith('TempSpace resource requested')


def test_forward_with_data_and_copyto(mx):
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, name='fc', num_hidden=2, no_bias=True)
    texec = net.simple_bind(mx.cpu(), data=(1, 3))
    texec.arg_dict['fc_weight'][:] = 1
    mydata = mx.nd.array([[1, 2, 3]])
    outputs = texec.forward(is_train=True, data=mydata)
    np.testing.assert_array_equal(outputs[0].asnumpy(), [[6, 6]])
    (mydata * 2).copyto(texec.arg_dict['data'])
    texec.forward(is_train=True)
    np.testing.assert_array_equal(texec.outputs[0].asnumpy(), [[12, 12]])


def test_dicts_and_optimized_symbol(mx):
    net = mx.sym.BatchNorm(mx.sym.Variable('data'), name='bn')
    texec = net.simple_bind(mx.cpu(), data=(2, 3))
    assert sorted(texec.arg_dict) == ['bn_beta', 'bn_gamma', 'data']
    assert sorted(texec.aux_dict) == ['bn_moving_mean', 'bn_moving_var']
    assert list(texec.output_dict) == ['bn_output']
    assert sorted(texec.grad_dict) == ['bn_beta', 'bn_gamma', 'data']
    assert texec.get_optimized_symbol().list_arguments() == net.list_arguments()


def test_reshape_example(mx):
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    c = 2 * a + b
    texec = c.bind(mx.cpu(), {'a': mx.nd.zeros((2, 1)), 'b': mx.nd.ones((2, 1))})
    new_shape = {'a': (4, 2), 'b': (4, 2)}
    new_exec = texec.reshape(allow_up_sizing=True, **new_shape)
    new_exec.arg_dict['a'][:] = 1
    new_exec.arg_dict['b'][:] = 3
    new_exec.forward()
    np.testing.assert_array_equal(new_exec.outputs[0].asnumpy(), np.full((4, 2), 5))
    with pytest.raises(mx.base.MXNetError):
        texec.reshape(a=(4, 2), b=(4, 2))  # growing needs allow_up_sizing


def test_reshape_shares_outputs_and_parameters(mx):
    # As MXNet's: a smaller reshaped executor writes into the original's output memory and reads its
    # weights; an upsized argument gets new memory, the others stay shared.
    x = mx.sym.Variable('x')
    y = mx.sym.FullyConnected(x, num_hidden=3)
    exe = y.simple_bind(mx.cpu(), x=(4, 2), grad_req='null')
    exe.arg_dict['x'][:] = 1
    exe.arg_arrays[1][:] = 2
    exe.arg_arrays[2][:] = 0.5
    small = exe.reshape(x=(2, 2))
    small.arg_dict['x'][:] = 3  # a view of exe's first two rows
    small.forward(is_train=False)
    np.testing.assert_array_equal(small.outputs[0].asnumpy(), np.full((2, 3), 12.5))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy()[:2], np.full((2, 3), 12.5))
    np.testing.assert_array_equal(exe.arg_dict['x'].asnumpy()[:, 0], [3, 3, 1, 1])
    big = exe.reshape(allow_up_sizing=True, x=(6, 2))
    big.arg_arrays[0][:] = 0
    big.arg_arrays[1][:] = 7
    assert (exe.arg_arrays[0].asnumpy()[2:] == 1).all()
    assert (exe.arg_arrays[1].asnumpy() == 7).all()


def test_set_monitor_callback(mx):
    seen = []

    def mon_callback(name, handle):
        array = mx.nd.NDArray(mx.base.NDArrayHandle(handle), writable=False)
        seen.append((mx.base.py_str(name), array.asnumpy().copy()))

    data = mx.sym.Variable('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(data, name='fc', num_hidden=2), name='act', act_type='relu')
    texe = net.simple_bind(mx.cpu(), data=(1, 2), grad_req='null')
    texe.arg_dict['data'][:] = 1
    texe.arg_dict['fc_weight'][:] = 1
    texe.arg_dict['fc_bias'][:] = -3
    texe.set_monitor_callback(mon_callback)
    texe.forward()
    names = [n for n, _ in seen]
    assert names == ['fc_output', 'act_output']
    np.testing.assert_array_equal(seen[0][1], [[-1, -1]])
    np.testing.assert_array_equal(seen[1][1], [[0, 0]])
