"""weft describes each operator MXNet also has the way MXNet 1.9.1 does (argument names and their
order, variadic inputs), so the mx.nd / mx.sym functions MXNet's Python generates from that
description take the same positional and keyword arguments. data/mxnet_op_info.json is MXNet's own
description, written by gen_mxnet_op_info.py from the real libmxnet."""
import ctypes
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# Ops whose description differs on purpose: name -> why.
KNOWN = {
    'add_n': 'weft names the variadic input "data" and lists num_args (MXNet: "args", num_args hidden)',
    'ElementWiseSum': 'alias of add_n',
    'make_loss': "alias of MakeLoss in weft (MXNet's separate op is MakeLoss at its defaults, no attributes)",
    'softmax': 'weft has no length input (use_length=True is refused with a message naming it)',
    'RNN': 'weft has no sequence_length input (use_sequence_length=True is refused with a message naming it)',
    '_linspace': "MXNet's registration lists RangeParam's fields (step, repeat, infer_range) but parses "
                 "LinspaceParam's (num, endpoint), which mx.nd.linspace passes and weft lists",
    # MXNet registers these samplers' input after their attributes; weft lists inputs first. The
    # functions MXNet's Python generates put NDArray inputs first either way (register.py).
    '_random_uniform_like': 'weft lists data before low, high (MXNet after)',
    '_random_normal_like': 'weft lists data before loc, scale (MXNet after)',
}
for _op in ('exponential', 'gamma', 'poisson', 'negative_binomial', 'generalized_negative_binomial'):
    KNOWN['_random_%s_like' % _op] = "weft lists data before the law's attributes (MXNet after)"

# MXNet lists the samplers' second parameter array after shape and dtype; weft lists both arrays
# first. The generated functions take the arrays first either way.
for _op in ('uniform', 'normal', 'gamma', 'negative_binomial', 'generalized_negative_binomial'):
    KNOWN['_sample_' + _op] = KNOWN['sample_' + _op] = 'weft lists both parameter arrays before shape, dtype'



def describe(mx, name):
    lib = mx.base._LIB
    h = ctypes.c_void_p()
    mx.base.check_call(lib.NNGetOpHandle(name.encode(), ctypes.byref(h)))
    real, desc, ret = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    num = ctypes.c_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    key_var = ctypes.c_char_p()
    mx.base.check_call(lib.MXSymbolGetAtomicSymbolInfo(h, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(num),
                                                       ctypes.byref(names), ctypes.byref(types), ctypes.byref(descs),
                                                       ctypes.byref(key_var), ctypes.byref(ret)))
    args = [(mx.base.py_str(names[i]), mx.base.py_str(types[i])) for i in range(num.value)]
    return args, mx.base.py_str(key_var.value) if key_var.value else '', mx.base.py_str(desc.value)


def weft_ops(mx):
    size = ctypes.c_uint()
    plist = ctypes.POINTER(ctypes.c_char_p)()
    mx.base.check_call(mx.base._LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist)))
    return [mx.base.py_str(plist[i]) for i in range(size.value)]


def test_ops_are_described_as_mxnet_describes_them(mx):
    with open(os.path.join(HERE, 'data', 'mxnet_op_info.json')) as f:
        ref = json.load(f)['ops']
    compared, wrong = 0, []
    for name in weft_ops(mx):
        if name not in ref or name in KNOWN:
            continue
        args, key_var, desc = describe(mx, name)
        if 'not implemented by weft' in desc:
            continue
        theirs = [a[0] for a in ref[name]['args']]
        ours = [a[0] for a in args]
        if ours != theirs or key_var != ref[name]['key_var_num_args']:
            wrong.append('%s: weft %s (%s), MXNet %s (%s)' % (name, ours, key_var, theirs,
                                                              ref[name]['key_var_num_args']))
        compared += 1
    assert compared >= 100
    assert not wrong, '\n'.join(wrong)


def test_inputs_are_typed_as_ndarray_or_symbol(mx):
    args, _, _ = describe(mx, 'FullyConnected')
    assert args[:3] == [('data', 'NDArray-or-Symbol'), ('weight', 'NDArray-or-Symbol'), ('bias', 'NDArray-or-Symbol')]
    args, key_var, _ = describe(mx, 'Concat')
    assert args[0] == ('data', 'NDArray-or-Symbol[]') and key_var == 'num_args'
    assert dict(args)['dim'] == "int, optional, default='1'"


def test_unknown_op_handle_is_an_error_naming_close_names(mx):
    h = ctypes.c_void_p()
    assert mx.base._LIB.NNGetOpHandle(b'FullyConected', ctypes.byref(h)) == -1
    msg = mx.base.py_str(mx.base._LIB.MXGetLastError())
    assert "unknown operator 'FullyConected'" in msg and 'FullyConnected' in msg


def test_mxnet_ops_weft_lacks_fail_loudly(mx):
    # MXNet's wheel holds a placeholder for every op that returns None; weft lists every MXNet name
    # so that the generated function replaces it and raises instead.
    with pytest.raises(mx.base.MXNetError, match="Correlation.*not implemented by weft"):
        mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 2, 5, 5)))
