#!/usr/bin/env python3
"""Lists the tests the last CTest run in a build directory skipped, each with its reason.

Usage: skipped_tests.py BUILD_DIR [--title TEXT]

Reads BUILD_DIR/Testing/Temporary/LastTest.log (written by every ctest run) and prints one line
per skipped test: its name and the reason it gave (GoogleTest's GTEST_SKIP message, or the last
line of output of a test skipped by its exit code). scripts/test.sh prints it after each pass, so
that what a green run did not test is in its log. Exit status 0 whatever it finds; 2 when the log
is missing.
"""
import argparse
import os
import re
import sys


def skipped(log_text):
    """(name, reason) of every skipped test in a LastTest.log."""
    out = []
    # Each test's block starts with "<i>/<n> Test: <name>" and ends before the next one.
    blocks = re.split(r"^\d+/\d+ Test: ", log_text, flags=re.M)[1:]
    for block in blocks:
        name = block.split("\n", 1)[0].strip()
        if "Skip regular expression found" not in block and "Skip return code" not in block:
            continue
        output = block.split("Output:\n", 1)[-1].split("<end of output>", 1)[0]
        # GoogleTest: "<file>:<line>: Skipped" followed by the message, up to "[  SKIPPED ]".
        m = re.search(r": Skipped\n(.*?)\[  SKIPPED \]", output, flags=re.S)
        if m:
            reason = " ".join(line.strip() for line in m.group(1).strip().splitlines() if line.strip())
        else:
            lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("---")]
            reason = lines[-1] if lines else "(no output)"
        out.append((name, reason or "(no reason given)"))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build_dir")
    p.add_argument("--title", default="")
    a = p.parse_args()
    path = os.path.join(a.build_dir, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(path):
        print(f"skipped_tests: {path} does not exist (no ctest run in {a.build_dir})", file=sys.stderr)
        return 2
    with open(path, encoding="utf-8", errors="replace") as f:
        found = skipped(f.read())
    title = f" ({a.title})" if a.title else ""
    print(f"skipped tests{title}: {len(found)}")
    for name, reason in found:
        print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
