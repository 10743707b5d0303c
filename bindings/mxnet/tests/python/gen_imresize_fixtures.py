"""Writes data/mxnet_imresize.json: MXNet 1.9.1's mx.image.imresize (OpenCV 3.4.2's cv::resize) on
small uint8 images, for test_image_ops.py.

Run by hand with the real MXNet (no MXNET_LIBRARY_PATH):
    python3 -m venv v && v/bin/pip install mxnet==1.9.1 'numpy<1.24'
    v/bin/python bindings/mxnet/tests/python/gen_imresize_fixtures.py
"""
import json
import os
import sys

if os.environ.get('MXNET_LIBRARY_PATH'):
    sys.exit('unset MXNET_LIBRARY_PATH: this reads the real libmxnet')
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402


def image(h, w, c, seed):
    return np.random.RandomState(seed).randint(0, 256, size=(h, w, c)).astype(np.uint8)


def main():
    cases = []
    for (h, w, c), (oh, ow) in [((7, 9, 3), (4, 5)), ((5, 6, 1), (11, 13)), ((8, 10, 3), (4, 5)), ((6, 6, 3), (6, 9))]:
        src = image(h, w, c, h * 100 + w)
        for interp in range(5):
            out = mx.image.imresize(mx.nd.array(src, dtype='uint8'), ow, oh, interp=interp).asnumpy()
            cases.append({'src': src.tolist(), 'w': ow, 'h': oh, 'interp': interp, 'out': out.tolist()})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'mxnet_imresize.json')
    with open(path + '.tmp', 'w') as f:
        json.dump({'mxnet_version': mx.__version__, 'cases': cases}, f, separators=(',', ':'))
    os.replace(path + '.tmp', path)
    print('%d cases -> %s' % (len(cases), path))


if __name__ == '__main__':
    main()
