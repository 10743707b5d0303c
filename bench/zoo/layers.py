#!/usr/bin/env python3
"""Per-layer times of one zoo network in weft and in ONNX Runtime, to compare the two layer by layer.

Usage: layers.py BUILD_DIR --net mobilenetv2 [--batch 1] [--threads 1] [--runs 30] [--warmup 5]
                 [--ort-python PY] [--cache DIR]

weft: samples/image_classification --benchmark on the MXNet zoo export that compare.py wrote into
--cache, one op per engine operation (WEFT_EXEC_BULK_EXEC_INFERENCE=0) and weft's profiler on
(WEFT_PROFILER_OUTPUT); each node's median over the timed passes, in graph order, with the pass's
wall time against the sum of its nodes (the rest is hand-over between nodes).
ONNX Runtime (with --ort-python: a Python with onnxruntime and torch, as compare.py's): the
torchvision equivalent exported as compare.py does, run with SessionOptions.enable_profiling;
each node's median kernel time after the warm-up. Profiling costs both engines time (ONNX
Runtime 5-16 % on MobileNet v2 on a Zen 4): compare layers, not totals, with compare.py.

The two graphs differ where the exports do (Gluon's MobileNet v2 has a 1x1 expansion in its first
block that torchvision's lacks, and classifies with a 1x1 convolution where torchvision has a
Gemm), and weft runs fused nodes (a convolution with its BatchNorm, activation, a depthwise stage
or a sum): the report lists each side in its own order.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402  (NETS, thread_env, the torchvision export)

# Runs in the ONNX Runtime Python: prints JSON [[op, node name, output shape, median us], ...].
ORT_LAYERS = compare.TV_NET + r"""
import collections, json, statistics, sys, time, torch
name, size, batch, runs, warmup, threads, path, prefix = sys.argv[1:9]
size, batch, runs, warmup, threads = int(size), int(batch), int(runs), int(warmup), int(threads)
sess = ort_session(tv_net(name).eval(), size, threads, path, prefix)
x = torch.rand(batch, 3, size, size).numpy()
wall = []
for i in range(warmup + runs):
    s = time.perf_counter(); sess.run(None, {'data': x}); wall.append((time.perf_counter() - s) * 1e3)
events = json.load(open(sess.end_profiling()))
times, info = collections.defaultdict(list), {}
for e in events:
    if e.get('cat') == 'Node' and e['name'].endswith('_kernel_time'):
        node = e['name'][:-len('_kernel_time')]
        times[node].append(e['dur'])
        info[node] = (e['args'].get('op_name', ''), e['args'].get('output_type_shape', ''))
rows = [[info[n][0], n, json.dumps(info[n][1]), statistics.median(t[warmup:] or t)] for n, t in times.items()]
print(json.dumps({'wall_ms': statistics.median(wall[warmup:]), 'layers': rows}))
"""


def weft_layers(a, prefix, size):
    """Median us per node of weft's graph, in execution order, and the pass's wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        env = compare.thread_env(a.threads, {"WEFT_EXEC_BULK_EXEC_INFERENCE": "0", "WEFT_PROFILER_OUTPUT": trace})
        cmd = [os.path.join(a.build, "bin", "image_classification"), "--model", prefix, "--epoch", "0", "--benchmark",
               "--input-size", str(size), "--runs", str(a.runs), "--warmup", str(a.warmup),
               "--batch-sizes", str(a.batch)]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, timeout=3600)
        events = json.load(open(trace))
    events = events["traceEvents"] if isinstance(events, dict) else events
    # The timed passes are the last `runs` runs of the graph's ops; loading the weights runs
    # other ops (Fill, copies) before them.
    loading = {"Fill", "SyncCopyFromCPU", "CopyDeviceToDevice", "DeleteVariable", "workspace_grow"}
    ops = sorted((e for e in events if e.get("ph") == "X" and e["name"] not in loading), key=lambda e: e["ts"])
    per_pass = len(ops) // (a.runs + a.warmup)
    if per_pass == 0 or len(ops) != per_pass * (a.runs + a.warmup):
        sys.exit("the trace has %d graph ops, not a multiple of %d passes" % (len(ops), a.runs + a.warmup))
    passes = [ops[i * per_pass:(i + 1) * per_pass] for i in range(a.warmup, a.warmup + a.runs)]
    rows = [[passes[0][k]["name"], statistics.median(p[k]["dur"] for p in passes)] for k in range(per_pass)]
    span = statistics.median(p[-1]["ts"] + p[-1]["dur"] - p[0]["ts"] for p in passes) / 1e3
    return rows, span


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--net", default="mobilenetv2", choices=sorted(compare.NETS))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ort-python", default=None, help="a Python with onnxruntime and torch")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/weft-bench/zoo"))
    a = ap.parse_args()
    zoo, tv, size = compare.NETS[a.net]
    prefix = os.path.join(a.cache, zoo)
    if not os.path.exists(prefix + "-symbol.json"):
        sys.exit("%s-symbol.json is missing: run bench/zoo/compare.py once to export the zoo" % prefix)
    print("%s, batch %d, %d thread(s), medians of %d passes after %d" % (a.net, a.batch, a.threads, a.runs, a.warmup))
    rows, span = weft_layers(a, prefix, size)
    busy = sum(us for _, us in rows) / 1e3
    print("\nweft: %d nodes, %.2f ms per pass (first node's start to last's end), nodes %.2f ms" %
          (len(rows), span, busy))
    for k, (op, us) in enumerate(rows):
        print("%4d %-16s %8.0f us" % (k + 1, op, us))
    if a.ort_python:
        with tempfile.TemporaryDirectory() as tmp:
            args = [a.ort_python, "-c", ORT_LAYERS, tv, str(size), str(a.batch), str(a.runs), str(a.warmup),
                    str(a.threads), os.path.join(tmp, tv + ".onnx"), os.path.join(tmp, "ort")]
            p = subprocess.run(args, capture_output=True, text=True, env=compare.thread_env(a.threads),
                               cwd=tmp, timeout=3600)
        if p.returncode != 0:
            sys.exit("ONNX Runtime failed:\n" + p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        layers = got["layers"]
        print("\nONNX Runtime (profiling on): %d nodes, %.2f ms per pass, nodes %.2f ms" %
              (len(layers), got["wall_ms"], sum(r[3] for r in layers) / 1e3))
        for k, (op, name, shape, us) in enumerate(layers):
            print("%4d %-18s %8.0f us  %s %s" % (k + 1, op, us, name[:48], shape[:60]))


if __name__ == "__main__":
    main()
