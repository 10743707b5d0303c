"""One measurement with MXNet's Python frontend, on whichever library MXNET_LIBRARY_PATH selects
(unset: the real libmxnet): training samples/s for the MNIST MLP or LeNet on Fashion-MNIST at
batch 100, through Module.fit's steps ('mlp', 'lenet') or through Gluon ('gluon-mlp',
'gluon-lenet': the same layers as a hybridized HybridSequential, autograd.record, backward and
Trainer.step; 'gluon-mlp-imperative', 'gluon-lenet-imperative': the same, not hybridized), the
time of one hybridized training step of the Gluon model zoo's ResNet-18 v1 at batch 8 on 224x224
inputs ('gluon-resnet18', ms), or the per-call cost of a small imperative op. Prints one JSON
line. Run by compare.py."""
import argparse
import gzip
import json
import os
import time

import mxnet as mx


def mlp():
    data = mx.sym.Variable('data')
    x = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=128, name='fc1'), act_type='relu')
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=64, name='fc2'), act_type='relu')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=10, name='fc3'), name='softmax')


def lenet():
    data = mx.sym.Variable('data')
    x = mx.sym.Convolution(data, kernel=(5, 5), num_filter=20, name='conv1')
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type='tanh'), pool_type='max', kernel=(2, 2), stride=(2, 2))
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50, name='conv2')
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type='tanh'), pool_type='max', kernel=(2, 2), stride=(2, 2))
    x = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=500, name='fc1'), act_type='tanh')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=10, name='fc2'), name='softmax')


def raw_idx(data_dir, name):
    """The uncompressed idx file `name` (MXNet's MNISTIter reads no gzip; weft's reads both): the
    file itself when data_dir has it, else data_dir/name.gz unpacked once into a cache."""
    plain = os.path.join(data_dir, name)
    if os.path.exists(plain):
        return plain
    cache = os.path.join(os.path.expanduser('~/.cache/weft-bench/fashion-mnist'))
    os.makedirs(cache, exist_ok=True)
    out = os.path.join(cache, name)
    if not os.path.exists(out):
        with gzip.open(plain + '.gz') as f, open(out + '.tmp', 'wb') as g:
            g.write(f.read())
        os.replace(out + '.tmp', out)
    return out


def mnist_iters(data_dir, flat):
    """Fashion-MNIST training (shuffled) and test iterators at batch 100."""
    it = lambda img, lbl, shuffle: mx.io.MNISTIter(image=raw_idx(data_dir, img), label=raw_idx(data_dir, lbl),
                                                   batch_size=100, flat=flat, shuffle=shuffle, seed=0)
    return (it('train-images-idx3-ubyte', 'train-labels-idx1-ubyte', True),
            it('t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte', False))


def gluon_net(name):
    """mlp() / lenet() as Gluon layers (SoftmaxOutput's loss is the Gluon loss in gluon_fit)."""
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        if name == 'mlp':
            net.add(nn.Dense(128, activation='relu'), nn.Dense(64, activation='relu'), nn.Dense(10))
        else:
            net.add(nn.Conv2D(20, 5, activation='tanh'), nn.MaxPool2D(2, 2), nn.Conv2D(50, 5, activation='tanh'),
                    nn.MaxPool2D(2, 2), nn.Flatten(), nn.Dense(500, activation='tanh'), nn.Dense(10))
    return net


def gluon_fit(name, data_dir, epochs, hybridize=True):
    train, val = mnist_iters(data_dir, name == 'mlp')
    net = gluon_net(name)
    net.initialize(mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2))
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05, 'momentum': 0.9})
    times = []
    for epoch in range(epochs):
        train.reset()
        t = time.perf_counter()
        n = 0
        for batch in train:
            x, y = batch.data[0], batch.label[0]
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            n += x.shape[0]
        mx.nd.waitall()
        times.append(n / (time.perf_counter() - t))
    metric = mx.metric.create('acc')
    val.reset()
    for batch in val:
        metric.update([batch.label[0]], [net(batch.data[0])])
    return {'samples_per_s': sorted(times)[len(times) // 2], 'epochs': epochs, 'val_accuracy': metric.get()[1]}


def resnet18_step(steps):
    """Median ms of a hybridized ResNet-18 v1 training step (forward, backward, SGD) at batch 8."""
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=1000)
    net.initialize(mx.init.Xavier(magnitude=2))
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
    x, y = mx.nd.random.uniform(shape=(8, 3, 224, 224)), mx.nd.array(range(8))
    times = []
    for i in range(steps + 2):  # the first two steps bind and warm up
        t = time.perf_counter()
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(8)
        mx.nd.waitall()
        if i >= 2:
            times.append((time.perf_counter() - t) * 1e3)
    return {'ms_per_step': sorted(times)[len(times) // 2], 'steps': steps}


def fit(net, data_dir, epochs):
    flat = net == 'mlp'
    train, val = mnist_iters(data_dir, flat)
    mod = mx.mod.Module(mlp() if flat else lenet(), context=mx.cpu())
    times = []
    mod.bind(data_shapes=train.provide_data, label_shapes=train.provide_label)
    mod.init_params(mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2))
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.05, 'momentum': 0.9})
    metric = mx.metric.create('acc')
    for epoch in range(epochs):
        train.reset()
        metric.reset()
        t = time.perf_counter()
        n = 0
        for batch in train:
            mod.forward_backward(batch)
            mod.update()
            mod.update_metric(metric, batch.label)
            n += batch.data[0].shape[0]
        mx.nd.waitall()
        times.append(n / (time.perf_counter() - t))
    acc = dict(mod.score(val, 'acc'))['accuracy']
    return {'samples_per_s': sorted(times)[len(times) // 2], 'epochs': epochs, 'val_accuracy': acc}


def per_call(n):
    a, b = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    c = mx.nd.zeros((2, 2))
    for _ in range(500):
        mx.nd.elemwise_add(a, b, out=c)
    mx.nd.waitall()
    t = time.perf_counter()
    for _ in range(n):
        mx.nd.elemwise_add(a, b, out=c)
    mx.nd.waitall()
    return {'us_per_call': (time.perf_counter() - t) / n * 1e6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('what', choices=['mlp', 'lenet', 'gluon-mlp', 'gluon-lenet', 'gluon-mlp-imperative',
                                     'gluon-lenet-imperative', 'gluon-resnet18', 'call'])
    ap.add_argument('--steps', type=int, default=10, help='gluon-resnet18: timed steps')
    ap.add_argument('--epochs', type=int, default=2)
    ap.add_argument('--calls', type=int, default=20000)
    ap.add_argument('--data-dir', default='/usr/share/datasets/fashion-mnist')
    args = ap.parse_args()
    lib = 'weft' if os.environ.get('MXNET_LIBRARY_PATH') else 'libmxnet'
    if args.what == 'call':
        r = per_call(args.calls)
    elif args.what == 'gluon-resnet18':
        r = resnet18_step(args.steps)
    elif args.what.startswith('gluon-'):
        name = args.what[len('gluon-'):]
        imperative = name.endswith('-imperative')
        r = gluon_fit(name.replace('-imperative', ''), args.data_dir, args.epochs, hybridize=not imperative)
    else:
        r = fit(args.what, args.data_dir, args.epochs)
    r.update({'library': lib, 'what': args.what})
    print(json.dumps(r))


if __name__ == '__main__':
    main()
