#!/usr/bin/env python3
"""Paired compile timing (issue 34: the main build's length). For each compile command of a build
tree whose source matches REGEX, compiles it with extra flags A and with extra flags B at the same
time, one per core, so that both see the same phase of a noisy machine; prints user seconds per
file and the totals. The extra flags go after the command's own (so they override its -O level and
cost model); the object is written to /dev/null, the tree is not touched.

usage: bench/build/paired_compile.py TREE REGEX 'A flags' 'B flags'
e.g.   bench/build/paired_compile.py build/main 'plugins/cpu/kernels/' '' '-O2 -ftree-partial-pre'
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    tree, regex, flags_a, flags_b = sys.argv[1:5]
    commands = json.load(open(os.path.join(tree, 'compile_commands.json')))
    tmp = tempfile.mkdtemp(prefix='paired_compile.')
    total = [0.0, 0.0]
    for c in commands:
        if not re.search(regex, c['file']) or 'cmake_pch' in c['file']:
            continue
        args = shlex.split(c['command'])
        args[args.index('-o') + 1] = '/dev/null'
        procs = []
        for k, extra in enumerate((flags_a, flags_b)):
            cmd = args[:-2] + shlex.split(extra) + args[-2:]  # '-c <file>' stays last
            procs.append(subprocess.Popen(['/usr/bin/time', '-f', '%U', '-o', f'{tmp}/t{k}'] + cmd,
                                          cwd=c['directory']))
        status = [p.wait() for p in procs]
        secs = [float(open(f'{tmp}/t{k}').read().split()[-1]) for k in (0, 1)]
        total = [total[0] + secs[0], total[1] + secs[1]]
        print(f"{secs[0]:7.2f} {secs[1]:7.2f} {status} {c['file']}", flush=True)
    print(f"total A {total[0]:.1f} B {total[1]:.1f} user s (B/A {total[1] / max(total[0], 1e-9):.3f})")


if __name__ == '__main__':
    main()
