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
            "import txncheck.checker.run, txncheck.checker.scalar.explore; "
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


# ---- the Kafka spec's protocol references resolve in docs/kafka-protocol.md ---------------------

PROTOCOL_DOC = os.path.join(ROOT, "docs", "kafka-protocol.md")
_LABEL = r"[A-Z][A-Z0-9]*-?\d+"  # a row or item label: I11, ATOM-1, B9, KIP-447, TV2
_ITEMS = rf"{_LABEL}(?:\s*[-/]\s*{_LABEL})*|(?:mechanics|obligation) \d+(?:-\d+)?"
_CITE = re.compile(rf"§(\d+(?:\.\d+)?)(?:\s+({_ITEMS}))?")


def _protocol_doc_index():
    """Sections of docs/kafka-protocol.md (from numbered headings) and the labels each one defines:
    first cells of table rows and bold paragraph leads, lower-cased (a label counts for its section
    and for the enclosing ones)."""
    sections, labels, current = set(), {}, None
    for line in open(PROTOCOL_DOC, encoding="utf-8"):
        h = re.match(r"#{1,4}\s+(\d+(?:\.\d+)?)\.?\s", line)
        if h:
            current = h.group(1)
            sections.add(current)
            continue
        if current is None:
            continue
        found = []
        cell = re.match(r"\|\s*([^|]+?)\s*\|", line)
        if cell and not set(cell.group(1)) <= set("-: "):
            found.append(cell.group(1).strip("*` "))
        lead = re.match(r"\s*(?:[-*]\s+|\d+\.\s+)?\*\*([^*]+?)\*\*", line)
        if lead:
            text = lead.group(1)
            found += [text, re.split(r"[:.(`]", text)[0], text.split()[0]]
        for f in found:
            key = f.strip(" .:,;`").lower()
            for sec in (current, current.split(".")[0]):
                labels.setdefault(sec, set()).add(key)
    return sections, labels


def _cited_items(items: str) -> list[str]:
    """`I7-I9` -> I7, I8, I9; `A4/A5` -> A4, A5; `mechanics 1-2` -> mechanics 1, mechanics 2."""
    m = re.fullmatch(r"(mechanics|obligation) (\d+)(?:-(\d+))?", items)
    if m:
        return [f"{m.group(1)} {k}" for k in range(int(m.group(2)), int(m.group(3) or m.group(2)) + 1)]
    out = []
    for part in re.split(r"\s*/\s*", items):
        r = re.fullmatch(rf"({_LABEL})\s*-\s*({_LABEL})", part)
        a, b = (r.group(1), r.group(2)) if r else (part, part)
        (pa, na), (pb, nb) = re.fullmatch(r"(.*?)(\d+)", a).groups(), re.fullmatch(r"(.*?)(\d+)", b).groups()
        if r and pa == pb:
            out += [f"{pa}{k}" for k in range(int(na), int(nb) + 1)]
        else:
            out += [a] if a == b else [a, b]
    return out


def _spec_reference_texts():
    """Files whose `kafka-protocol §x` (and bare `§x`) references point at docs/kafka-protocol.md."""
    paths = [os.path.join(ROOT, "spec", "README.md"), os.path.join(ROOT, "spec", "FINDINGS.md")]
    paths += sorted(_py_files(os.path.join("spec", "kafka")))
    for path in paths:
        yield os.path.relpath(path, ROOT), open(path, encoding="utf-8").read()


def test_kafka_protocol_refs_resolve():
    sections, labels = _protocol_doc_index()
    missing, cited = [], 0
    for rel, text in _spec_reference_texts():
        assert "KAFKA-PROTOCOL" not in text, f"{rel} cites KAFKA-PROTOCOL: write `kafka-protocol §x` (docs/kafka-protocol.md)"
        for m in _CITE.finditer(text):
            sec, items = m.group(1), m.group(2)
            cited += 1
            line = text.count("\n", 0, m.start()) + 1
            if sec not in sections:
                missing.append(f"{rel}:{line}: §{sec} is not a section of docs/kafka-protocol.md")
                continue
            for item in _cited_items(items) if items else ():
                if item.lower() not in labels.get(sec, set()):
                    missing.append(f"{rel}:{line}: §{sec} {item} is not a label of that section")
    assert cited > 100, f"only {cited} citations found: the citation pattern no longer matches the spec"
    assert not missing, "references that docs/kafka-protocol.md does not resolve:\n" + "\n".join(missing)


def test_kafka_protocol_ref_parser():
    assert _cited_items("I7-I9") == ["I7", "I8", "I9"]
    assert _cited_items("F4 / F5 / F8") == ["F4", "F5", "F8"]
    assert _cited_items("ATOM-1") == ["ATOM-1"]
    assert _cited_items("mechanics 1-2") == ["mechanics 1", "mechanics 2"]
    sections, labels = _protocol_doc_index()
    assert {"1.1", "2.1", "3.1", "3.12", "4", "5.2", "6"} <= sections
    assert {"i11", "i12"} <= labels["3.1"] and "i13" not in labels["3.1"]
    assert {"b1", "b15", "d5", "mechanics 3"} <= labels["6"] | labels["2.1"]
