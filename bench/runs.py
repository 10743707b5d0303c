#!/usr/bin/env python3
"""Runs a benchmark command several times and aggregates its tables: every number becomes the
median over the runs with their range, "median [min-max]".

Usage: bench/runs.py --runs N [--output FILE] [--note TEXT] -- COMMAND [ARGS...]

A benchmark here prints tables: lines whose numbers sit at fixed places among labels
(vulkan_bench, dist_bench, kernels_bench...). The lines of the N outputs are matched by their
position and their words; each number (a "(...)", "%" or "x" around it is kept) is replaced by the
median of its N values and their range. Lines that differ between runs in anything but numbers are
printed from the first run. A header names the date, the command, the machine (lscpu's model name),
the instruction sets weft's CPU loops can use (avx512 / avx2 / baseline from /proc/cpuinfo), the
cores, and the 1-minute load average before each run, since other programs on a shared machine
change every figure. With --output the same text is written to FILE (the results behind the
README's tables are kept in bench/results/).
"""
import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def machine():
    model = "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    flags = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    isa = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags and "fma" in flags else "baseline"
    return model, isa, os.cpu_count(), platform.machine()


def commit():
    """The commit the benchmark ran on (+ "with local changes" when tracked files differ from it)."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return (head or "unknown") + (" with local changes" if dirty else "")


def header(command, runs, loads):
    model, isa, cores, arch = machine()
    # WEFT_CPU_ISA is a ceiling on the level weft's loops take (README, "Settings").
    ceiling = os.environ.get("WEFT_CPU_ISA")
    order = ["baseline", "avx2", "avx512"]
    if ceiling in order and order.index(ceiling) < order.index(isa):
        isa = ceiling + " (WEFT_CPU_ISA; the CPU has " + isa + ")"
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        f"date: {now}",
        f"commit: {commit()}",
        f"command: {' '.join(command)}",
        f"runs: {runs}; every number below is the median over the runs [min-max]",
        f"machine: {model} ({arch}, {cores} cores); ISA of weft's CPU loops: {isa}",
        "load average (1 min) before each run: " + ", ".join(f"{x:.1f}" for x in loads),
    ]
    return lines


def aggregate(outputs):
    """The first output's lines with every number replaced by its median [range] over outputs."""
    split = [o.splitlines() for o in outputs]
    result = []
    for i, line in enumerate(split[0]):
        same = [s[i] for s in split if i < len(s)]
        shapes = {NUMBER.sub("#", s) for s in same}
        numbers = [NUMBER.findall(s) for s in same]
        if len(same) != len(split) or len(shapes) != 1 or not numbers[0]:
            result.append(line)
            continue
        texts = iter(zip(*numbers))

        def replace(_, texts=texts):
            column = next(texts)
            decimals = max(len(t.split(".")[1]) if "." in t else 0 for t in column)
            vals = [float(t) for t in column]
            med, lo, hi = statistics.median(vals), min(vals), max(vals)
            if lo == hi:
                return f"{med:.{decimals}f}"
            return f"{med:.{decimals}f} [{lo:.{decimals}f}-{hi:.{decimals}f}]"

        result.append(NUMBER.sub(replace, line))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--output")
    p.add_argument("--note", default="", help="a line added to the header (e.g. what was changed)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command or a.runs < 1:
        p.error("give --runs N >= 1 and a command after --")
    outputs, loads = [], []
    for r in range(a.runs):
        loads.append(os.getloadavg()[0])
        print(f"run {r + 1} of {a.runs}: {' '.join(command)}", file=sys.stderr)
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.exit(f"runs.py: run {r + 1} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        outputs.append(proc.stdout)
    lines = header(command, a.runs, loads) + ([f"note: {a.note}"] if a.note else []) + [""] + aggregate(outputs)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.output:
        tmp = a.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
