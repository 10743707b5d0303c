#!/usr/bin/env python3
"""Checks that every built-in op sits in the files of its family, as the family table of
docs/adding-an-op.md ("Op families") says: its definition in core/operator/defs/<family>[_*].cc,
every cpu kernel file that names it (or its backward op) plugins/cpu/kernels/<family>[_*].{cc,h},
every Vulkan host file that names it plugins/vulkan/vk_kernels_<family>[_*].cc, every file of the
GPU layer (CUDA, HIP) that names it plugins/gpu_common/gpu_<family>[_*].h, every cpu kernel test
file tests/cpu_kernels/<family>[_*]_test.cc (or one of the cross-family files the table lists), and
the kernel tests that run an op include one of its family's. The GPU layer's other files are the
infrastructure the table's prose lists: they name no op, and a GPU-layer file that is neither
named after a family nor listed fails, as does a listed file that does not exist or a family's
GPU-layer cell that disagrees with its gpu_<family>[_*].h files. An op placed in another family's
file, an op missing from the table or listed twice, and a table row naming no registered op all
fail, with the op, the file and the fix.

usage: check_op_families.py ROOT OPS_JSON_TOOL [TABLE_MD]
The definition files come from the registry (weft-ops-json); kernel and test files from a scan
for the op's name as a string literal.
"""
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

ROW = re.compile(r"^\|\s*`(?P<family>[a-z0-9_]+)`\s*\|(?P<ops>[^|]*)\|")
CROSS = re.compile(r"cross-family kernel tests:(?P<files>.*?)\n\n", re.IGNORECASE | re.DOTALL)
GPU_INFRA = re.compile(r"GPU-layer infrastructure[^:]*:(?P<files>.*?)\n\n", re.IGNORECASE | re.DOTALL)
GPU_DIR = "plugins/gpu_common"
LITERAL = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"')
# The op a kernel test runs: the first argument of the harness's calls (kernel_harness.h, nn_test_util.h,
# tensor_test_util.h).
TEST_CALL = re.compile(r'\b(?:RunOp|ExpectOp|CheckReqModes|Kernel\s+\w+|GradCase\s+\w+)\(\s*"([A-Za-z_][A-Za-z0-9_]*)"')


def read_table(path):
    """family -> [op name or fnmatch pattern] from the table's rows; the cross-family tests; the
    GPU layer's infrastructure files; family -> the GPU-layer files of its row (None: no column)."""
    text = path.read_text()
    start = text.find("## Op families")
    if start < 0:
        sys.exit(f"{path}: no '## Op families' section")
    section = text[start:]
    end = section.find("\n## ", 3)
    section = section if end < 0 else section[:end]
    families, gpu_cells, gpu_column = {}, {}, None
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if gpu_column is None and line.startswith("| family"):
            gpu_column = next((i for i, c in enumerate(cells) if c.startswith("GPU layer")), None)
        m = ROW.match(line)
        if m:
            families[m["family"]] = re.findall(r"`([^`]+)`", m["ops"])
            if gpu_column is not None and gpu_column < len(cells):
                gpu_cells[m["family"]] = set(re.findall(r"gpu_[a-z0-9_]+\.h", cells[gpu_column]))
    cross = CROSS.search(section)
    cross_tests = set(re.findall(r"`([^`]+)`", cross["files"])) if cross else set()
    infra = GPU_INFRA.search(section)
    gpu_infra = set(re.findall(r"`([^`]+)`", infra["files"])) if infra else set()
    if not families:
        sys.exit(f"{path}: the 'Op families' section has no rows")
    return families, cross_tests, gpu_infra, (gpu_cells if gpu_column is not None else None)


def in_family(filename, family, prefix="", suffixes=(".cc", ".h")):
    stem = filename[len(prefix):] if filename.startswith(prefix) else None
    if stem is None:
        return False
    return any(stem == family + s or (stem.startswith(family + "_") and stem.endswith(s)) for s in suffixes)


def family_of_ops(ops, families):
    """op name -> family; errors for ops in no row or in two."""
    errors, owner = [], {}
    for op in ops:
        hits = [f for f, pats in families.items() if any(fnmatch.fnmatchcase(op, p) for p in pats)]
        if not hits:
            errors.append(f"op '{op}' is in no row of the family table: add it to its family's row")
        elif len(hits) > 1:
            errors.append(f"op '{op}' matches the rows of {', '.join(hits)}: keep it in one")
        else:
            owner[op] = hits[0]
    for family, pats in families.items():
        for p in pats:
            if not any(fnmatch.fnmatchcase(op, p) for op in ops):
                errors.append(f"family '{family}' lists `{p}`, which names no registered op")
    return owner, errors


def scan_literals(files):
    """file -> set of string literals that look like names."""
    return {f: set(LITERAL.findall(f.read_text(errors="replace"))) for f in files}


def op_named(lit, owner, other_name):
    """The op a string literal names (itself, or the forward op of a backward op or alias); None."""
    op = lit if lit in owner else other_name.get(lit)
    return op if op in owner else None


