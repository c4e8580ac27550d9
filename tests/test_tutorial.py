"""docs/tutorial.md runs as written: its `python FILE` blocks are written to a fresh folder outside
the repository, and its `$ txncheck ...` lines run there in order, with the exit codes they state.

`steps` and `run_doc` are the runner every tested doc uses (docs/user-specs.md, docs/examples.md): a
```python FILE block is written to FILE, and in a ```console block each `$ txncheck ...` or `$ python
FILE ...` line is run, with the exit code its `# exit N` comment gives (0 when none)."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(ROOT, "docs", "tutorial.md")
EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
BLOCK = re.compile(r"```(python [^\n]+|console)\n(.*?)```", re.S)


def steps(doc=None):
    """("file", NAME, TEXT) and ("run", COMMAND, EXIT) in the order of `doc` (default: the tutorial)."""
    out = []
    for m in BLOCK.finditer(open(doc or TUTORIAL, encoding="utf-8").read()):
        head, body = m.group(1), m.group(2)
        if head.startswith("python "):
            out.append(("file", head.split()[1], body))
        for line in body.splitlines() if head == "console" else ():
            c = re.match(r"\$ ((?:txncheck|python) .*?)(?:\s+# exit (\d))?$", line)
            if c:
                out.append(("run", c.group(1), int(c.group(2) or 0)))
    return out


def run_doc(doc, folder) -> dict:
    """Write `doc`'s files into `folder` and run its commands there, in order, as a user would (nothing of
    ours on PYTHONPATH); each must exit as the doc says, without a traceback. The completed processes by
    command line."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = {}
    for kind, what, arg in steps(doc):
        if kind == "file":
            os.makedirs(os.path.dirname(os.path.join(folder, what)) or folder, exist_ok=True)
            with open(os.path.join(folder, what), "w", encoding="utf-8") as f:
                f.write(arg)
            continue
        words = shlex.split(what)
        argv = [EXE, *words[1:]] if words[0] == "txncheck" else [sys.executable, *words[1:]]
        p = subprocess.run(argv, capture_output=True, text=True, cwd=folder, env=env, timeout=600)
        assert "Traceback" not in p.stderr, f"{what}\n{p.stderr}"
        assert p.returncode == arg, f"{what}: exit {p.returncode}, expected {arg}\n{p.stdout}\n{p.stderr}"
        done[what] = p
    return done


def test_the_tutorial_has_files_and_commands():
    kinds = [s[0] for s in steps()]
    assert kinds.count("file") >= 3 and kinds.count("run") >= 6


def test_the_tutorial_runs(tmp_path):
    outputs = {what: p.stdout for what, p in run_doc(TUTORIAL, tmp_path).items()}
    # what the text says of the results
    assert "34 distinct states" in outputs["txncheck check ./tcommit.py"]  # TLC's count for three RMs
    assert re.search(r"SomeCommit\s+sometimes\s+witnessed\s+after 4 steps", outputs["txncheck check ./tcommit_witness.py"])
    assert "576 distinct states" in outputs["txncheck check ./twophase_crash.py --html"]
    assert "160 distinct states" in outputs["txncheck check ./twophase_crash.py --symmetry --out out/twophase_crash-symmetry"]
    assert (tmp_path / "out" / "twophase_crash-tiny" / "traces" / "CommitAfterCrash.html").is_file()
    assert (tmp_path / "out" / "tcommit-tiny-commit-while-working" / "traces" / "TCConsistent.html").is_file()
