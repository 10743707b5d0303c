#!/usr/bin/env python3
"""Writes OPS.md: every built-in operator of weft, where it is defined, where each device plugin
implements it, where it is tested, and (from conformance certificates) which devices pass it.

The op list comes from the registry (weft-ops-json, built from core/tools/ops_json.cc); the
files from a scan of the source tree; device columns from docs/conformance/<plugin>.json
(written by weft-conformance). The output depends on those inputs only: sorted, no timestamps.

  gen_ops_md.py --ops-tool build/default/bin/weft-ops-json --root . --output OPS.md
  gen_ops_md.py --ops-tool ... --root . --check OPS.md   # exit 1 with a diff when OPS.md is stale

The build target `ops_md` runs the first form, the ctest `ops_md_current` the second.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

# Kernel columns: a device plugin family and the directories holding its kernels. simdev (a test
# plugin) registers the CPU plugin's kernels, gpuhost (a test plugin) the GPU layer's host side.
KERNEL_GROUPS = [
    ("cpu", ["plugins/cpu"]),
    ("cuda / hip", ["plugins/gpu_common", "plugins/cuda", "plugins/hip"]),
    ("vulkan", ["plugins/vulkan"]),
]
SOURCE_EXTS = (".cc", ".h", ".cu", ".hip", ".comp", ".cpp", ".hpp")
TEST_EXTS = (".cc", ".h", ".py")
# Test directories that are plugins, fuzzers or this generator's test, not tests of ops.
TEST_EXCLUDE = ("tests/plugins/", "tests/fuzz/", "tests/docs/")
# A test file naming more than this share of all ops checks every op (a suite): it is listed
# once in the header instead of in every row.
SUITE_SHARE = 0.5
# Lines where an op's name is an attribute value or a comparison, not the op (pool_type "max",
# a table of act_type names).
# Lines where a literal is an attribute name or value, not an op name: attribute getters
# (GetTuple("axis")), helpers given an attribute's name, a ternary choosing between attributes.
NOT_AN_OP_LINE = re.compile(r'Get[A-Za-z]*\(|NormalizeAxis\(|\?\s*"|pool_type|act_type|normalization|static const char\s*\*|==\s*"|"\s*==|!=\s*"')
CERT_DIR = "docs/conformance"
FIX_COMMAND = "cmake --build --preset default --target ops_md"


def read_sources(root, dirs, exts, exclude=()):
    """{relative path: text} of the files under `dirs` with one of `exts`, sorted by path."""
    files = {}
    for d in dirs:
        top = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(exts):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel.startswith(exclude):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[rel] = f.read()
    return dict(sorted(files.items()))


def mentions(text, name):
    """Whether `text` names op `name` as a string literal on a line that is not an attribute value."""
    literal = '"' + name + '"'
    if literal not in text:
        return False
    return any(literal in line and not NOT_AN_OP_LINE.search(line) for line in text.splitlines())


def built_name(text, name):
    """Whether `text` builds op `name` from a prefix literal and a name literal, as kernel tables
    do for op families: "_backward_" + name, "elemwise_" + name ("elemwise_" + "add"), "_backward" +
    "_plus_scalar"."""
    for i in range(1, len(name)):
        prefix, rest = name[:i], name[i:]
        lit = '"' + prefix + '"'
        joined = lit + " +" in text or lit + ") +" in text  # also std::string("broadcast_") + op
        if (prefix.endswith("_") or rest.startswith("_")) and joined and mentions(text, rest):
            return True
    return False


def files_naming(files, name):
    """Files whose text names op `name`: a literal, a name built as built_name() shows, or a
    shader named after the op."""
    out = []
    for rel, text in files.items():
        stem = os.path.splitext(os.path.basename(rel))[0]
        if (rel.endswith(".comp") and stem == name) or mentions(text, name) or built_name(text, name):
            out.append(rel)
    return out


def kernel_files(files, op):
    """(forward files, backward files) of `op` in one plugin family."""
    fwd = files_naming(files, op["name"])
    bwd = files_naming(files, op["backward_op"]) if op["backward_op"] else []
    return fwd, bwd


def link(rel):
    return "[{}]({})".format(os.path.basename(rel), rel)


def kernel_cell(fwd, bwd, op):
    if not fwd:
        # No forward kernel: the plugin does not run the op, even when it has the backward op
        # (shared by several forward ops, as _backward_copy).
        return ""
    cell = ", ".join(link(f) for f in fwd)
    if op["backward_op"]:
        if not bwd:
            cell += " (no backward)"
        elif bwd != fwd:
            cell += "; backward " + ", ".join(link(f) for f in bwd)
    return cell


def load_certificates(root, cert_dir):
    """[(plugin name, ops dict)] from <cert_dir>/*.json, sorted by plugin name."""
    top = os.path.join(root, cert_dir)
    if not os.path.isdir(top):
        return []
    certs = []
    for name in sorted(os.listdir(top)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(top, name)
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as e:
                sys.exit("gen_ops_md: {}: not JSON ({})".format(path, e))
        plugin = data.get("plugin", {}).get("name")
        if not plugin or not isinstance(data.get("ops"), dict):
            sys.exit('gen_ops_md: {}: a certificate needs "plugin": {{"name": ...}} and "ops": {{...}}'.format(path))
        certs.append((plugin, data["ops"]))
    return sorted(certs, key=lambda c: c[0])


def certificate_cell(entry):
    """✓/✗/— for one op in one certificate (see the OPS.md header for the rules)."""
    passed, failed, forward_only, not_run = [], [], [], []
    for dtype in sorted(entry or {}):
        result = entry[dtype]
        fwd, bwd = result.get("forward", "not claimed"), result.get("backward", "none")
        if fwd == "not claimed":
            continue
        if fwd == "fail" or bwd == "fail":
            failed.append(dtype + (" (forward)" if fwd == "fail" else " (backward)"))
        elif fwd == "pass" and bwd in ("pass", "none"):
            passed.append(dtype)
        elif fwd == "pass" and bwd == "not claimed":
            forward_only.append(dtype)
        elif "not run" in (fwd, bwd):  # a time budget (weft-conformance --time-budget) cut the run short
            not_run.append(dtype)
        else:
            sys.exit("gen_ops_md: unknown certificate result {}".format(result))
    if failed:
        cell = "✗ fails " + ", ".join(failed)
        if passed or forward_only:
            cell += "; passes " + ", ".join(passed + [d + " (forward only)" for d in forward_only])
        return cell
    if not passed and not forward_only:
        return "not run: " + ", ".join(not_run) if not_run else "—"
    return "✓ " + ", ".join(passed + [d + " (forward only)" for d in forward_only])


def code(name):
    return "`" + name + "`"


def generate(ops, root, cert_dir=CERT_DIR):
    groups = [(title, read_sources(root, dirs, SOURCE_EXTS)) for title, dirs in KERNEL_GROUPS]
    tests = read_sources(root, ["tests"], TEST_EXTS, TEST_EXCLUDE)
    certs = load_certificates(root, cert_dir)
    for op in ops:
        if not os.path.isfile(os.path.join(root, op["definition"])):
            sys.exit("gen_ops_md: {}: definition file {} does not exist (core/operator/defs/builtin.h)".format(
                op["name"], op["definition"]))

    test_hits = {op["name"]: files_naming(tests, op["name"]) for op in ops}
    counts = {}
    for hits in test_hits.values():
        for f in hits:
            counts[f] = counts.get(f, 0) + 1
    suites = sorted(f for f, n in counts.items() if n > SUITE_SHARE * len(ops))

    out = []
    out.append("# Operators")
    out.append("")
    out.append("<!-- Generated by scripts/gen_ops_md.py; do not edit. Regenerate: {} -->".format(FIX_COMMAND))
    out.append("")
    out.append("Every built-in operator of weft ({} ops), with MXNet 1.9's names: where each is defined, "
               "implemented and tested, and (under Contracts below) its inputs, outputs, attributes and what "
               "its backward op receives. The conventions behind the contracts are in "
               "[core/operator/OPS.md](core/operator/OPS.md).".format(len(ops)))
    out.append("")
    out.append("- **definition**: the file that registers the op (core/operator/defs/builtin.h lists them); "
               "the backward op (`_backward_X`) is declared by its forward op's definition.")
    out.append("- **kernel columns**: the files of each device plugin that name the op or its backward op "
               "(a source scan). *cpu*: plugins/cpu/kernels, also run by the `simdev` test plugin; "
               "*cuda / hip*: the shared GPU layer plugins/gpu_common (also built on the host by the "
               "`gpuhost` test plugin) and the cuda/hip plugins; *vulkan*: host code and GLSL shaders "
               "under plugins/vulkan. “(no backward)”: the plugin has the forward kernel only.")
    out.append("- **tests**: test files that name the op. Every op is also checked by: " +
               (", ".join(link(f) for f in suites) if suites else "(no suite-wide test file)") + ".")
    if certs:
        out.append("- **device columns** (from the conformance certificates in {}/, written by weft-conformance): "
                   "✓ every dtype the plugin claims passes forward (and backward where the op has one), "
                   "listing those dtypes; ✗ some claimed dtype fails; — the plugin claims no kernel for the op."
                   .format(cert_dir))
    else:
        out.append("- **device columns**: none, because no conformance certificate ({}/<plugin>.json, written "
                   "by weft-conformance) is present.".format(cert_dir))
    out.append("")
    header = ["op", "backward", "definition"] + [t for t, _ in groups] + ["tests"] + ["certified: " + p for p, _ in certs]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    for op in ops:
        name = code(op["name"])
        if op["aliases"]:
            name += " (alias " + ", ".join(code(a) for a in op["aliases"]) + ")"
        backward = {"op": code(op["backward_op"]), "zero": "zero", "none": "—"}[op["gradient"]]
        row = [name, backward, link(op["definition"])]
        for _, files in groups:
            row.append(kernel_cell(*kernel_files(files, op), op))
        row.append(", ".join(link(f) for f in test_hits[op["name"]] if f not in suites))
        for _, cert_ops in certs:
            row.append(certificate_cell(cert_ops.get(op["name"])))
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.extend(contract_table(ops))
    return "\n".join(out)


def contract_table(ops):
    """The contract of every op at its default attributes, from the registry (weft-ops-json):
    the table a new op's definition fills in by itself, and the one tests and readers use."""
    if not ops or "inputs" not in ops[0]:
        return []  # an ops listing without contract fields (an older weft-ops-json)
    out = ["## Contracts", "",
           "Each op at its default attributes, from its definition (required attributes shown as "
           "*required*; inputs list every input the op can take, as MXNet's op info does). *outputs*: "
           "hidden outputs in brackets. *uses*: what `_backward_X` receives besides the output gradients "
           "(I its inputs, O its outputs, A its aux states; see core/operator/OPS.md for the convention). "
           "*in-place*: input→output pairs that may share memory. *flags*: LOSS makes its own head "
           "gradient, RANDOM draws random numbers.", "",
           "| op | inputs | outputs | aux | backward | uses | in-place | attributes (default) | flags |",
           "|---|---|---|---|---|---|---|---|---|"]
    for op in ops:
        outputs = ", ".join(op["outputs"] + ["[" + h + "]" for h in op["hidden_outputs"]])
        backward = {"op": code(op["backward_op"]), "zero": "zero", "none": "—"}[op["gradient"]]
        inplace = ", ".join("{}→{}".format(i, o) for i, o in op["inplace"])
        attrs = ", ".join("{} ({})".format(n, "*required*" if d == "required" else d) for n, d in op["attrs"])
        flags = " ".join(f for f, on in (("LOSS", op["loss"]), ("RANDOM", op["random"])) if on)
        row = [code(op["name"]), ", ".join(op["inputs"]), outputs, ", ".join(op["aux"]), backward, op["uses"],
               inplace, attrs.replace("|", "\\|"), flags]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    return out


def load_ops(args):
    if args.ops_json:
        with open(args.ops_json, encoding="utf-8") as f:
            return json.load(f)["ops"]
    run = subprocess.run([args.ops_tool], capture_output=True, text=True, timeout=120, check=False)
    if run.returncode != 0:
        sys.exit("gen_ops_md: {} failed ({}):\n{}".format(args.ops_tool, run.returncode, run.stderr))
    return json.loads(run.stdout)["ops"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ops-tool", help="the weft-ops-json executable")
    source.add_argument("--ops-json", help="its output, saved")
    parser.add_argument("--root", required=True, help="the weft source tree")
    parser.add_argument("--certificates", default=CERT_DIR, help="certificate directory, relative to --root")
    parser.add_argument("--fix-command", default=FIX_COMMAND, help="the command --check names to regenerate")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--output", help="write OPS.md here")
    target.add_argument("--check", help="compare with this OPS.md; exit 1 with a diff when it differs")
    args = parser.parse_args()

    text = generate(load_ops(args), args.root, args.certificates)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    try:
        with open(args.check, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = ""
    if current == text:
        print("{} is current".format(args.check))
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                               args.check + " (committed)", args.check + " (generated)"))
    print("\n{} is stale: the operators, their files or the certificates changed. Regenerate it with\n  {}\n"
          "and commit it.".format(args.check, args.fix_command))
    return 1


if __name__ == "__main__":
    sys.exit(main())
