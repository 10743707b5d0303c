#!/usr/bin/env python3
"""Tests of scripts/gen_ops_md.py (the generated OPS.md).

  gen_ops_md_test.py <weft source root> <weft-ops-json> <weft-info> <plugin path>

A small source tree and certificates are written into a temporary directory (no fake
certificate is committed); the real registry is checked for ops defined through helpers, and
the kernel columns (a source scan) against the kernels the built plugins register.
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
OPS_TOOL, WEFT_INFO, PLUGIN_PATH = sys.argv[2:5]
del sys.argv[1:5]
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
    "core/operator/defs/nn.cc": 'r.Register(Like("myop")); r.Register(Other("other"));\n',
    # Forward and backward in one file; "max" here is only Pooling's attribute value.
    "plugins/cpu/kernels/nn_my.cc": 't.Add<F>("myop", kF32);\nt.Add<B>("_backward_myop", kF32);\n'
                                    'auto p = s.attrs.GetEnum("pool_type", {"max", "avg"}, "max");\n',
    "plugins/cpu/kernels/other.cc": 't.Add<O>("other", kF32);\n',
    # A built backward name: found in the forward's file.
    "plugins/gpu_common/gpu_ops.h": 'Add("myop"); Add("_backward_" + name);\n',
    # Vulkan: forward only, a shader named after the op and host code elsewhere.
    "plugins/vulkan/shaders/myop.comp": "void main() {}\n",
    "plugins/vulkan/vk_kernels.cc": 'Register("max");\n',
    "tests/cpu_kernels/my_test.cc": 'RunOp("myop", {});\n',
    "tests/operator/all_test.cc": '{"myop", "other", "max"}\n',
}


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

    def certify(self, plugin, ops):
        write_tree(self.root, {"docs/conformance/{}.json".format(plugin):
                               json.dumps({"plugin": {"name": plugin, "version": "1"}, "ops": ops})})

    def test_files_by_plugin_and_backward_grouping(self):
        text = gen_ops_md.generate(OPS, self.root)
        myop = dict(zip(header(text), row(text, "myop")))
        self.assertEqual(myop["op"], "`myop` (alias `MyOp`)")
        self.assertEqual(myop["backward"], "`_backward_myop`")
        self.assertEqual(myop["definition"], "[nn.cc](core/operator/defs/nn.cc)")
        self.assertEqual(myop["cpu"], "[nn_my.cc](plugins/cpu/kernels/nn_my.cc)")
        self.assertEqual(myop["cuda / hip"], "[gpu_ops.h](plugins/gpu_common/gpu_ops.h)")
        self.assertEqual(myop["vulkan"], "[myop.comp](plugins/vulkan/shaders/myop.comp) (no backward)")
        self.assertEqual(myop["tests"], "[my_test.cc](tests/cpu_kernels/my_test.cc)")
        # "max" as an attribute value is not the op; the suite-wide test file is in the header.
        self.assertEqual(row(text, "max")[3], "")
        self.assertEqual(row(text, "max")[5], "[vk_kernels.cc](plugins/vulkan/vk_kernels.cc)")
        self.assertIn("[all_test.cc](tests/operator/all_test.cc)", text.split("| op |")[0])

    def test_no_certificates_no_device_columns(self):
        text = gen_ops_md.generate(OPS, self.root)
        self.assertEqual(header(text), ["op", "backward", "definition", "cpu", "cuda / hip", "vulkan", "tests"])
        self.assertIn("no conformance certificate", text)

    def test_certificate_columns(self):
        self.certify("cpu", {"myop": {"float32": {"forward": "pass", "backward": "pass"},
                                      "float16": {"forward": "pass", "backward": "not claimed"},
                                      "int8": {"forward": "not claimed", "backward": "not claimed"}},
                             "other": {"float32": {"forward": "pass", "backward": "none"}}})
        self.certify("alpha", {"myop": {"float32": {"forward": "pass", "backward": "fail"},
                                        "float64": {"forward": "pass", "backward": "pass"}},
                               "other": {"float32": {"forward": "not claimed", "backward": "none"}}})
        text = gen_ops_md.generate(OPS, self.root)
        self.assertEqual(header(text)[-2:], ["certified: alpha", "certified: cpu"])  # sorted by plugin name
        self.assertNotIn("no conformance certificate", text)
        self.assertEqual(row(text, "myop")[-1], "✓ float32, float16 (forward only)")
        self.assertEqual(row(text, "myop")[-2], "✗ fails float32 (backward); passes float64")
        self.assertEqual(row(text, "other")[-1], "✓ float32")
        self.assertEqual(row(text, "other")[-2], "—")
        self.assertEqual(row(text, "max")[-1], "—")

    def test_cells_a_time_budget_cut_short_are_marked_not_run(self):
        self.certify("cpu", {"myop": {"float32": {"forward": "not run", "backward": "not run"}}})
        text = gen_ops_md.generate(OPS, self.root)
        self.assertEqual(row(text, "myop")[-1], "not run: float32")

    def test_malformed_certificate_is_an_error(self):
        write_tree(self.root, {"docs/conformance/bad.json": '{"ops": {}}'})
        with self.assertRaises(SystemExit) as e:
            gen_ops_md.generate(OPS, self.root)
        self.assertIn("bad.json", str(e.exception))

    def test_missing_definition_file_is_an_error(self):
        ops = [dict(OPS[0], definition="core/operator/defs/gone.cc")]
        with self.assertRaises(SystemExit) as e:
            gen_ops_md.generate(ops, self.root)
        self.assertIn("gone.cc", str(e.exception))

    def test_check_mode_reports_a_stale_file_with_the_fix(self):
        ops_json = os.path.join(self.root, "ops.json")
        with open(ops_json, "w", encoding="utf-8") as f:
            json.dump({"ops": OPS}, f)
        ops_md = os.path.join(self.root, "OPS.md")
        script = os.path.join(ROOT, "scripts", "gen_ops_md.py")
        base = [sys.executable, script, "--ops-json", ops_json, "--root", self.root]
        subprocess.run(base + ["--output", ops_md], check=True)
        ok = subprocess.run(base + ["--check", ops_md], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.certify("cpu", {"myop": {"float32": {"forward": "pass", "backward": "pass"}}})
        stale = subprocess.run(base + ["--check", ops_md, "--fix-command", "make-it"], capture_output=True, text=True)
        self.assertEqual(stale.returncode, 1)
        self.assertIn("+| `myop`", stale.stdout)
        self.assertIn("is stale", stale.stdout)
        self.assertIn("make-it", stale.stdout)


class RealRegistry(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        out = subprocess.run([OPS_TOOL], capture_output=True, text=True, timeout=120, check=True).stdout
        cls.ops = json.loads(out)["ops"]
        with contextlib.redirect_stdout(io.StringIO()):
            cls.text = gen_ops_md.generate(cls.ops, ROOT, "no/such/dir")

    def test_sorted_and_every_op_has_a_definition(self):
        names = [op["name"] for op in self.ops]
        self.assertEqual(names, sorted(names))
        self.assertGreater(len(names), 50)
        for op in self.ops:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, op["definition"])), op)

    def test_ops_built_by_helpers_lead_to_their_files(self):
        softmax = dict(zip(header(self.text), row(self.text, "softmax")))
        self.assertEqual(softmax["definition"], "[softmax.cc](core/operator/defs/softmax.cc)")
        self.assertEqual(softmax["backward"], "`_backward_softmax`")
        self.assertIn("plugins/cpu/kernels/softmax.cc", softmax["cpu"])
        sin = dict(zip(header(self.text), row(self.text, "sin")))
        self.assertEqual(sin["definition"], "[elemwise.cc](core/operator/defs/elemwise.cc)")
        self.assertEqual(sin["cpu"], "[elemwise_unary.cc](plugins/cpu/kernels/elemwise_unary.cc)")
        add_n = row(self.text, "add_n")
        self.assertIn("`ElementWiseSum`", add_n[0])

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
        # weft-info lists the kernels each loaded plugin registers. cpu and gpuhost (the GPU
        # layer on the host: the cuda / hip column) are always built; vulkan when WEFT_WITH_VULKAN.
        env = dict(os.environ, WEFT_PLUGIN_PATH=PLUGIN_PATH)
        info = json.loads(subprocess.run([WEFT_INFO, "--json"], capture_output=True, text=True, env=env,
                                         timeout=120, check=True).stdout)
        columns = {"cpu": "cpu", "gpuhost": "cuda / hip", "vulkan": "vulkan"}
        checked = 0
        for device, title in columns.items():
            if device not in info["kernels"]:
                self.assertNotEqual(device, "cpu", "the cpu plugin did not load")
                continue
            have = set(k["op"] if isinstance(k, dict) else k for k in info["kernels"][device])
            for op in self.ops:
                cell = dict(zip(header(self.text), row(self.text, op["name"])))[title]
                self.assertEqual(cell != "", op["name"] in have, "{} on {}: '{}'".format(op["name"], device, cell))
                if cell and op["backward_op"]:
                    self.assertEqual("(no backward)" not in cell, op["backward_op"] in have,
                                     "{} on {}: '{}'".format(op["backward_op"], device, cell))
                checked += 1
        self.assertGreaterEqual(checked, 2 * len(self.ops))

    def test_deterministic(self):
        self.assertEqual(self.text, gen_ops_md.generate(self.ops, ROOT, "no/such/dir"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
