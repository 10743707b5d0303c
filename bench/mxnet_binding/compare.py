#!/usr/bin/env python3
"""The same MXNet Python script (fit_bench.py) on the real libmxnet and on weft, in one run:
Module.fit of the MNIST MLP and LeNet and the same networks trained through Gluon (autograd,
Trainer; hybridized and not) (samples/s, batch 100), a hybridized ResNet-18 v1 training step at
batch 8 (ms), and the per-call cost of a small imperative op (us). Goals: training >= 1.5x
libmxnet and per-call cost <= libmxnet's (issue 28); Gluon >= 1.5x hybridized, >= 1.2x not
(issue 29). --only picks measurements (default: all but gluon-resnet18, which takes minutes).

    bench/mxnet_binding/compare.py --python build/mxvenv/bin/python \\
        --weft build/default/lib/libweft_mxnet.so [--runs 3] [--epochs 2] [--threads 1]

Each measurement runs `--runs` times alternating the two libraries; the table shows the median and
the range. The thread settings are passed to both (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS and
WEFT_CPU_MATH_THREADS); MXNet runs its plain executor (MXNET_SUBGRAPH_BACKEND=NONE is not set: its
default oneDNN path is what its users get)."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(python, weft, what, args):
    env = dict(os.environ)
    env.pop('MXNET_LIBRARY_PATH', None)
    if weft:
        env['MXNET_LIBRARY_PATH'] = os.path.abspath(weft)
    if args.threads:
        for k in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'WEFT_CPU_MATH_THREADS'):
            env[k] = str(args.threads)
    cmd = [python, os.path.join(HERE, 'fit_bench.py'), what, '--epochs', str(args.epochs), '--steps', str(args.steps)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--python', required=True)
    ap.add_argument('--weft', required=True)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--epochs', type=int, default=2)
    ap.add_argument('--threads', type=int, default=0, help='0: leave the thread variables unset')
    ap.add_argument('--steps', type=int, default=10, help='timed steps of gluon-resnet18')
    ap.add_argument('--only', nargs='*', default=['mlp', 'lenet', 'gluon-mlp', 'gluon-lenet', 'gluon-mlp-imperative',
                                                  'gluon-lenet-imperative', 'call'])
    args = ap.parse_args()
    with open('/proc/cpuinfo') as f:
        model = next((l.split(':', 1)[1].strip() for l in f if l.startswith('model name')), platform.machine())
    print('machine: %s, %d cores, load %.1f; threads: %s' % (model, os.cpu_count(), os.getloadavg()[0],
                                                             args.threads or 'unset'))
    print('%-22s %-22s %-22s %s' % ('what', 'libmxnet (median, range)', 'weft (median, range)', 'speed-up of weft'))
    for what in args.only:
        key = {'call': 'us_per_call', 'gluon-resnet18': 'ms_per_step'}.get(what, 'samples_per_s')
        lower_is_better = key != 'samples_per_s'
        vals = {'libmxnet': [], 'weft': []}
        acc = {}
        for _ in range(args.runs):
            for lib, path in (('libmxnet', None), ('weft', args.weft)):
                r = run(args.python, path, what, args)
                vals[lib].append(r[key])
                acc[lib] = r.get('val_accuracy')
        med = {k: statistics.median(v) for k, v in vals.items()}
        fmt = lambda k: '%.1f [%.1f-%.1f]' % (med[k], min(vals[k]), max(vals[k]))
        ratio = med['libmxnet'] / med['weft'] if lower_is_better else med['weft'] / med['libmxnet']
        extra = '' if acc.get('weft') is None else '  accuracy %.4f / %.4f' % (acc['libmxnet'], acc['weft'])
        print('%-22s %-22s %-22s %.2fx%s' % (what, fmt('libmxnet'), fmt('weft'), ratio, extra), flush=True)


if __name__ == '__main__':
    main()
