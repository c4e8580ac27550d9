"""Whole-repo checks: layering, packaging, and the README's example commands."""
import ast
import os
import re
import shlex
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = {"spec": set(), "traces": {"spec"}, "checker": {"spec", "traces"},
          "reports": {"spec", "traces", "checker"}, "cli": {"spec", "traces", "checker", "reports", "cli"}}


def _py_files(folder):
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        for f in files:
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def _imports(path):
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layering(layer):
    allowed = LAYERS[layer] | {layer}
    for path in _py_files(layer):
        for mod, _ in _imports(path):
            if mod.startswith("txncheck."):
                target = mod.split(".")[1]
                assert target in allowed, f"{os.path.relpath(path, ROOT)} imports {mod}: {layer} may not import {target}"


def test_z3_and_pyspark_stay_in_their_engines():
    for folder in LAYERS:
        for path in _py_files(folder):
            rel = os.path.relpath(path, ROOT)
            for mod, _ in _imports(path):
                if mod.split(".")[0] in ("z3", "pysat"):
                    assert rel.startswith(("checker/symbolic/", "tests/")), f"{rel} imports {mod}"
                if mod.split(".")[0] == "pyspark":
                    assert rel.startswith(("checker/spark/", "tests/")), f"{rel} imports pyspark"


def test_default_check_imports_neither_z3_nor_pyspark():
    code = ("import sys; from txncheck.cli import main; main.build_parser(); "
            "import txncheck.checker.run, txncheck.checker.scalar; "
            "print(sorted(m for m in ('z3', 'pyspark', 'pysat') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_wheel_contains_every_package_folder(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path), ROOT], check=True, capture_output=True)
    wheel = next(p for p in os.listdir(tmp_path) if p.endswith(".whl"))
    names = set(zipfile.ZipFile(tmp_path / wheel).namelist())
    for folder in LAYERS:
        for path in _py_files(folder):
            rel = os.path.relpath(path, ROOT)
            assert f"txncheck/{rel}" in names, f"{rel} is missing from the wheel: list its package in pyproject.toml"


def readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    cmds = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            m = re.match(r"\$ (txncheck .*?)(?:\s+# exit (\d))?$", line)
            if m:
                cmds.append((m.group(1), int(m.group(2) or 0)))
    return cmds


@pytest.mark.parametrize("cmd,code", readme_commands())
def test_readme_command(cmd, code, tmp_path_factory):
    cwd = tmp_path_factory.getbasetemp() / "readme"
    cwd.mkdir(exist_ok=True)
    exe = os.path.join(os.path.dirname(sys.executable), "txncheck")
    p = subprocess.run([exe, *shlex.split(cmd)[1:]], capture_output=True, text=True, cwd=cwd, timeout=900)
    assert "Traceback" not in p.stderr
    assert p.returncode == code, f"{cmd}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"


def test_readme_has_commands():
    cmds = [c for c, _ in readme_commands()]
    assert any("check twophase --set rm=3" in c for c in cmds)
    assert any(c.startswith("txncheck replay") for c in cmds)
