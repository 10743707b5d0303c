#!/usr/bin/env python3
"""Writes OPS.md: every built-in operator of weft, where it is defined, where each device plugin
implements it, which conformance cases and tests check it, and (from conformance certificates)
which devices pass it.

Every column comes from what the programs register, not from a scan of the sources, except tests:
  - ops, definitions, contracts: the op registry (weft-ops-json, core/tools/ops_json.cc);
  - kernel columns: the kernels the device plugins register (weft-info --json "kernel_files": each
    kernel's weft_kernel_def.source_file and math_files, filled by the SDK's KernelTable::Add and
    SourceScope), for the device types in KERNEL_DEVICES;
  - conformance cases: the suite's cases per op (weft-conformance --list-cases);
  - tests: test files naming the op (a scan of tests/: which ops a test runs is known only when it
    runs, so nothing registers it);
  - device columns: docs/conformance/<plugin>.json (written by weft-conformance).
The output depends on those inputs only: sorted, no timestamps.

  gen_ops_md.py --ops-tool bin/weft-ops-json --info-tool bin/weft-info --plugin-path lib/weft/plugins \\
                --conformance-tool bin/weft-conformance --root . --output OPS.md
  gen_ops_md.py ... --check OPS.md   # exit 1 with a diff when OPS.md is stale; 77 (skipped) when
                                     # a plugin of KERNEL_DEVICES is not built here

The build target `ops_md` runs the first form, the ctest `ops_md_current` the second.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

# Kernel columns: the device types of weft's device plugins, in column order. A build without one
# of them cannot write (or check) OPS.md.
KERNEL_DEVICES = ["cpu", "cuda", "hip", "vulkan"]
TEST_EXTS = (".cc", ".h", ".py")
# Test directories that are plugins, fuzzers or this generator's test, not tests of ops.
TEST_EXCLUDE = ("tests/plugins/", "tests/fuzz/", "tests/docs/")
# A test file naming more than this share of all ops checks every op (a suite): it is listed
# once in the header instead of in every row.
SUITE_SHARE = 0.5
# Lines where a literal is an attribute name or value, not an op name: attribute getters
# (GetTuple("axis")), helpers given an attribute's name, a ternary choosing between attributes.
NOT_AN_OP_LINE = re.compile(r'Get[A-Za-z]*\(|NormalizeAxis\(|\?\s*"|pool_type|act_type|normalization|static const char\s*\*|==\s*"|"\s*==|!=\s*"')
CERT_DIR = "docs/conformance"
FIX_COMMAND = "cmake --build --preset default --target ops_md"
EXIT_SKIP = 77  # ctest SKIP_RETURN_CODE of ops_md_current


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
    """Whether `text` builds op `name` from a prefix literal and a name literal, as tests of op
    families do: "_backward_" + name, "elemwise_" + name ("elemwise_" + "add"), "_backward" +
    "_plus_scalar"."""
    for i in range(1, len(name)):
        prefix, rest = name[:i], name[i:]
        lit = '"' + prefix + '"'
        joined = lit + " +" in text or lit + ") +" in text  # also std::string("broadcast_") + op
        if (prefix.endswith("_") or rest.startswith("_")) and joined and mentions(text, rest):
            return True
    return False


def files_naming(files, name):
    """Test files that name op `name`: a literal, or a name built as built_name() shows."""
    return [rel for rel, text in files.items() if mentions(text, name) or built_name(text, name)]


def repo_path(path, root):
    """`path` as a compiler recorded it (__FILE__: absolute, or relative to a build directory, as
    ccache's base_dir makes it) relative to the source tree `root`: the longest tail of its
    components naming a file under root. Exits naming the path when none does (a stale name)."""
    norm = os.path.normpath(path.replace("\\", "/"))
    if os.path.isabs(norm):
        rel = os.path.relpath(norm, root)
        if not rel.startswith("..") and os.path.isfile(os.path.join(root, rel)):
            return rel.replace(os.sep, "/")
    parts = [p for p in norm.split(os.sep) if p not in ("", ".", "..")]
    for i in range(len(parts)):
        tail = "/".join(parts[i:])
        if os.path.isfile(os.path.join(root, tail)):
            return tail
    sys.exit("gen_ops_md: {}: a kernel or case names this file, which is not in the source tree {} "
             "(a renamed file or a stale name in a SourceScope / ShaderScope)".format(path, root))


def link(rel):
    return "[{}]({})".format(os.path.basename(rel), rel)


def kernel_cell(registered, files, op):
    """The cell of `op` on one device type: `registered` the op names with a kernel there, `files`
    op name -> repository paths of its kernels."""
    if op["name"] not in registered:
        # No forward kernel: the plugin does not run the op, even when it has the backward op
        # (shared by several forward ops, as _backward_copy).
        return ""
    fwd = files.get(op["name"], [])
    cell = ", ".join(link(f) for f in fwd) if fwd else "(no source file recorded)"
    if op["backward_op"]:
        bwd = files.get(op["backward_op"], [])
        if op["backward_op"] not in registered:
            cell += " (no backward)"
        elif bwd != fwd:
            cell += "; backward " + (", ".join(link(f) for f in bwd) if bwd else "(no source file recorded)")
    return cell


def cases_cell(cases):
    """The conformance cases of one op: their count and the files that made them."""
    if not cases:
        return ""
    files = []
    for c in cases:
        if c["file"] not in files:
            files.append(c["file"])
    return "{} ({})".format(len(cases), ", ".join(link(f) for f in files))


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


def generate(ops, root, kernels, cases, cert_dir=CERT_DIR, devices=KERNEL_DEVICES):
    """OPS.md's text. `kernels`: weft-info --json's report ("kernels", "kernel_files"); `cases`:
    weft-conformance --list-cases's "ops"; `devices`: the kernel columns (device types)."""
    tests = read_sources(root, ["tests"], TEST_EXTS, TEST_EXCLUDE)
    certs = load_certificates(root, cert_dir)
    for op in ops:
        if not os.path.isfile(os.path.join(root, op["definition"])):
            sys.exit("gen_ops_md: {}: definition file {} does not exist (core/operator/defs/builtin.h)".format(
                op["name"], op["definition"]))
    registered, kernel_files = {}, {}
    for dev in devices:
        if dev not in kernels.get("kernels", {}):
            sys.exit("gen_ops_md: no plugin registered kernels for device type '{}' (weft-info lists {})".format(
                dev, ", ".join(sorted(kernels.get("kernels", {}))) or "none"))
        registered[dev] = set(kernels["kernels"][dev])
        kernel_files[dev] = {name: [repo_path(f, root) for f in files]
                             for name, files in kernels.get("kernel_files", {}).get(dev, {}).items()}
    case_files = {name: [dict(c, file=repo_path(c["file"], root)) for c in list_]
                  for name, list_ in cases.items()}

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
    out.append("- **kernel columns** (" + ", ".join("*" + d + "*" for d in devices) + "): the files of the "
               "kernels each device plugin registers for the op, as the plugin records them (weft-info --json): "
               "the file that registers the kernel, then the files holding its math (functor headers, the GPU "
               "layer's classes a vendor kernel falls back to, Vulkan shaders). “(no backward)”: the plugin "
               "has the forward kernel only; “backward …”: the backward op's kernel files where they differ.")
    out.append("- **conformance cases**: how many cases weft-conformance runs for the op on every device, "
               "and the files that make them (weft-conformance --list-cases); a backward op is checked "
               "through its forward op's cases.")
    out.append("- **tests**: test files that name the op (a scan of tests/). Every op is also checked by: " +
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
    header = (["op", "backward", "definition"] + list(devices) + ["conformance cases", "tests"] +
              ["certified: " + p for p, _ in certs])
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    for op in ops:
        name = code(op["name"])
        if op["aliases"]:
            name += " (alias " + ", ".join(code(a) for a in op["aliases"]) + ")"
        backward = {"op": code(op["backward_op"]), "zero": "zero", "none": "—"}[op["gradient"]]
        row = [name, backward, link(op["definition"])]
        for dev in devices:
            row.append(kernel_cell(registered[dev], kernel_files[dev], op))
        row.append(cases_cell(case_files.get(op["name"])))
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


def run_json(command, what, env=None):
    """The JSON a tool prints; exits naming the tool when it fails."""
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=env)
    if run.returncode != 0:
        sys.exit("gen_ops_md: {} ({}) failed ({}):\n{}".format(what, " ".join(command), run.returncode, run.stderr))
    return json.loads(run.stdout)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_inputs(args):
    """(ops, kernels report, cases) from the tools or their saved outputs."""
    ops = load_json(args.ops_json)["ops"] if args.ops_json else run_json([args.ops_tool], "weft-ops-json")["ops"]
    if args.info_json:
        kernels = load_json(args.info_json)
    else:
        env = dict(os.environ)
        if args.plugin_path:
            env["WEFT_PLUGIN_PATH"] = args.plugin_path
        kernels = run_json([args.info_tool, "--json"], "weft-info", env)
    if args.cases_json:
        cases = load_json(args.cases_json)["ops"]
    else:
        cases = run_json([args.conformance_tool, "--list-cases"], "weft-conformance")["ops"]
    return ops, kernels, cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--ops-tool", help="the weft-ops-json executable")
    source.add_argument("--ops-json", help="its output, saved")
    info = parser.add_mutually_exclusive_group(required=True)
    info.add_argument("--info-tool", help="the weft-info executable (run with --json)")
    info.add_argument("--info-json", help="its --json output, saved")
    parser.add_argument("--plugin-path", help="WEFT_PLUGIN_PATH for weft-info: the built device plugins")
    cases = parser.add_mutually_exclusive_group(required=True)
    cases.add_argument("--conformance-tool", help="the weft-conformance executable (run with --list-cases)")
    cases.add_argument("--cases-json", help="its --list-cases output, saved")
    parser.add_argument("--root", required=True, help="the weft source tree")
    parser.add_argument("--certificates", default=CERT_DIR, help="certificate directory, relative to --root")
    parser.add_argument("--fix-command", default=FIX_COMMAND, help="the command --check names to regenerate")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--output", help="write OPS.md here")
    target.add_argument("--check", help="compare with this OPS.md; exit 1 with a diff when it differs")
    args = parser.parse_args()

    ops, kernels, cases = load_inputs(args)
    missing = [d for d in KERNEL_DEVICES if d not in kernels.get("kernels", {})]
    if missing and args.check:
        print("cannot check {}: no plugin for device type(s) {} is built here (OPS.md lists every device "
              "plugin's kernels; build with all of {})".format(args.check, ", ".join(missing),
                                                               ", ".join(KERNEL_DEVICES)))
        return EXIT_SKIP
    text = generate(ops, args.root, kernels, cases, args.certificates)
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.output)
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
    print("\n{} is stale: the operators, their kernels, cases or tests, or the certificates changed. "
          "Regenerate it with\n  {}\nand commit it.".format(args.check, args.fix_command))
    return 1


if __name__ == "__main__":
    sys.exit(main())
