#!/usr/bin/env python3
"""Generates core/include/weft/op.h: mxnet-cpp-style functions for the ops of
core/operator/OPS.md, with MXNet 1.9.1's argument names, order, types and defaults.

Run with MXNet 1.9.1 importable (python3 -m venv v && v/bin/pip install mxnet==1.9.1 'numpy<1.24'):
    v/bin/python core/symbol/tools/gen_op_h.py > core/include/weft/op.h && clang-format -i core/include/weft/op.h
Conventions follow mxnet-cpp's generated op.h (OpWrapperGenerator): inputs and required
attributes first in MXNet's order, then optional attributes; enums <Op><Arg> with values k<Value>.
Unlike mxnet-cpp, an attribute is stored only when it differs from its default, so saved JSON
matches what MXNet's Python front end writes for the same call.
"""
import ctypes
import sys

import numpy as np
import mxnet  # noqa: F401  (loads libmxnet)
from mxnet.base import _LIB, check_call, c_str, mx_uint, py_str

OPS = ("FullyConnected Convolution Pooling Activation LeakyReLU BatchNorm Dropout SoftmaxOutput softmax "
       "log_softmax LinearRegressionOutput LogisticRegressionOutput MAERegressionOutput MakeLoss BlockGrad Flatten Reshape expand_dims Concat SliceChannel "
       "transpose dot batch_dot Cast zeros_like ones_like one_hot argmax sum mean max add_n elemwise_add "
       "elemwise_sub elemwise_mul elemwise_div broadcast_add broadcast_sub broadcast_mul broadcast_div sin cos exp "
       "log sqrt square abs negative relu sigmoid tanh sgd_update sgd_mom_update nag_mom_update adam_update "
       "rmsprop_update rmspropalex_update").split()
# Inputs MXNet has that weft's definitions do not (OPS.md): softmax's length, LeakyReLU's prelu gamma.
DROP_INPUTS = {("softmax", "length"), ("LeakyReLU", "gamma")}


def op_info(name):
    h = ctypes.c_void_p()
    check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(h)))
    real, desc, kv, ret = (ctypes.c_char_p() for _ in range(4))
    n = mx_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    check_call(_LIB.MXSymbolGetAtomicSymbolInfo(h, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(n),
                                                ctypes.byref(names), ctypes.byref(types), ctypes.byref(descs),
                                                ctypes.byref(kv), ctypes.byref(ret)))
    return [(py_str(names[i]), py_str(types[i])) for i in range(n.value)]


def camel(s):
    return "".join(p[:1].upper() + p[1:] for p in s.split("_"))


def fnum(v):
    return str(np.float32(float(v)))


class Arg:
    def __init__(self, op, name, tstr):
        self.name = name
        self.enum = None
        parts = [p.strip() for p in tstr.split("default=")]
        head = parts[0].rstrip(", ")
        self.default = parts[1].strip("'") if len(parts) > 1 else None
        self.required = "required" in head
        base = head.replace(", required", "").replace(",required", "").replace(", optional", "").replace(",optional", "").strip()
        self.is_input = base.startswith("NDArray-or-Symbol")
        self.is_list = base.endswith("[]")
        if base.startswith("{"):
            self.values = [v.strip().strip("'") for v in base.strip("{}").split(",")]
            self.enum = op[:1].upper() + op[1:] + camel(name)
            self.ctype = self.enum
        else:
            self.ctype = {"int": "int", "int (non-negative)": "uint32_t", "long (non-negative)": "uint64_t",
                          "float": "mx_float", "double": "double", "boolean": "bool", "Shape(tuple)": "Shape",
                          "int or None": "std::optional<int>", "float or None": "std::optional<mx_float>",
                          "double or None": "std::optional<double>", "boolean or None": "std::optional<bool>",
                          "Shape or None": "std::optional<Shape>", "string": "const std::string&"}.get(base)
        if self.is_input:
            self.ctype = "const std::vector<Symbol>&" if self.is_list else "Symbol"
        elif self.ctype is None:
            raise SystemExit(f"{op}.{name}: unmapped type {tstr!r}")

    def enum_value(self, v):
        return f"{self.enum}::k{v[:1].upper() + v[1:]}"

    def cdefault(self):
        d = self.default
        t = self.ctype
        if self.enum:
            return self.enum_value(d)
        if d == "None":
            return "std::nullopt"
        inner = t[len("std::optional<"):-1] if t.startswith("std::optional<") else t
        if inner == "bool":
            return "true" if d in ("1", "True", "true") else "false"
        if inner == "Shape":
            return "Shape()"
        if inner in ("mx_float", "double"):
            s = fnum(d)
            if "." not in s and "e" not in s and "inf" not in s:
                s += ".0"
            return s + ("f" if inner == "mx_float" else "")
        return d