def check_gpu_layer(root, families, owner, other_name, gpu_infra, gpu_cells):
    """The GPU layer: family files name their family's ops only, infrastructure names none, every
    file is one of the two, and the table's GPU-layer cells list the family files there are."""
    errors = []
    files = sorted((root / GPU_DIR).glob("gpu_*.h")) + sorted((root / GPU_DIR).glob("gpu_*.cc"))
    names = {f.name for f in files}
    for listed in sorted(gpu_infra - names):
        errors.append(f"the family table lists {listed} as GPU-layer infrastructure, but {GPU_DIR}/{listed} "
                      f"does not exist")
    for path, literals in scan_literals(files).items():
        family = next((f for f in families if in_family(path.name, f, "gpu_", (".h",))), None)
        if path.name not in gpu_infra and family is None:
            errors.append(f"{GPU_DIR}/{path.name} is named after no family: name it gpu_<family>.h (or "
                          f"gpu_<family>_<part>.h), or list it as GPU-layer infrastructure in the family table")
            continue
        for lit in sorted(literals):
            op = op_named(lit, owner, other_name)
            if op is None or (family is not None and owner[op] == family):
                continue
            what = "is GPU-layer infrastructure but" if family is None else "(family " + family + ")"
            errors.append(f"{GPU_DIR}/{path.name} {what} names '{lit}' (family {owner[op]}): move its GPU kernel "
                          f"code to gpu_{owner[op]}.h (or gpu_{owner[op]}_<part>.h)")
    for family, cell in sorted((gpu_cells or {}).items()):
        have = {n for n in names if n not in gpu_infra and in_family(n, family, "gpu_", (".h",))}
        if cell != have:
            listed = ", ".join(sorted(cell)) or "no file"
            there = ", ".join(sorted(have)) or "none"
            errors.append(f"the family table's GPU-layer cell of '{family}' lists {listed}, but {GPU_DIR} has "
                          f"{there}: make the cell name them")
    return errors


def check(root, ops_json, table):
    families, cross_tests, gpu_infra, gpu_cells = read_table(table)
    ops = {o["name"]: o for o in ops_json["ops"]}
    owner, errors = family_of_ops(sorted(ops), families)
    other_name = {o["backward_op"]: name for name, o in ops.items() if o.get("backward_op")}
    other_name.update({alias: name for name, o in ops.items() for alias in o.get("aliases", [])})
    for name, family in owner.items():
        definition = Path(ops[name]["definition"]).name
        if not in_family(definition, family, suffixes=(".cc",)):
            errors.append(f"op '{name}' (family {family}) is defined in {ops[name]['definition']}: "
                          f"move it to core/operator/defs/{family}.cc (or {family}_<part>.cc)")

    def check_layer(files, prefix, where, suffixes):
        for path, names in scan_literals(files).items():
            for lit in sorted(names):
                op = op_named(lit, owner, other_name)
                if op is None:
                    continue
                if not in_family(path.name, owner[op], prefix, suffixes):
                    errors.append(f"{path.relative_to(root)} names '{lit}' (family {owner[op]}): move its "
                                  f"{where} to {prefix}{owner[op]}.cc (or {prefix}{owner[op]}_<part>.cc)")

    cpu = sorted((root / "plugins/cpu/kernels").glob("*.cc")) + sorted((root / "plugins/cpu/kernels").glob("*.h"))
    check_layer(cpu, "", "cpu kernel", (".cc", ".h"))
    vk = sorted((root / "plugins/vulkan").glob("vk_kernels_*.cc"))
    check_layer(vk, "vk_kernels_", "Vulkan host code", (".cc",))
    errors.extend(check_gpu_layer(root, families, owner, other_name, gpu_infra, gpu_cells))
    tested = {}  # op -> the kernel test files that run it
    for test in sorted((root / "tests/cpu_kernels").glob("*_test.cc")):
        if test.name in cross_tests:
            continue
        if not any(in_family(test.name, f, suffixes=("_test.cc",)) for f in families):
            errors.append(f"tests/cpu_kernels/{test.name} is named after no family: name it "
                          f"<family>_test.cc (or <family>_<part>_test.cc), or list it as cross-family")
        for lit in TEST_CALL.findall(test.read_text(errors="replace")):
            op = op_named(lit, owner, other_name)
            if op is not None:
                tested.setdefault(op, set()).add(test.name)
    for op, files in sorted(tested.items()):
        if not any(in_family(f, owner[op], suffixes=("_test.cc",)) for f in files):
            errors.append(f"op '{op}' (family {owner[op]}) has kernel tests only in {', '.join(sorted(files))}: "
                          f"move them to tests/cpu_kernels/{owner[op]}_test.cc (or {owner[op]}_<part>_test.cc)")
    return errors


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    root = Path(argv[1]).resolve()
    table = Path(argv[3]) if len(argv) == 4 else root / "docs/adding-an-op.md"
    ops_json = json.loads(subprocess.run([argv[2]], check=True, capture_output=True, text=True, timeout=120).stdout)
    errors = check(root, ops_json, table)
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} op(s) or file(s) outside their family (table: {table.relative_to(root)})")
        return 1
    print(f"{len(ops_json['ops'])} ops: definitions, cpu kernels, Vulkan host code, the GPU layer and kernel "
          f"tests follow the family table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
