#!/usr/bin/env python3
"""CPU training and inference speed of weft against PyTorch and Apache MXNet 1.9.1, one after
another on the same machine: Fashion-MNIST, MXNet's MLP and LeNet, batch 100, SGD lr 0.05
momentum 0.9, the same number of epochs, under each thread setting a user is likely to try.

Usage: compare.py BUILD_DIR [--nets mlp,lenet] [--epochs N] [--settings omp2,one,none]
                  [--runs N] [--output FILE] [--mxnet-python PY | --mxnet-venv DIR] [--torch-python PY]
                  [--force]

Settings (each applied to all three programs alike, other thread variables removed):
  omp2  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 WEFT_CPU_MATH_THREADS=2
  one   the same three at 1
  none  no thread variable set (each program's default)
weft runs build/bin/train_mnist (median epoch samples/s, last validation accuracy) and then
build/bin/predict_mnist --repeat 5 on the checkpoint it wrote (inference samples/s: the median of
passes 2-5 over the test set, so that no program is timed with its one-time start-up costs, as
the peers measure after training in a warm process); the peers run peer_fmnist.py, which times
inference the same way. MXNet comes from --mxnet-python, else from the virtual environment --mxnet-venv
(default ~/.cache/weft-bench/mxnet-1.9.1), created with `pip install mxnet==1.9.1 "numpy<1.24"`
when it lacks mxnet. PyTorch is Debian's python3-torch (scripts/setup.sh --bench).
With --runs N (--rounds is the old name) every program runs N times per setting, interleaved, and
each figure is the median over the runs with their range [min-max]; the ratios are those of the
medians. Run r seeds every program's initialisation and shuffling with r: after 2 epochs LeNet's
accuracy varies by about 0.03 between seeds (weft seeds 0-3: 0.851, 0.883, 0.874, 0.875), so one
seed compares luck; the accuracy table shows the median over the runs' seeds.
Prints markdown tables: samples/s with the ratios weft/peer, inference, accuracy, under a header
naming the date, the command, the machine (lscpu), its ISA and the load average before each run;
--output FILE writes the same text to FILE (bench/results/ keeps the runs behind the README).
Refuses to start when the 1-minute load average is >= 3 (--force overrides): numbers from a busy
shared machine are not comparable. Absolute numbers drift; compare ratios from one run.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import runs as bench_runs  # noqa: E402  (bench/runs.py: the machine header)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS",
               "WEFT_CPU_MATH_THREADS", "WEFT_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS")
SETTINGS = {
    "omp2": ("`OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 WEFT_CPU_MATH_THREADS=2`",
             {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "WEFT_CPU_MATH_THREADS": "2"}),
    "one": ("all three at 1 thread",
            {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "WEFT_CPU_MATH_THREADS": "1"}),
    "none": ("no thread variables set", {}),
}


def run(cmd, env, what):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        sys.exit(f"{what} failed ({' '.join(cmd)}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout


def mxnet_python(a):
    if a.mxnet_python:
        return a.mxnet_python
    py = os.path.join(a.mxnet_venv, "bin", "python")
    probe = subprocess.run([py, "-c", "import mxnet"], capture_output=True) if os.path.exists(py) else None
    if probe is None or probe.returncode != 0:
        print(f"creating the MXNet environment {a.mxnet_venv} (pip install mxnet==1.9.1)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", a.mxnet_venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "mxnet==1.9.1", "numpy<1.24"], check=True)
    return py


def weft(a, net, env, workdir, seed):
    prefix = os.path.join(workdir, net)
    out = run([os.path.join(a.build_dir, "bin", "train_mnist"), "--network", net, "--epochs", str(a.epochs),
               "--batch-size", "100", "--lr", "0.05", "--momentum", "0.9", "--lr-factor", "1", "--seed", str(seed),
               "--model-prefix", prefix], env, "train_mnist")
    rates = [float(r) for r in re.findall(r"Speed=([0-9.]+) samples/s", out)]
    acc = re.findall(r"Validation-accuracy=([0-9.]+)", out)[-1]
    pred = run([os.path.join(a.build_dir, "bin", "predict_mnist"), "--model-prefix", prefix, "--epoch",
                str(a.epochs), "--batch-size", "100", "--repeat", "5"], env, "predict_mnist")
    infer = float(re.search(r"([0-9.]+) samples/s", pred).group(1))
    return statistics.median(rates), infer, float(acc)


def peer(py, framework, a, net, env, seed):
    out = run([py, os.path.join(HERE, "peer_fmnist.py"), framework, net, str(a.epochs), "100", str(seed)], env,
              framework)
    m = re.search(r"train_sps=([0-9.]+) infer_sps=([0-9.]+) test_acc=([0-9.]+)", out)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def fmt(x):
    return f"{x:,.0f}".replace(",", " ")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build_dir")
    p.add_argument("--nets", default="mlp,lenet")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--settings", default="omp2,one,none")
    p.add_argument("--runs", "--rounds", dest="runs", type=int, default=1)
    p.add_argument("--output")
    p.add_argument("--mxnet-python")
    p.add_argument("--mxnet-venv", default=os.path.expanduser("~/.cache/weft-bench/mxnet-1.9.1"))
    p.add_argument("--torch-python", default="/usr/bin/python3")
    p.add_argument("--force", action="store_true")
    a = p.parse_args()
    load = os.getloadavg()[0]
    if load >= 3 and not a.force:
        sys.exit(f"load average {load:.1f} >= 3: the machine is busy, a fair measurement is not possible "
                 "(--force overrides)")
    programs = {"weft": None, "PyTorch": a.torch_python, "MXNet 1.9.1": mxnet_python(a)}
    nets = a.nets.split(",")
    settings = a.settings.split(",")
    base = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    results = {}  # (setting, net, program) -> list of (train, infer, acc)
    loads = []
    with tempfile.TemporaryDirectory(prefix="weft-compare-") as workdir:
        for r in range(a.runs):
            loads.append(os.getloadavg()[0])
            for s in settings:
                env = dict(base, **SETTINGS[s][1])
                for net in nets:
                    for name, py in programs.items():
                        framework = "torch" if name == "PyTorch" else "mxnet"
                        got = weft(a, net, env, workdir, r) if py is None else peer(py, framework, a, net, env, r)
                        results.setdefault((s, net, name), []).append(got)
                        print(f"run {r + 1} {s} {net} {name}: train {got[0]:.0f}/s infer {got[1]:.0f}/s "
                              f"acc {got[2]:.4f}", file=sys.stderr, flush=True)

    text = "\n".join(bench_runs.header(sys.argv, a.runs, loads)) + "\n\n" + tables(a, settings, nets, programs, results)
    sys.stdout.write(text)
    if a.output:
        with open(a.output + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(a.output + ".tmp", a.output)


def tables(a, settings, nets, programs, results):
    """The markdown tables: samples/s as median [min-max] over the runs, ratios of the medians."""
    def med(s, net, name, i):
        return statistics.median(v[i] for v in results[(s, net, name)])

    def cell(s, net, name, i):
        vals = [v[i] for v in results[(s, net, name)]]
        if len(vals) == 1:
            return fmt(vals[0])
        return f"{fmt(statistics.median(vals))} [{fmt(min(vals))}–{fmt(max(vals))}]"

    out = [f"batch 100, SGD lr 0.05 momentum 0.9, {a.epochs} epochs (median epoch), {a.runs} run(s)", ""]
    for title, i in (("training samples/s", 0), ("inference samples/s (forward, batch 100)", 1)):
        out += [f"{title}:", "", "| setting | net | weft | PyTorch | MXNet 1.9.1 | weft / PyTorch | weft / MXNet |",
                "|---|---|---|---|---|---|---|"]
        for s in settings:
            for k, net in enumerate(nets):
                w, t, m = (med(s, net, n, i) for n in programs)
                cells = " | ".join(cell(s, net, n, i) for n in programs)
                label = SETTINGS[s][0] if k == 0 else "same"
                out.append(f"| {label} | {net} | {cells} | {w / t:.2f}× | {w / m:.2f}× |")
        out.append("")
    out += [f"test accuracy after {a.epochs} epochs (median over the runs' seeds):", "",
            "| setting | net | weft | PyTorch | MXNet 1.9.1 |", "|---|---|---|---|---|"]
    for s in settings:
        for net in nets:
            w, t, m = (med(s, net, n, 2) for n in programs)
            out.append(f"| {s} | {net} | {w:.4f} | {t:.4f} | {m:.4f} |")
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    main()
