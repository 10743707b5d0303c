#!/usr/bin/env python3
"""Tests of scripts/gen_ops_md.py (the generated OPS.md).

  gen_ops_md_test.py <weft source root> <weft-ops-json> <weft-info> <plugin path> <weft-conformance>

A small source tree, kernel and case listings and certificates are written into a temporary
directory (no fake certificate is committed); the real registry, the built plugins' kernel files
(weft-info --json) and the suite's cases (weft-conformance --list-cases) are checked for what a
source scan missed: kernels reached through functor headers and helper shaders, and the cases.
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv[1])
OPS_TOOL, WEFT_INFO, PLUGIN_PATH, CONFORMANCE = sys.argv[2:6]
del sys.argv[1:6]
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import gen_ops_md  # noqa: E402  (needs the path above)

OPS = [
    {"name": "myop", "definition": "core/operator/defs/nn.cc", "aliases": ["MyOp"], "gradient": "op",
     "backward_op": "_backward_myop"},
    {"name": "other", "definition": "core/operator/defs/nn.cc", "aliases": [], "gradient": "none",
     "backward_op": ""},
    {"name": "max", "definition": "core/operator/defs/nn.cc", "aliases": [], "gradient": "zero", "backward_op": ""},
]
TREE = {
    "core/operator/defs/nn.cc": "",
    "plugins/cpu/kernels/nn_my.cc": "",
    "plugins/cpu/kernels/other.cc": "",
    "plugins/gpu_common/gpu_nn_my.h": "",
    "plugins/gpu_common/gpu_elem.h": "",
    "plugins/vulkan/vk_kernels.cc": "",
    "plugins/vulkan/shaders/myop.comp": "",
    "plugins/vulkan/shaders/gemm.comp": "",
    "core/tools/conformance/op_cases.cc": "",
    "tests/cpu_kernels/my_test.cc": 'RunOp("myop", {});\nauto p = s.attrs.GetEnum("pool_type", {"max", "avg"}, "max");\n',
    "tests/operator/all_test.cc": '{"myop", "other", "max"}\n',
}
# weft-info --json's kernel report as the compilers recorded the paths: absolute, and relative to
# a build directory (ccache's base_dir).
DEVICES = ["cpu", "gpu", "vulkan"]


def kernels(root):
    return {
        "kernels": {"cpu": ["myop", "_backward_myop", "other"], "gpu": ["myop", "_backward_myop"],
                    "vulkan": ["myop", "max"]},
        "kernel_files": {
            "cpu": {"myop": [os.path.join(root, "plugins/cpu/kernels/nn_my.cc")],
                    "_backward_myop": ["../../plugins/cpu/kernels/nn_my.cc"],
                    "other": ["../../plugins/cpu/kernels/other.cc"]},
            "gpu": {"myop": ["../../plugins/gpu_common/gpu_nn_my.h", "../../plugins/gpu_common/gpu_elem.h"],
                    "_backward_myop": ["../../plugins/gpu_common/gpu_nn_my.h"]},
            # max: registered by a plugin that recorded no source file (an older SDK).
            "vulkan": {"myop": ["../../plugins/vulkan/vk_kernels.cc", "../../plugins/vulkan/shaders/myop.comp",
                                "../../plugins/vulkan/shaders/gemm.comp"]},
        },
    }


CASES = {"myop": [{"case": "myop() on (2, 3)", "file": "../../core/tools/conformance/op_cases.cc"},
                  {"case": "myop() on (1)", "file": "../../core/tools/conformance/op_cases.cc"}]}


def write_tree(root, tree):
    for rel, text in tree.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def row(text, op):
    for line in text.splitlines():
        if line.startswith("| `{}`".format(op)):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError("no row for {} in:\n{}".format(op, text))


def header(text):
    return [c.strip() for c in next(l for l in text.splitlines() if l.startswith("| op |")).strip("|").split("|")]


class SmallTree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        write_tree(self.root, TREE)

    def tearDown(self):
        self.tmp.cleanup()

    def generate(self, **kw):
        return gen_ops_md.generate(OPS, self.root, kw.pop("kernels", kernels(self.root)), CASES, devices=DEVICES, **kw)

    def certify(self, plugin, ops):
        write_tree(self.root, {"docs/conformance/{}.json".format(plugin):
                               json.dumps({"plugin": {"name": plugin, "version": "1"}, "ops": ops})})

    def test_files_by_plugin_and_backward_grouping(self):
        text = self.generate()
        myop = dict(zip(header(text), row(text, "myop")))
        self.assertEqual(myop["op"], "`myop` (alias `MyOp`)")
        self.assertEqual(myop["backward"], "`_backward_myop`")
        self.assertEqual(myop["definition"], "[nn.cc](core/operator/defs/nn.cc)")
        self.assertEqual(myop["cpu"], "[nn_my.cc](plugins/cpu/kernels/nn_my.cc)")
        self.assertEqual(myop["gpu"], "[gpu_nn_my.h](plugins/gpu_common/gpu_nn_my.h), [gpu_elem.h](plugins/gpu_common/gpu_elem.h); "
                                      "backward [gpu_nn_my.h](plugins/gpu_common/gpu_nn_my.h)")
        self.assertEqual(myop["vulkan"], "[vk_kernels.cc](plugins/vulkan/vk_kernels.cc), [myop.comp](plugins/vulkan/shaders/myop.comp), "
                                         "[gemm.comp](plugins/vulkan/shaders/gemm.comp) (no backward)")
        self.assertEqual(myop["conformance cases"], "2 ([op_cases.cc](core/tools/conformance/op_cases.cc))")
        self.assertEqual(myop["tests"], "[my_test.cc](tests/cpu_kernels/my_test.cc)")
        other = dict(zip(header(text), row(text, "other")))
        self.assertEqual((other["gpu"], other["vulkan"], other["conformance cases"]), ("", "", ""))
        # A kernel without recorded files; "max" as an attribute value in a test is not the op;
        # the suite-wide test file is in the header.
        mx = dict(zip(header(text), row(text, "max")))
        self.assertEqual(mx["vulkan"], "(no source file recorded)")
        self.assertEqual(mx["tests"], "")
        self.assertIn("[all_test.cc](tests/operator/all_test.cc)", text.split("| op |")[0])

    def test_a_file_not_in_the_tree_is_an_error(self):
        k = kernels(self.root)
        k["kernel_files"]["cpu"]["other"] = ["../../plugins/cpu/kernels/renamed.cc"]
        with self.assertRaises(SystemExit) as e:
            self.generate(kernels=k)
        self.assertIn("renamed.cc", str(e.exception))

    def test_a_missing_device_type_is_an_error(self):
        k = kernels(self.root)
        del k["kernels"]["vulkan"]
        with self.assertRaises(SystemExit) as e:
            self.generate(kernels=k)
        self.assertIn("'vulkan'", str(e.exception))

    def test_no_certificates_no_device_columns(self):
        text = self.generate()
        self.assertEqual(header(text), ["op", "backward", "definition", "cpu", "gpu", "vulkan", "conformance cases",
                                        "tests"])
        self.assertIn("no conformance certificate", text)

    def test_certificate_columns(self):
        self.certify("cpu", {"myop": {"float32": {"forward": "pass", "backward": "pass"},
                                      "float16": {"forward": "pass", "backward": "not claimed"},
                                      "int8": {"forward": "not claimed", "backward": "not claimed"}},
                             "other": {"float32": {"forward": "pass", "backward": "none"}}})
        self.certify("alpha", {"myop": {"float32": {"forward": "pass", "backward": "fail"},
                                        "float64": {"forward": "pass", "backward": "pass"}},
                               "other": {"float32": {"forward": "not claimed", "backward": "none"}}})
        text = self.generate()
        self.assertEqual(header(text)[-2:], ["certified: alpha", "certified: cpu"])  # sorted by plugin name
        self.assertNotIn("no conformance certificate", text)
        self.assertEqual(row(text, "myop")[-1], "✓ float32, float16 (forward only)")
        self.assertEqual(row(text, "myop")[-2], "✗ fails float32 (backward); passes float64")
        self.assertEqual(row(text, "other")[-1], "✓ float32")
        self.assertEqual(row(text, "other")[-2], "—")
        self.assertEqual(row(text, "max")[-1], "—")

    def test_cells_a_time_budget_cut_short_are_marked_not_run(self):
        self.certify("cpu", {"myop": {"float32": {"forward": "not run", "backward": "not run"}}})
        text = self.generate()
        self.assertEqual(row(text, "myop")[-1], "not run: float32")

    def test_malformed_certificate_is_an_error(self):
        write_tree(self.root, {"docs/conformance/bad.json": '{"ops": {}}'})
        with self.assertRaises(SystemExit) as e:
            self.generate()
        self.assertIn("bad.json", str(e.exception))

    def test_missing_definition_file_is_an_error(self):
        ops = [dict(OPS[0], definition="core/operator/defs/gone.cc")]
        with self.assertRaises(SystemExit) as e:
            gen_ops_md.generate(ops, self.root, kernels(self.root), CASES, devices=DEVICES)
        self.assertIn("gone.cc", str(e.exception))

    def test_check_mode_reports_a_stale_file_with_the_fix_and_skips_without_a_plugin(self):
        saved = {}
        for name, data in (("ops", {"ops": OPS}), ("info", kernels(self.root)), ("cases", {"ops": CASES})):
            saved[name] = os.path.join(self.root, name + ".json")
            with open(saved[name], "w", encoding="utf-8") as f:
                json.dump(data, f)
        ops_md = os.path.join(self.root, "OPS.md")
        script = os.path.join(ROOT, "scripts", "gen_ops_md.py")
        base = [sys.executable, script, "--ops-json", saved["ops"], "--info-json", saved["info"],
                "--cases-json", saved["cases"], "--root", self.root]
        # The script's columns are KERNEL_DEVICES (cpu, cuda, hip, vulkan): this listing lacks
        # cuda and hip, so --check skips and --output refuses.
        skip = subprocess.run(base + ["--check", ops_md], capture_output=True, text=True, timeout=120)
        self.assertEqual(skip.returncode, gen_ops_md.EXIT_SKIP, skip.stdout + skip.stderr)
        self.assertIn("cuda, hip", skip.stdout)
        refuse = subprocess.run(base + ["--output", ops_md], capture_output=True, text=True, timeout=120)
        self.assertNotEqual(refuse.returncode, 0)
        self.assertIn("'cuda'", refuse.stderr)
        info = kernels(self.root)
        info["kernels"].update(cuda=info["kernels"]["gpu"], hip=info["kernels"]["gpu"])
        info["kernel_files"].update(cuda=info["kernel_files"]["gpu"], hip=info["kernel_files"]["gpu"])
        with open(saved["info"], "w", encoding="utf-8") as f:
            json.dump(info, f)
        subprocess.run(base + ["--output", ops_md], check=True, timeout=120)
        ok = subprocess.run(base + ["--check", ops_md], capture_output=True, text=True, timeout=120)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.certify("cpu", {"myop": {"float32": {"forward": "pass", "backward": "pass"}}})
        stale = subprocess.run(base + ["--check", ops_md, "--fix-command", "make-it"], capture_output=True, text=True,
                               timeout=120)
        self.assertEqual(stale.returncode, 1)
        self.assertIn("+| `myop`", stale.stdout)
        self.assertIn("is stale", stale.stdout)
        self.assertIn("make-it", stale.stdout)


class RealRegistry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([OPS_TOOL], capture_output=True, text=True, timeout=120, check=True).stdout
        cls.ops = json.loads(out)["ops"]
        env = dict(os.environ, WEFT_PLUGIN_PATH=PLUGIN_PATH)
        cls.info = json.loads(subprocess.run([WEFT_INFO, "--json"], capture_output=True, text=True, env=env,
                                             timeout=120, check=True).stdout)
        cls.cases = json.loads(subprocess.run([CONFORMANCE, "--list-cases"], capture_output=True, text=True,
                                              timeout=120, check=True).stdout)["ops"]
        # cpu and gpuhost (the GPU layer on the host, a test plugin) are always built; the others
        # when configured.
        cls.devices = [d for d in ["cpu", "gpuhost", "cuda", "hip", "vulkan"] if d in cls.info["kernels"]]
        with contextlib.redirect_stdout(io.StringIO()):
            cls.text = gen_ops_md.generate(cls.ops, ROOT, cls.info, cls.cases, "no/such/dir", devices=cls.devices)

    def cell(self, op, column):
        return dict(zip(header(self.text), row(self.text, op)))[column]

    def test_sorted_and_every_op_has_a_definition(self):
        names = [op["name"] for op in self.ops]
        self.assertEqual(names, sorted(names))
        self.assertGreater(len(names), 50)
        for op in self.ops:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, op["definition"])), op)

    def test_ops_built_by_helpers_lead_to_their_files(self):
        self.assertEqual(self.cell("softmax", "definition"), "[softmax.cc](core/operator/defs/softmax.cc)")
        self.assertEqual(self.cell("softmax", "backward"), "`_backward_softmax`")
        self.assertIn("plugins/cpu/kernels/softmax.cc", self.cell("softmax", "cpu"))
        self.assertEqual(self.cell("sin", "definition"), "[elemwise.cc](core/operator/defs/elemwise.cc)")
        # Registered through a helper (elemwise_kernels.h's AddUnary): the caller's file is named.
        self.assertNotIn("elemwise_kernels.h", self.cell("sin", "cpu"))
        self.assertIn("`ElementWiseSum`", row(self.text, "add_n")[0])

    def test_kernels_reached_through_functors_and_helper_shaders(self):
        # What a scan for op names missed (issue 35): the GPU layer's family files (registering
        # their own ops, or reached through a SourceScope: a loss runs the tensor copy class),
        # Vulkan's helper shaders, the cuDNN convolution's file.
        self.assertEqual(self.cell("sin", "gpuhost"), "[gpu_elemwise_unary.h](plugins/gpu_common/gpu_elemwise_unary.h)")
        self.assertEqual(self.cell("softmax", "gpuhost"), "[gpu_softmax.h](plugins/gpu_common/gpu_softmax.h)")
        self.assertEqual(self.cell("LeakyReLU", "gpuhost"), "[gpu_nn_activation.h](plugins/gpu_common/gpu_nn_activation.h)")
        self.assertIn("plugins/gpu_common/gpu_tensor_copy.h", self.cell("LinearRegressionOutput", "gpuhost"))
        self.assertIn("plugins/gpu_common/gpu_loss.h", self.cell("LinearRegressionOutput", "gpuhost"))
        if "vulkan" in self.devices:
            conv = self.cell("Convolution", "vulkan")
            for shader in ("im2col.comp", "col2im.comp", "gemm4.comp", "Convolution.comp"):
                self.assertIn("plugins/vulkan/shaders/" + shader, conv)
            self.assertIn("plugins/vulkan/shaders/gemm4.comp", self.cell("FullyConnected", "vulkan"))
        if "cuda" in self.devices:
            self.assertIn("plugins/cuda/cudnn_conv.cc", self.cell("Convolution", "cuda"))
            self.assertIn("plugins/gpu_common/gpu_nn_conv.h", self.cell("Convolution", "cuda"))
            self.assertIn("plugins/gpu_common/gpu_softmax.h", self.cell("softmax", "cuda"))
        if "hip" in self.devices:
            self.assertIn("plugins/gpu_common/gpu_softmax.h", self.cell("softmax", "hip"))

    def test_conformance_cases_column(self):
        self.assertRegex(self.cell("elemwise_add", "conformance cases"),
                         r"^\d+ \(\[op_cases.cc\]\(core/tools/conformance/op_cases.cc\)\)$")
        self.assertIn("core/tools/conformance/", self.cell("Convolution", "conformance cases"))
        total = sum(len(c) for c in self.cases.values())
        self.assertGreater(total, 100)
        for name, cases in self.cases.items():
            self.assertTrue(any(op["name"] == name for op in self.ops), name)  # canonical names
            self.assertTrue(self.cell(name, "conformance cases").startswith("{} (".format(len(cases))), name)

    def test_contracts_come_from_the_definitions(self):
        # The contract table (after "## Contracts") against what the definitions declare, for ops
        # with hidden outputs, aux states, every kind of backward input and both flags.
        contracts = self.text[self.text.index("## Contracts"):]
        cols = header(contracts)
        bn = dict(zip(cols, row(contracts, "BatchNorm")))
        self.assertEqual(bn["inputs"], "data, gamma, beta")
        self.assertEqual(bn["outputs"], "output, [mean], [var]")
        self.assertEqual(bn["aux"], "moving_mean, moving_var")
        self.assertEqual((bn["backward"], bn["uses"]), ("`_backward_BatchNorm`", "I O A"))
        self.assertIn("eps (0.001)", bn["attributes (default)"])
        fc = dict(zip(cols, row(contracts, "FullyConnected")))
        self.assertEqual(fc["inputs"], "data, weight, bias")
        self.assertIn("num_hidden (*required*)", fc["attributes (default)"])
        self.assertEqual(dict(zip(cols, row(contracts, "Dropout")))["flags"], "RANDOM")
        self.assertEqual(dict(zip(cols, row(contracts, "SoftmaxOutput")))["flags"], "LOSS")
        self.assertEqual(dict(zip(cols, row(contracts, "relu")))["in-place"], "0→0")
        self.assertEqual(dict(zip(cols, row(contracts, "BlockGrad")))["backward"], "zero")
        self.assertEqual(len([l for l in contracts.splitlines() if l.startswith("| `")]), len(self.ops))

    def test_kernel_columns_match_the_registered_kernels(self):
        # Every kernel a plugin registers records its files (the SDK's KernelTable::Add), and a
        # cell is empty exactly when the plugin has no kernel for the op.
        checked = 0
        for device in self.devices:
            have = set(self.info["kernels"][device])
            self.assertEqual(set(self.info["kernel_files"][device]), have, device)
            for op_name, files in self.info["kernel_files"][device].items():
                self.assertTrue(files, "{} on {} recorded no file".format(op_name, device))
            for op in self.ops:
                cell = self.cell(op["name"], device)
                self.assertEqual(cell != "", op["name"] in have, "{} on {}: '{}'".format(op["name"], device, cell))
                if cell and op["backward_op"]:
                    self.assertEqual("(no backward)" not in cell, op["backward_op"] in have,
                                     "{} on {}: '{}'".format(op["backward_op"], device, cell))
                checked += 1
        self.assertGreaterEqual(checked, 2 * len(self.ops))

    def test_deterministic(self):
        self.assertEqual(self.text, gen_ops_md.generate(self.ops, ROOT, self.info, self.cases, "no/such/dir",
                                                        devices=self.devices))


if __name__ == "__main__":
    unittest.main(verbosity=2)
