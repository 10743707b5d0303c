#!/usr/bin/env python3
"""Per-call time of MXNet ops through whichever libmxnet the package loads (issue 34):
  MXNET_LIBRARY_PATH=$PWD/build/default/lib/libweft_mxnet.so build/mxvenv/bin/python bench/mxnet_binding/op_bench.py GROUP
or without MXNET_LIBRARY_PATH for the real libmxnet; prints the library it ran on. GROUP:
  imperative  small ops with attributes, where the per-call cost is attribute parsing, shape
              inference and dispatch (4x16 inputs; 2000 calls a round)
  cold        ops whose cpu kernels are compiled for the baseline ISA only, on 2^20 float32
              elements (float64 for add_f64; 200 calls a round)
Best of 5 rounds, microseconds per call, each round ending with a wait for the last result."""
import os
import sys
import time

import mxnet as mx


def imperative_cases():
    x = mx.nd.ones((4, 16)); w = mx.nd.ones((8, 16)); b = mx.nd.zeros((8,))
    return 2000, {
        'FullyConnected': lambda: mx.nd.FullyConnected(x, w, b, num_hidden=8),
        'reshape+transpose': lambda: mx.nd.transpose(mx.nd.reshape(x, shape=(2, -1, 4)), axes=(2, 0, 1)),
        'broadcast_add+sum': lambda: mx.nd.sum(mx.nd.broadcast_add(x, b.reshape((1, 8)).tile((1, 2))), axis=1,
                                               keepdims=True),
        'Activation+softmax': lambda: mx.nd.softmax(mx.nd.Activation(x, act_type='relu'), axis=-1),
    }


def cold_cases():
    n = 1 << 20
    a = mx.nd.random.uniform(0.5, 2, shape=(n,)); b = mx.nd.random.uniform(0.5, 2, shape=(n,))
    a64 = a.astype('float64'); b64 = b.astype('float64')
    a2 = a.reshape((1024, 1024)); row = mx.nd.ones((1, 1024))
    return 200, {
        'maximum': lambda: mx.nd.maximum(a, b),
        'power': lambda: mx.nd.power(a, b),
        'greater': lambda: mx.nd.greater(a, b),
        'broadcast_greater': lambda: mx.nd.broadcast_greater(a2, row),
        'add_f64': lambda: a64 + b64,
        'tan': lambda: mx.nd.tan(a),
    }


def main():
    groups = {'imperative': imperative_cases, 'cold': cold_cases}
    if len(sys.argv) != 2 or sys.argv[1] not in groups:
        sys.exit(__doc__)
    calls, cases = groups[sys.argv[1]]()
    for name, f in cases.items():
        for _ in range(calls // 10): f()
        mx.nd.waitall()
        best = float('inf')
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(calls): y = f()
            y.wait_to_read()
            best = min(best, (time.perf_counter() - t) / calls * 1e6)
        print(f"{name} {best:.2f} us", end='; ')
    print(os.environ.get('MXNET_LIBRARY_PATH', mx.__file__))


if __name__ == '__main__':
    main()