def emit(op, out):
    args = [Arg(op, n, t) for n, t in op_info(op) if (op, n) not in DROP_INPUTS]
    for a in args:
        if a.enum:
            vals = ", ".join(f"k{v[:1].upper() + v[1:]} = {i}" for i, v in enumerate(a.values))
            strs = ", ".join(f'"{v}"' for v in a.values)
            out.append(f"/// Values of {op}'s `{a.name}` attribute.\nenum class {a.enum} {{ {vals} }};")
            out.append(f"inline std::string EnumToAttr({a.enum} v) {{\n  static const char* const kNames[] = {{{strs}}};\n"
                       f"  return kNames[static_cast<int>(v)];\n}}")
    ordered = [a for a in args if a.is_input or a.required] + [a for a in args if not (a.is_input or a.required)]
    params = []
    for a in ordered:
        p = f"{a.ctype} {a.name}"
        if not (a.is_input or a.required):
            p += f" = {a.cdefault()}"
        params.append(p)
    calls = []
    for a in args:
        if a.is_input:
            calls.append(f"({a.name})" if a.is_list else f'.SetInput("{a.name}", {a.name})')
        elif a.required:
            calls.append(f'.SetParam("{a.name}", {a.name})')
        else:
            calls.append(f'.SetParamIfNot("{a.name}", {a.name}, {a.cdefault()})')
    inputs = ", ".join(a.name for a in args if a.is_input)
    attrs = ", ".join(a.name for a in args if not a.is_input) or "none"
    out.append(f"/// {op} (OPS.md). Inputs: {inputs}. Attributes: {attrs}.\n"
               f"inline Symbol {op}(const std::string& symbol_name{''.join(', ' + p for p in params)}) {{\n"
               f"  return Operator(\"{op}\"){''.join(calls)}.CreateSymbol(symbol_name);\n}}")
    names = ", ".join(a.name for a in ordered)
    out.append(f"/// {op} with an automatic name ({op.lower()}0, {op.lower()}1, ...).\n"
               f"inline Symbol {op}({', '.join(params)}) {{ return {op}(\"\"{''.join(', ' + a.name for a in ordered)}); }}")


def main():
    out = []
    for op in OPS:
        emit(op, out)
    print(HEADER)
    print("\n\n".join(out))
    print("\n}  // namespace weft")


HEADER = """// weft — one function per built-in op (core/operator/OPS.md), in mxnet-cpp's style
// (include/mxnet-cpp/op.h): `Symbol FullyConnected(const std::string& symbol_name, Symbol data,
// Symbol weight, Symbol bias, int num_hidden, bool no_bias = false, bool flatten = true)` plus the
// same without symbol_name (automatic name). Argument names, order, types and defaults are MXNet
// 1.9.1's; enum attributes are `enum class <Op><Arg>` (ActivationActType::kRelu).
//
// An input passed as an empty Symbol() is created as the variable "<node>_<input>" (fc1_weight).
// An attribute is recorded only when it differs from the op's default, so the JSON of a network
// built here equals the JSON MXNet's Python front end writes for the same calls. Attributes MXNet
// has but weft does not implement are accepted only at their defaults (weft::Error otherwise, when
// the symbol is created). Shapes, dtypes and semantics of each op: OPS.md.
//
// GENERATED by core/symbol/tools/gen_op_h.py from MXNet 1.9.1's op metadata; edit the generator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/base.h"
#include "weft/operator.h"
#include "weft/symbol.h"

namespace weft {
"""

if __name__ == "__main__":
    main()
