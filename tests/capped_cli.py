"""The memory tests' harness (test_vector_memory.py, test_judging_memory.py): the command line in a subprocess
that caps its data segment with RLIMIT_DATA at its size once txncheck and numpy are imported (`VmData`) plus a
headroom, so that the cap reaches neither the interpreter nor the libraries. RLIMIT_DATA counts the heap and
private writable mappings (numpy arrays included), not the read-only maps of spill files."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import json, resource, sys
    from txncheck.cli.main import build_parser, main
    build_parser()  # every command's modules
    import numpy, txncheck.checker.run, txncheck.checker.vector.explore, txncheck.reports.writer

    def vm(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    headroom, setup = int(sys.argv[1]), sys.argv[2]
    exec(setup)  # the test's own imports and changes, before the cap is measured
    base = vm("VmData")
    cap = base + headroom
    if headroom:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    code = main(sys.argv[3:])
    print(json.dumps({"code": code, "data_base": base, "data_cap": cap if headroom else None,
                      "data_end": vm("VmData")}), file=sys.stderr)
    sys.exit(code)
""")


def run_capped(tmp_path, model: tuple, out: str, headroom: int, *args: str, setup: str = "", label: str = "",
               timeout: int = 600) -> tuple[dict, str, dict | None]:
    """`txncheck MODEL --json --out OUT ARGS` under `headroom` bytes above the imports (0: no cap), after running
    `setup` in the child: (the child's figures, its stderr, the result JSON it printed or None)."""
    p = subprocess.run([sys.executable, "-c", CHILD, str(headroom), setup, *model, "--json", "--out", out, *args],
                       capture_output=True, text=True, cwd=tmp_path, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    assert "OpenBLAS" not in p.stderr, p.stderr  # its threads are off (cli/__init__.py): it cannot fail to start one
    figures = json.loads(p.stderr.strip().splitlines()[-1])
    assert figures["code"] == p.returncode, p.stderr
    print(f"{label}, headroom {headroom >> 20} MiB: {json.dumps(figures)}")  # pytest -s
    return figures, p.stderr, json.loads(p.stdout) if p.stdout.strip() else None


def traces(folder) -> dict[str, bytes]:
    d = folder / "traces"
    return {f: (d / f).read_bytes() for f in sorted(os.listdir(d))} if d.exists() else {}
