"""docs/tutorial.md runs as written: its `python FILE` blocks are written to a fresh folder outside
the repository, and its `$ txncheck ...` lines run there in order, with the exit codes they state."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(ROOT, "docs", "tutorial.md")
EXE = os.path.join(os.path.dirname(sys.executable), "txncheck")
BLOCK = re.compile(r"```(python [^\n]+|console)\n(.*?)```", re.S)


def steps():
    out = []
    for m in BLOCK.finditer(open(TUTORIAL, encoding="utf-8").read()):
        head, body = m.group(1), m.group(2)
        if head.startswith("python "):
            out.append(("file", head.split()[1], body))
        for line in body.splitlines() if head == "console" else ():
            c = re.match(r"\$ (txncheck .*?)(?:\s+# exit (\d))?$", line)
            if c:
                out.append(("run", c.group(1), int(c.group(2) or 0)))
    return out


def test_the_tutorial_has_files_and_commands():
    kinds = [s[0] for s in steps()]
    assert kinds.count("file") >= 3 and kinds.count("run") >= 6


def test_the_tutorial_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outputs = {}
    for kind, what, arg in steps():
        if kind == "file":
            (tmp_path / what).write_text(arg, encoding="utf-8")
            continue
        p = subprocess.run([EXE, *shlex.split(what)[1:]], capture_output=True, text=True, cwd=tmp_path, env=env,
                           timeout=600)
        assert "Traceback" not in p.stderr, f"{what}\n{p.stderr}"
        assert p.returncode == arg, f"{what}: exit {p.returncode}, expected {arg}\n{p.stdout}\n{p.stderr}"
        outputs[what] = p.stdout
    # what the text says of the results
    assert "34 distinct states" in outputs["txncheck check ./tcommit.py"]  # TLC's count for three RMs
    assert re.search(r"SomeCommit\s+sometimes\s+witnessed\s+after 4 steps", outputs["txncheck check ./tcommit_witness.py"])
    assert "576 distinct states" in outputs["txncheck check ./twophase_crash.py --html"]
    assert "160 distinct states" in outputs["txncheck check ./twophase_crash.py --symmetry --out out/twophase_crash-symmetry"]
    assert (tmp_path / "out" / "twophase_crash-tiny" / "traces" / "CommitAfterCrash.html").is_file()
    assert (tmp_path / "out" / "tcommit-tiny-commit-while-working" / "traces" / "TCConsistent.html").is_file()
