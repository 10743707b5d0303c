#!/usr/bin/env python3
"""Inference (and ResNet-18 training) speed on the image networks MXNet users run, in one run:
weft, MXNet 1.9.1 plain and with its oneDNN fusion, PyTorch and ONNX Runtime.

Usage: compare.py BUILD_DIR [--nets resnet18,mobilenetv2,squeezenet,densenet121,inceptionv3]
                  [--batches 1,2,32] [--threads 1,2] [--runs 10] [--rounds 1] [--train-batch 32]
                  [--mxnet-python PY] [--torch-python PY] [--ort-python PY] [--cache DIR] [--output FILE]

The networks, full width, random weights (speed does not depend on them):
  resnet18 (ResNet-18 v1), mobilenetv2 (MobileNet v2 1.0), squeezenet (SqueezeNet 1.1),
  densenet121, inceptionv3 (299x299 input; the others 224x224).
MXNet's Gluon model zoo exports each once into --cache (symbol JSON + params); weft runs that
export with samples/image_classification --benchmark, MXNet 1.9.1 the same export as a
SymbolBlock, with MXNET_SUBGRAPH_BACKEND=NONE (plain) and with its default oneDNN (MKLDNN)
subgraph fusion. PyTorch runs torchvision's equivalents and ONNX Runtime their ONNX export
(torch.onnx), since their layouts differ from MXNet's files. Where MXNet's Python also has the onnx
package (pip install onnx==1.13.1 beside numpy<1.24), ONNX Runtime also runs MXNet's own ONNX
export of the same files (mx.onnx): the network weft runs, layer for layer. torchvision's
networks are not all Gluon's: Gluon's MobileNet v2 has a 1x1 expansion in its first block that
torchvision's lacks and classifies with a 1x1 convolution, and the Inception v3 variants differ.
The "vs ONNX Runtime" ratio (the goal's) stays on torchvision's export; the other is beside it.
Times are warm forwards (after
--warmup passes): the median of --runs passes in ms per batch. With --rounds R > 1 the whole
inference table is run R times over (every network and thread count, then again), and each cell
is the fastest of its R medians: other processes on a shared machine only slow a run down, and
slow phases of a VM last minutes, so rounds minutes apart miss them where one run may not.
Threads: OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and WEFT_CPU_MATH_THREADS for weft and MXNet, torch.set_num_threads for
PyTorch, intra_op_num_threads for ONNX Runtime.

Training: one ResNet-18 v1 step (forward, backward, SGD with momentum) at --train-batch on
224x224 images, through MXNet's Gluon (hybridized) on libmxnet and on weft (MXNET_LIBRARY_PATH),
and through PyTorch; median ms of the timed steps.

--ort-python needs onnxruntime and torch (a venv with --system-site-packages over Debian's
python3-torch, then pip install onnxruntime); a peer whose Python lacks its package is left
out with the reason printed. The header names the commit, the CPU and the ISA path weft took.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import runs as bench_runs  # noqa: E402  (bench/runs.py: the header)

NETS = {  # name: (MXNet model zoo name, torchvision name, input size)
    "resnet18": ("resnet18_v1", "resnet18", 224),
    "mobilenetv2": ("mobilenetv2_1.0", "mobilenet_v2", 224),
    "squeezenet": ("squeezenet1.1", "squeezenet1_1", 224),
    "densenet121": ("densenet121", "densenet121", 224),
    "inceptionv3": ("inceptionv3", "inception_v3", 299),
}

# Prepended to every peer's inference script: {batch: median ms of `runs` calls of run(x) after
# `warmup` untimed ones}, x = make(batch) for each batch.
TIME_BATCHES = r"""
import time
def time_batches(batches, runs, warmup, make, run):
    out = {}
    for b in batches:
        x = make(b)
        for _ in range(warmup): run(x)
        t = []
        for _ in range(runs):
            s = time.perf_counter(); run(x); t.append((time.perf_counter() - s) * 1e3)
        out[b] = sorted(t)[len(t) // 2]
    return out
"""

# Runs inside the peer's Python: prints one JSON line {batch: median ms}.
MXNET_INFER = TIME_BATCHES + r"""
import json, sys, mxnet as mx, numpy as np
prefix, size, batches, runs, warmup = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
net = mx.gluon.SymbolBlock.imports(prefix + '-symbol.json', ['data'], prefix + '-0000.params')
net.hybridize(static_alloc=True, static_shape=True)
print(json.dumps(time_batches(batches, runs, warmup, lambda b: mx.nd.array(np.random.uniform(-1, 1, (b, 3, size, size))),
                              lambda x: net(x).wait_to_read())))
"""

MXNET_EXPORT = r"""
import sys, mxnet as mx
name, size, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
net.initialize(mx.init.Xavier())
net.hybridize()
net(mx.nd.zeros((1, 3, size, size)))
net.export(prefix, 0)
"""

# MXNet's own ONNX exporter (mx.onnx, MXNet 1.9's mx2onnx; needs the onnx package in MXNet's Python)
# on the export above: the network weft runs, for ONNX Runtime. The exporter lists the weights among
# the graph's inputs as well as its initializers, and ONNX Runtime then treats them as values a caller
# may override: it folds no BatchNorm into its convolution (MobileNet v2 at batch 1 ran 2.2x slower).
# They are taken out of the inputs. Written to a temporary name and renamed.
MXNET_ONNX = r"""
import os, sys, numpy as np, onnx, mxnet as mx
prefix, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tmp = path + '.tmp'
mx.onnx.export_model(prefix + '-symbol.json', prefix + '-0000.params', [(1, 3, size, size)], np.float32, tmp,
                     dynamic=True, dynamic_input_shapes=[(None, 3, size, size)])
m = onnx.load(tmp)
weights = {i.name for i in m.graph.initializer}
data = [i for i in m.graph.input if i.name not in weights]
del m.graph.input[:]
m.graph.input.extend(data)
onnx.save(m, tmp)
os.replace(tmp, path)
"""

# Runs in the ONNX Runtime Python on an ONNX file: prints one JSON line {batch: median ms}.
ORT_FILE = TIME_BATCHES + r"""
import json, sys, numpy as np, onnxruntime as ort
path, size, batches, runs, warmup, threads = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
so = ort.SessionOptions(); so.intra_op_num_threads = threads; so.inter_op_num_threads = 1
sess = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
name = sess.get_inputs()[0].name
print(json.dumps(time_batches(batches, runs, warmup, lambda b: np.random.rand(b, 3, size, size).astype(np.float32),
                              lambda x: sess.run(None, {name: x}))))
"""

MXNET_TRAIN = r"""
import json, os, sys, time, mxnet as mx, numpy as np
batch, steps = int(sys.argv[1]), int(sys.argv[2])
# The library that runs must be the one asked for (weft through MXNET_LIBRARY_PATH, else libmxnet).
assert ("libweft_mxnet" in mx.base._LIB._name) == bool(os.environ.get("MXNET_LIBRARY_PATH")), mx.base._LIB._name
net = mx.gluon.model_zoo.vision.resnet18_v1(pretrained=False)
net.initialize(mx.init.Xavier())
net.hybridize(static_alloc=True, static_shape=True)
trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.01, 'momentum': 0.9})
loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
x = mx.nd.array(np.random.uniform(-1, 1, (batch, 3, 224, 224)))
y = mx.nd.array(np.random.randint(0, 1000, (batch,)))
t = []
for i in range(steps + 2):
    s = time.perf_counter()
    with mx.autograd.record():
        l = loss(net(x), y)
    l.backward()
    trainer.step(batch)
    mx.nd.waitall()
    if i >= 2: t.append((time.perf_counter() - s) * 1e3)
