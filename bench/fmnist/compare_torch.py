#!/usr/bin/python3
"""Training throughput of weft's train_mnist against PyTorch (the team's peer script torch_fmnist.py,
kept outside the repository: --torch-script, or $WEFT_SHARED_DIR/bench/torch_fmnist.py)
on Fashion-MNIST, same network, batch size, optimizer (SGD lr 0.05 momentum 0.9) and thread count.

Usage: compare_torch.py BUILD_DIR [--network mlp|lenet] [--epochs N] [--batch B] [--threads T] [--force]
Prints samples/s of both (median epoch) and the ratio weft / torch. Refuses to run while the
machine is busy (1-minute load average >= 3) unless --force: shared-machine numbers are not fair.
"""
import argparse, os, re, statistics, subprocess, sys

p = argparse.ArgumentParser()
p.add_argument("build_dir")
p.add_argument("--network", default="mlp", choices=["mlp", "lenet"])
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--batch", type=int, default=100)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--force", action="store_true")
shared = os.environ.get("WEFT_SHARED_DIR")
p.add_argument("--torch-script", default=os.path.join(shared, "bench/torch_fmnist.py") if shared else None)
a = p.parse_args()
if not a.torch_script or not os.path.isfile(a.torch_script):
    p.error(f"PyTorch peer script not found ({a.torch_script}): pass --torch-script PATH or set WEFT_SHARED_DIR")

load = os.getloadavg()[0]
if load >= 3 and not a.force:
    print(f"load average {load:.1f} >= 3: the machine is busy, a fair measurement is not possible (--force overrides)")
    sys.exit(2)

env = dict(os.environ, WEFT_CPU_MATH_THREADS=str(a.threads), WEFT_CPU_WORKER_NTHREADS="1",
           OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
weft = subprocess.run([os.path.join(a.build_dir, "bin", "train_mnist"), "--network", a.network, "--epochs",
                       str(a.epochs), "--batch-size", str(a.batch), "--lr", "0.05", "--momentum", "0.9", "--lr-factor", "1"],
                      env=env, capture_output=True, text=True)
if weft.returncode != 0:
    sys.exit(f"train_mnist failed:\n{weft.stdout}\n{weft.stderr}")
rates = [float(m) for m in re.findall(r"Speed=([0-9.]+) samples/s", weft.stdout)]
accs = re.findall(r"Validation-accuracy=([0-9.]+)", weft.stdout)
weft_sps = statistics.median(rates)

torch = subprocess.run(["/usr/bin/python3", a.torch_script, a.network, str(a.epochs), str(a.batch), str(a.threads)],
                       env=env, capture_output=True, text=True)
if torch.returncode != 0:
    sys.exit(f"torch_fmnist.py failed:\n{torch.stdout}\n{torch.stderr}")
m = re.search(r"train_sps=([0-9.]+).*test_acc=([0-9.]+)", torch.stdout)
torch_sps, torch_acc = float(m.group(1)), m.group(2)

goal = 1.5 if a.network == "mlp" else 1.2
print(f"network={a.network} epochs={a.epochs} batch={a.batch} threads={a.threads} load={load:.1f}")
print(f"weft  train samples/s {weft_sps:10.0f}  test accuracy {accs[-1] if accs else '?'}")
print(f"torch train samples/s {torch_sps:10.0f}  test accuracy {torch_acc}")
print(f"ratio weft/torch {weft_sps / torch_sps:.2f} (goal >= {goal})")
