"""Module API on weft: training on Fashion-MNIST through mx.io.MNISTIter, loading an MXNet export."""
import json
import os
import re
import subprocess

import numpy as np
import pytest

FMNIST = os.environ.get('WEFT_FASHION_MNIST', '/usr/share/datasets/fashion-mnist')
COMPAT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'tests', 'compat', 'data')
EPOCHS = 2


def mlp(mx):
    data = mx.sym.Variable('data')
    fc1 = mx.sym.FullyConnected(data, name='fc1', num_hidden=128)
    act1 = mx.sym.Activation(fc1, name='relu1', act_type='relu')
    fc2 = mx.sym.FullyConnected(act1, name='fc2', num_hidden=64)
    act2 = mx.sym.Activation(fc2, name='relu2', act_type='relu')
    fc3 = mx.sym.FullyConnected(act2, name='fc3', num_hidden=10)
    return mx.sym.SoftmaxOutput(fc3, name='softmax')


def train_mnist_accuracy():
    """Validation accuracy of weft's own train_mnist (C++) after EPOCHS epochs."""
    exe = os.environ.get('WEFT_TRAIN_MNIST')
    if not exe:
        pytest.skip('WEFT_TRAIN_MNIST (the train_mnist sample) is not set; ctest sets it')
    out = subprocess.run([exe, '--network', 'mlp', '--epochs', str(EPOCHS), '--data-dir', FMNIST],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    return float(re.findall(r'Validation-accuracy=([0-9.]+)', out)[-1])


def test_module_fit_reaches_train_mnist_accuracy(mx):
    mx.random.seed(0)
    train = mx.io.MNISTIter(image=os.path.join(FMNIST, 'train-images-idx3-ubyte.gz'),
                            label=os.path.join(FMNIST, 'train-labels-idx1-ubyte.gz'),
                            batch_size=100, flat=True, shuffle=True, seed=0)
    val = mx.io.MNISTIter(image=os.path.join(FMNIST, 't10k-images-idx3-ubyte.gz'),
                          label=os.path.join(FMNIST, 't10k-labels-idx1-ubyte.gz'),
                          batch_size=100, flat=True, shuffle=False)
    mod = mx.mod.Module(mlp(mx), context=mx.cpu())
    mod.fit(train, eval_data=val, optimizer='sgd', optimizer_params={'learning_rate': 0.05, 'momentum': 0.9},
            initializer=mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2), num_epoch=EPOCHS,
            eval_metric='acc')
    acc = dict(mod.score(val, 'acc'))['accuracy']
    reference = train_mnist_accuracy()
    print('Module.fit accuracy %.4f, train_mnist %.4f' % (acc, reference))
    # Seeds differ (MXNet's frontend draws its own initial weights and order): over 2 epochs the two
    # land within about a point of each other.
    assert acc >= reference - 0.02


def deterministic_input(n):
    i = np.arange(n, dtype=np.int64)
    return (((i * 7919) % 2001) - 1000).astype(np.float32) / 1000.0


@pytest.mark.parametrize('net', ['resnet18_v1', 'mobilenetv2_1.0'])
def test_module_load_of_mxnet_export_matches_mxnet(mx, net):
    with open(os.path.join(COMPAT, 'zoo.json')) as f:
        shape = tuple(json.load(f)[net]['input'])
    prefix = os.path.join(COMPAT, 'zoo_' + net)
    mod = mx.mod.Module.load(prefix, 0, data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', shape)], for_training=False)
    x = mx.nd.array(deterministic_input(int(np.prod(shape))).reshape(shape))
    mod.forward(mx.io.DataBatch([x]), is_train=False)
    got = mod.get_outputs()[0].asnumpy()
    want = mx.nd.load(prefix + '-io.params')['out:0'].asnumpy()
    # compat_test.cc's tolerance for the same files run by weft's C++ API.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    mod.forward(mx.io.DataBatch([x]), is_train=False)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), got)  # the same bits again


def test_module_binds_float16_activation(mx):
    # MXNet's test_module_dtype: a float16 relu bound by Module on two devices; here with values.
    shape = (4, 8, 7)
    data = mx.sym.Variable('data')
    net = mx.sym.Activation(data=data, act_type='sigmoid')
    mod = mx.mod.Module(net, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc('data', shape, np.float16)], inputs_need_grad=True)
    mod.init_params()
    x = np.linspace(-4, 4, int(np.prod(shape))).reshape(shape).astype(np.float16)
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(x, dtype=np.float16)], label=None))
    mod.backward([mx.nd.ones(shape, dtype=np.float16)])
    y = mod.get_outputs()[0]
    assert y.dtype == np.float16
    want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float16)
    np.testing.assert_array_equal(y.asnumpy(), want)
    g = mod.get_input_grads()[0].asnumpy()
    yw = want.astype(np.float32)
    np.testing.assert_allclose(g.astype(np.float64), yw * (1 - yw), rtol=2e-3, atol=1e-4)