print(json.dumps({"train": sorted(t)[len(t) // 2]}))
"""

# Prepended to the peer scripts that run torchvision's equivalent of a zoo network (TORCH here,
# layers.py's ONNX Runtime profile): the network, and an ONNX Runtime session on its export.
TV_NET = r"""
def tv_net(name):
    import torchvision
    kw = {'aux_logits': False, 'init_weights': False} if name == 'inception_v3' else {}
    return getattr(torchvision.models, name)(**kw)

def ort_session(net, size, threads, path, profile_prefix=None):
    import torch, onnxruntime as ort
    torch.onnx.export(net, torch.rand(1, 3, size, size), path, input_names=['data'], output_names=['out'],
                      dynamic_axes={'data': {0: 'n'}, 'out': {0: 'n'}}, opset_version=13)
    so = ort.SessionOptions(); so.intra_op_num_threads = threads; so.inter_op_num_threads = 1
    if profile_prefix:
        so.enable_profiling = True; so.profile_file_prefix = profile_prefix
    return ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
"""

TORCH = TV_NET + TIME_BATCHES + r"""
import json, sys, time, torch
mode, name, size, batches, runs, warmup, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
torch.set_num_threads(threads)
net = tv_net(name)
if mode == 'train':
    b = batches[0]
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(b, 3, size, size); y = torch.randint(0, 1000, (b,))
    t = []
    for i in range(runs + 2):
        s = time.perf_counter()
        opt.zero_grad(); torch.nn.functional.cross_entropy(net(x), y).backward(); opt.step()
        if i >= 2: t.append((time.perf_counter() - s) * 1e3)
    print(json.dumps({"train": sorted(t)[len(t) // 2]})); sys.exit(0)
net.eval()
if mode == 'onnx':
    sess = ort_session(net, size, threads, sys.argv[8])
    run = lambda x: sess.run(None, {'data': x.numpy()})
else:
    def run(x):
        with torch.no_grad():
            return net(x)
print(json.dumps(time_batches(batches, runs, warmup, lambda b: torch.rand(b, 3, size, size), run)))
"""


def thread_env(threads, extra=None):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "WEFT_CPU_MATH_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    env.update(extra or {})
    return env


def run_json(cmd, env, what):
    """The last JSON line a peer printed, or None with the reason printed (a peer may be absent)."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        print("%s: left out (%s)" % (what, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]),
              file=sys.stderr)
        return None
    return {str(k): v for k, v in json.loads(lines[-1]).items()}


def weft_infer(a, prefix, size, batches, threads):
    exe = os.path.join(a.build, "bin", "image_classification")
    cmd = [exe, "--model", prefix, "--epoch", "0", "--benchmark", "--input-size", str(size), "--runs", str(a.runs),
           "--warmup", str(a.warmup), "--batch-sizes"] + [str(b) for b in batches]
    p = subprocess.run(cmd, capture_output=True, text=True, env=thread_env(threads), timeout=3600)
    found = re.findall(r"batch size (\d+): ([0-9.]+) ms per batch", p.stdout)
    if p.returncode != 0 or not found:
        sys.exit("weft failed: %s\n%s%s" % (" ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return {b: float(ms) for b, ms in found}


def infer_all(a, net, batches, t, tmp):
    """{peer: {str(batch): median ms} or None} for one network at t threads, each peer in turn."""
    zoo, tv, size = NETS[net]
    prefix = os.path.join(a.cache, zoo)
    if not os.path.exists(prefix + "-symbol.json"):
        subprocess.run([a.mxnet_python, "-c", MXNET_EXPORT, zoo, str(size), prefix], check=True,
                       env=dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE"))
    bj = json.dumps(batches)
    res = {"weft": {str(b): ms for b, ms in weft_infer(a, prefix, size, batches, t).items()}}
    mx_args = [a.mxnet_python, "-c", MXNET_INFER, prefix, str(size), bj, str(a.runs), str(a.warmup)]
    res["MXNet plain"] = run_json(mx_args, thread_env(t, {"MXNET_SUBGRAPH_BACKEND": "NONE"}), "MXNet plain")
    fused = thread_env(t)
    fused.pop("MXNET_SUBGRAPH_BACKEND", None)  # its default: the oneDNN (MKLDNN) fusion
    res["MXNet oneDNN"] = run_json(mx_args, fused, "MXNet oneDNN")
    tv_args = [tv, str(size), bj, str(a.runs), str(a.warmup), str(t)]
    res["PyTorch"] = run_json([a.torch_python, "-c", TORCH, "infer"] + tv_args, thread_env(t), "PyTorch")
    if a.ort_python:
        onnx = os.path.join(tmp, tv + ".onnx")
        res["ONNX Runtime"] = run_json([a.ort_python, "-c", TORCH, "onnx"] + tv_args + [onnx], thread_env(t),
                                       "ONNX Runtime")
        mx_onnx = mxnet_onnx(a, prefix, size)
        if mx_onnx:
            res[ORT_MX] = run_json([a.ort_python, "-c", ORT_FILE, mx_onnx, str(size), bj, str(a.runs), str(a.warmup),
                                    str(t)], thread_env(t), ORT_MX)
    return res


ORT_MX = "ONNX Runtime, MXNet's export"
MX_ONNX_FAILED = set()  # prefixes whose export failed once: not tried again for each thread count


def mxnet_onnx(a, prefix, size):
    """The ONNX file MXNet's exporter made of the zoo export (made once into --cache), or None with the
    reason printed (MXNet's Python lacks the onnx package, or the export failed)."""
    path = prefix + ".onnx"
    if prefix in MX_ONNX_FAILED:
        return None
    if not os.path.exists(path):
        p = subprocess.run([a.mxnet_python, "-c", MXNET_ONNX, prefix, str(size), path], capture_output=True, text=True,
                           timeout=600)
        if p.returncode != 0:
            print("%s: left out (%s)" % (ORT_MX, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]),
                  file=sys.stderr)
            MX_ONNX_FAILED.add(prefix)
            return None
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--nets", default=",".join(NETS))
    ap.add_argument("--batches", default="1,2,32")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="inference table runs; each cell the fastest median")
    ap.add_argument("--train-batch", type=int, default=32, help="0 leaves the training step out")
    ap.add_argument("--mxnet-python", default="/work/mxvenv/bin/python")
    ap.add_argument("--torch-python", default="/usr/bin/python3")
    ap.add_argument("--ort-python", default=None, help="a Python with onnxruntime and torch")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/weft-bench/zoo"))
    ap.add_argument("--output")
    a = ap.parse_args()
    nets = a.nets.split(",")
    batches = [int(b) for b in a.batches.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    os.makedirs(a.cache, exist_ok=True)
    # Absolute: MXNet's libinfo ignores a relative MXNET_LIBRARY_PATH (a warning) and loads its own
    # libmxnet, which made the "weft" training row time libmxnet when the build was given relative.
    weft_lib = os.path.abspath(os.path.join(a.build, "lib", "libweft_mxnet.so"))
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    loads, times = [], {}  # times[(net, batch, threads)][peer]: each round's median
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for net in nets:
                for t in threads:
                    loads.append(os.getloadavg()[0])
                    res = infer_all(a, net, batches, t, tmp)
                    for b in batches:
                        cell = times.setdefault((net, b, t), {})
                        for peer, v in res.items():
                            cell.setdefault(peer, []).append((v or {}).get(str(b)))
                        print("round %d, %s batch %d, %d thread(s): %s" %
                              (rnd + 1, net, b, t, {k: v[-1] for k, v in cell.items()}), file=sys.stderr)
    rows = [(net, b, t, {peer: min((v for v in got if v is not None), default=None) for peer, got in cell.items()})
            for (net, b, t), cell in times.items()]
    train = []
    if a.train_batch:
        for t in threads:
            steps = str(max(3, a.runs // 2))
            r = {"weft": run_json([a.mxnet_python, "-c", MXNET_TRAIN, str(a.train_batch), steps],
                                  thread_env(t, {"MXNET_LIBRARY_PATH": weft_lib}), "weft training"),
                 "MXNet": run_json([a.mxnet_python, "-c", MXNET_TRAIN, str(a.train_batch), steps], thread_env(t),
                                   "MXNet training"),
                 "PyTorch": run_json([a.torch_python, "-c", TORCH, "train", "resnet18", "224",
                                      json.dumps([a.train_batch]), steps, "0", str(t)], thread_env(t),
                                     "PyTorch training")}
            train.append((t, {k: (v or {}).get("train") for k, v in r.items()}))
    text = report(a, rows, train, loads, times)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")


def fmt(x):
    return "–" if x is None else ("%.1f" % x if x >= 10 else "%.2f" % x)


def ratio(weft, peer):
    return "–" if weft is None or peer is None else "%.2f×" % (peer / weft)


def report(a, rows, train, loads, times):
    out = [l for l in bench_runs.header(sys.argv, 1, loads) if not l.startswith("runs:")]
    rounds = "" if a.rounds == 1 else "; inference: the fastest of %d rounds' medians (--rounds)" % a.rounds
    out.insert(2, "passes: each time is the median of %d timed passes after %d untimed ones%s" % (a.runs, a.warmup,
                                                                                                 rounds))
    what = "median of %d passes" % a.runs if a.rounds == 1 else "fastest of %d medians of %d passes" % (a.rounds,
                                                                                                        a.runs)
    out += ["", "inference, warm forward, ms per batch (%s); ratios: peer ms / weft ms (> 1: weft is faster)" % what,
            ""]
    peers = ["MXNet plain", "MXNet oneDNN", "PyTorch"] + (["ONNX Runtime"] if a.ort_python else [])
    same = any(r.get(ORT_MX) is not None for _, _, _, r in rows)  # ONNX Runtime on the network weft runs
    peers += [ORT_MX] if same else []
    out.append("| network | batch | threads | weft | " + " | ".join(peers) + " | vs MXNet best | vs ONNX Runtime |" +
               (" vs ONNX Runtime, MXNet's export |" if same else ""))
    out.append("|---|---|---|---|" + "---|" * len(peers) + "---|---|" + ("---|" if same else ""))
    for net, b, t, r in rows:
        best = min([v for v in (r.get("MXNet plain"), r.get("MXNet oneDNN")) if v is not None], default=None)
        out.append("| %s | %d | %d | %s | %s | %s | %s |" % (
            net, b, t, fmt(r["weft"]), " | ".join(fmt(r.get(p)) for p in peers), ratio(r["weft"], best),
            ratio(r["weft"], r.get("ONNX Runtime"))) + (" %s |" % ratio(r["weft"], r.get(ORT_MX)) if same else ""))
    if a.rounds > 1:
        out += ["", "each round's median, ms (round 1 / 2 / ...):", "",
                "| network | batch | threads | weft | " + " | ".join(peers) + " |",
                "|---|---|---|---|" + "---|" * len(peers)]
        for (net, b, t), cell in times.items():
            out.append("| %s | %d | %d | %s |" % (net, b, t, " | ".join(
                " / ".join(fmt(v) for v in cell.get(p, [])) or "–" for p in ["weft"] + peers)))
    if train:
        out += ["", "ResNet-18 v1 training step at batch %d (ms, median): weft and MXNet through MXNet's Gluon "
                "(hybridized), PyTorch its own" % a.train_batch, "",
                "| threads | weft | MXNet 1.9.1 | PyTorch | vs MXNet | vs PyTorch |", "|---|---|---|---|---|---|"]
        for t, r in train:
            out.append("| %d | %s | %s | %s | %s | %s |" % (t, fmt(r["weft"]), fmt(r["MXNet"]), fmt(r["PyTorch"]),
                                                          ratio(r["weft"], r["MXNet"]), ratio(r["weft"], r["PyTorch"])))
    return "\n".join(out)


if __name__ == "__main__":
    main()
