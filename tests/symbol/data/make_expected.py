#!/usr/bin/env python3
"""Writes the MXNet 1.9.1 outputs the symbol tests compare against (run once with the oracle:
python3 -m venv v && v/bin/pip install mxnet==1.9.1 'numpy<1.24' && v/bin/python make_expected.py <shared>)."""
import os
import sys

import mxnet as mx

shared = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))


def write(name, text):
    with open(os.path.join(here, name), "w") as f:
        f.write(text)


# The 0.8.0 file after MXNet's upgrade, re-saved.
write("save_000800_mxnet191.json", mx.sym.load(os.path.join(shared, "fixtures/mxnet/save_000800.json")).tojson())

# Graphs built in the tests the same way.
with mx.name.NameManager():
    d = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(d, name="bn")
    fc = mx.sym.FullyConnected(d, num_hidden=4, no_bias=True)
    write("group_bn_fc_mxnet191.json", mx.sym.Group([bn, fc]).tojson())
    cat = mx.sym.Concat(*[mx.sym.Variable("v%d" % i) for i in range(11)], name="cat")
    write("concat11_mxnet191.json", cat.tojson())
