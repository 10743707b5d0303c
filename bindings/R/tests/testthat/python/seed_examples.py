"""The R tests' worked examples (test-executor.R) in MXNet's Python on the same libweft_mxnet
(MXNET_LIBRARY_PATH), printed as float32 bit patterns in MXNet's row-major order, one line each:
`name: bits bits ...`. The R test compares them with its own results, bit for bit."""
import mxnet as mx
import numpy as np


def bits(array):
    return ' '.join('%08x' % v for v in array.asnumpy().astype(np.float32).ravel().view(np.uint32))


a = mx.sym.Variable('a')
b = mx.sym.Variable('b')
texec = (2 * a + b).bind(mx.cpu(), {'a': mx.nd.array([1, 2]), 'b': mx.nd.array([2, 3])},
                         args_grad={'a': mx.nd.zeros(2), 'b': mx.nd.zeros(2)})
out = texec.forward(is_train=True)[0]
texec.backward(out)
print('add_out:', bits(out))
print('add_grad_a:', bits(texec.grad_arrays[0]))
print('add_grad_b:', bits(texec.grad_arrays[1]))

net = mx.sym.Variable('data')
net = mx.sym.FullyConnected(net, name='fc', num_hidden=6)
net = mx.sym.Activation(net, name='relu', act_type='relu')
net = mx.sym.SoftmaxOutput(net, name='softmax')
args = {'data': mx.nd.ones((1, 4)), 'fc_weight': mx.nd.ones((6, 4)), 'fc_bias': mx.nd.array((1, 4, 4, 4, 5, 6)),
        'softmax_label': mx.nd.ones((1,))}
args_grad = {'fc_weight': mx.nd.zeros((6, 4)), 'fc_bias': mx.nd.zeros((6,))}
texec = net.bind(mx.cpu(), args=args, args_grad=args_grad)
out = texec.forward(is_train=True)[0]
texec.backward()
print('fc_out:', bits(out))
print('fc_grad_weight:', bits(texec.grad_dict['fc_weight']))
print('fc_grad_bias:', bits(texec.grad_dict['fc_bias']))
