#!/usr/bin/env python3
"""Runs MXNet 1.9.1's own Python unit tests on the real libmxnet and on weft (libweft_mxnet),
test by test, and reports which pass where: the acceptance measure of the binding issues.

MXNet's tests are Apache MXNet's code and are not part of weft: give this script a directory that
holds them (tests/python/unittest of an MXNet 1.9.1 checkout, with its common.py).

    bindings/mxnet/tools/run_mxnet_unittests.py --tests /path/to/mxnet/tests/python/unittest \\
        --python build/mxvenv/bin/python --weft build/default/lib/libweft_mxnet.so \\
        test_executor.py test_symbol.py ...

Each file runs in its own pytest process per library (MXNET_LIBRARY_PATH set for weft, unset for
the real one), with a per-file deadline; results come from pytest's JUnit XML. The summary lists,
per file: tests, passed on libmxnet, passed on weft, passed on both, and the tests that pass on
libmxnet but not on weft (with the first line of weft's failure). --json writes everything.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def run_file(python, tests_dir, name, weft_lib, timeout):
    """{test id: ('passed'|'failed'|'skipped'|'error', message)} for one file on one library."""
    env = dict(os.environ)
    env.pop('MXNET_LIBRARY_PATH', None)
    if weft_lib:
        env['MXNET_LIBRARY_PATH'] = os.path.abspath(weft_lib)
    env.setdefault('MXNET_SUBGRAPH_BACKEND', 'NONE')  # the plain executor, as weft's oracle uses it
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    with tempfile.NamedTemporaryFile(suffix='.xml', delete=False) as f:
        xml_path = f.name
    cmd = [python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--junitxml', xml_path, name]
    try:
        proc = subprocess.run(cmd, cwd=tests_dir, env=env, capture_output=True, text=True, timeout=timeout)
        tail = (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        return {'<file>': ('error', 'timed out after %d s' % timeout)}
    results = {}
    try:
        root = ET.parse(xml_path).getroot()
    except (ET.ParseError, FileNotFoundError):
        return {'<file>': ('error', 'no results (crash?): ' + tail.strip().splitlines()[-1] if tail.strip() else '')}
    finally:
        if os.path.exists(xml_path):
            os.unlink(xml_path)
    for case in root.iter('testcase'):
        tid = '%s::%s' % (case.get('classname', ''), case.get('name'))
        status, msg = 'passed', ''
        for child in case:
            if child.tag in ('failure', 'error'):
                status, msg = ('failed' if child.tag == 'failure' else 'error'), (child.get('message') or '')
            elif child.tag == 'skipped':
                status, msg = 'skipped', (child.get('message') or '')
        results[tid] = (status, msg.strip().splitlines()[0][:200] if msg.strip() else '')
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tests', required=True, help="directory with MXNet's unittest files and common.py")
    ap.add_argument('--python', default=sys.executable, help='Python with mxnet==1.9.1, numpy<1.24, pytest')
    ap.add_argument('--weft', required=True, help='path of libweft_mxnet.so')
    ap.add_argument('--timeout', type=int, default=1800, help='seconds per file and library')
    ap.add_argument('--json', help='write every result here')
    ap.add_argument('--weft-only', action='store_true', help='skip the real libmxnet (reuse --baseline)')
    ap.add_argument('--baseline', help='JSON from an earlier run to take the libmxnet results from')
    ap.add_argument('files', nargs='+')
    args = ap.parse_args()
    baseline = {}
    if args.baseline:
        with open(args.baseline) as f:
            baseline = json.load(f)
    everything, rows = {}, []
    for name in args.files:
        real = baseline.get(name, {}).get('mxnet') if args.weft_only else None
        if real is None:
            real = run_file(args.python, args.tests, name, None, args.timeout)
        weft = run_file(args.python, args.tests, name, args.weft, args.timeout)
        everything[name] = {'mxnet': real, 'weft': weft}
        ok_real = {t for t, (s, _) in real.items() if s == 'passed'}
        ok_weft = {t for t, (s, _) in weft.items() if s == 'passed'}
        rows.append((name, len(set(real) | set(weft)), len(ok_real), len(ok_weft), len(ok_real & ok_weft)))
        print('%-28s tests %4d  libmxnet %4d  weft %4d  both %4d' % rows[-1], flush=True)
        for t in sorted(ok_real - ok_weft):
            print('    only libmxnet: %s  [%s] %s' % (t.split('::')[-1], weft.get(t, ('missing', ''))[0],
                                                   weft.get(t, ('', ''))[1]), flush=True)
    total = [sum(r[i] for r in rows) for i in range(1, 5)]
    print('%-28s tests %4d  libmxnet %4d  weft %4d  both %4d' % tuple(['TOTAL'] + total))
    if total[1]:
        print('weft passes %.1f %% of the tests that pass on libmxnet' % (100.0 * total[3] / total[1]))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(everything, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main()
