"""Writes data/mxnet_op_info.json: MXNet 1.9.1's own description of each classic operator (the
arguments MXSymbolGetAtomicSymbolInfo returns: names, type text, key_var_num_args), read from the
real libmxnet. test_op_info.py checks that weft describes the same ops the same way, since MXNet's
Python builds every mx.nd / mx.sym function signature from that description.

Run by hand with the real MXNet (no MXNET_LIBRARY_PATH):
    python3 -m venv v && v/bin/pip install mxnet==1.9.1 'numpy<1.24'
    v/bin/python bindings/mxnet/tests/python/gen_mxnet_op_info.py
"""
import ctypes
import json
import os
import sys

if os.environ.get('MXNET_LIBRARY_PATH'):
    sys.exit('unset MXNET_LIBRARY_PATH: this reads the real libmxnet')
import mxnet as mx  # noqa: E402
from mxnet.base import _LIB, py_str  # noqa: E402

SKIP_PREFIXES = ('_np', '_npi', '_npx', '_backward', '_contrib_', '_image_', '_sg_', '_quantized', '_mkldnn',
                 '_linalg_', '_sparse_', '_cvim', '_cvcopy', '_cvimresize', '_cvimdecode', '_cvimread', '_cvimread')


def op_names():
    size = ctypes.c_uint()
    plist = ctypes.POINTER(ctypes.c_char_p)()
    _LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist))
    return sorted(py_str(plist[i]) for i in range(size.value))


def info(name):
    h = ctypes.c_void_p()
    _LIB.NNGetOpHandle(name.encode(), ctypes.byref(h))
    real, desc, ret = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    num = ctypes.c_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    key_var = ctypes.c_char_p()
    _LIB.MXSymbolGetAtomicSymbolInfo(h, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(num),
                                     ctypes.byref(names), ctypes.byref(types), ctypes.byref(descs),
                                     ctypes.byref(key_var), ctypes.byref(ret))
    return {'args': [[py_str(names[i]), py_str(types[i])] for i in range(num.value)],
            'key_var_num_args': py_str(key_var.value) if key_var.value else ''}


def main():
    out = {n: info(n) for n in op_names() if not n.startswith(SKIP_PREFIXES)}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'mxnet_op_info.json')
    with open(path, 'w') as f:
        json.dump({'mxnet_version': mx.__version__, 'ops': out}, f, indent=0, sort_keys=True)
    print('%d ops -> %s' % (len(out), path))


if __name__ == '__main__':
    main()
