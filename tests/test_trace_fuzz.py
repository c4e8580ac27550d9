"""Fuzzing `txncheck replay` with mutated real traces (issue 15: a verdict is never wrong by accident).

Real traces (TwoPhase and Kafka tiny: violations, witnesses, an unrecoverable state, a counterexample
to induction, a trace with config overrides; all `txncheck.trace/2`, and one in the `/1` format replay
still reads) are mutated: fields deleted or given wrong types, huge integers, inf and NaN, nested
junk, edited cell names and values, steps swapped, dropped or cut, `changed` (from which a /2 file's
states are rebuilt), `values`, actor, label and property kind altered, the file's bytes damaged. Each result is
replayed in-process (`txncheck.cli.main.main`), with and without `--show`:

- never exit 4 and never a traceback;
- a trace changed where a reader would see it is never confirmed: exit 2, with a message that names
  a field; a trace unchanged to a reader (key order, the engine that found it) replays as before.

`benchmarks/fuzz_traces.py` runs the same mutator a few thousand times and prints the counts.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from txncheck.cli.main import main

# what replay exits with when it confirms a trace of each kind
CONFIRMED = {"violation": 1, "deadlock": 1, "unrecoverable": 1, "witness": 0, "cti": 3}
# a top-level field a reader cannot be misled by (provenance: nothing replays it)
NEUTRAL = {"engine", "symmetry"}
# fields whose change may describe another model that the same steps are a true trace of
MAYBE = {"variant", "config"}
# an exit-2 message names the field, or the step, or says what is wrong with the file as a whole
NAMES_A_FIELD = re.compile(
    r"steps\[\d+\]|step \d+|\b(schema|spec|variant|config(\.\w+)*|engine|property(\.\w+)?|kind|steps|values|"
    r"explanation|symmetry)\b|is not valid JSON|is not UTF-8 text|nest more than")

# raw JSON that json.dumps cannot write, spliced into the text in place of these strings
RAW = {
    "@@HUGE@@": "9" * 5000,                     # beyond Python's int <-> str limit
    "@@NEGHUGE@@": "-" + "1" * 4400,
    "@@INF@@": "1e999",
    "@@NAN@@": "NaN",
    "@@NEGINF@@": "-Infinity",
    "@@FLOAT@@": "2.5",
    "@@INTFLOAT@@": "3.0",
    "@@DEEP@@": "[" * 5000 + "]" * 5000,        # deeper than the JSON reader's recursion
    "@@DEEPOBJ@@": '{"a":' * 40 + "1" + "}" * 40,
}
JUNK = [None, True, False, 0, -1, 1, 2, 10**30, "", "bogus", "x" * 5000, "\u2192\x1b[31m\x00", "\ud800",
        [], {}, [[[]]], {"a": {"b": {}}}, [1, "a", None], {"cell": "tmState"}, *RAW]


# ---- the base traces -------------------------------------------------------------------------
def _cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def make_base_traces(root: str) -> list[str]:
    """Trace files of every kind `replay` confirms, written by the command line as users get them."""
    runs = [
        ("tp", ["check", "twophase", "--variant", "commit-without-all-prepared"]),     # violation, witnesses
        ("tp2", ["check", "twophase", "--set", "rm=2", "--engine", "scalar"]),         # config overrides
        ("kv", ["check", "kafka", "--config", "tiny", "--set", "protocol=verify", "--set", "client=reference", "--continue",
                "--property", "ATOM-2", "--property", "Fence"]),
        ("k98", ["check", "kafka", "--config", "tiny", "--set", "protocol=kip98", "--continue",
                 "--property", "LIVE-1"]),                                              # unrecoverable
    ]
    paths = []
    for name, argv in runs:
        out = os.path.join(root, name)
        code, _, err = _cli(*argv, "--out", out)
        assert code in (0, 1), err
        tdir = os.path.join(out, "traces")
        paths += [os.path.join(tdir, f) for f in sorted(os.listdir(tdir)) if f.endswith(".json")]
    paths.append(_cti_trace(root))
    v1 = os.path.join(root, "v1", "TCConsistent.json")  # the format before /2, which replay still reads
    os.makedirs(os.path.dirname(v1))
    with open(v1, "w", encoding="utf-8") as f:
        json.dump(v1_document(os.path.join(root, "tp", "traces", "TCConsistent.json")), f, indent=1)
    paths.append(v1)
    return paths


def v1_document(path: str) -> dict:
    """The trace file at `path` as `txncheck.trace/1` wrote it: every step with its full state, and
    `values` every cell the property reads."""
    from txncheck.traces.build import read_values
    from txncheck.traces.replay import model_for
    from txncheck.traces.schema import load
    t = load(path)
    d = json.loads(json.dumps(t.to_json()))
    d["schema"] = "txncheck.trace/1"
    d["steps"] = [{**step, "state": s.state, "changed": step["changed"]} for step, s in zip(d["steps"], t.steps)]
    m = model_for(t)
    last = m.parse_state(t.steps[-1].state)
    d["values"] = read_values(m, t.property["name"], last) if t.kind != "deadlock" else {}
    return d


def _cti_trace(root: str) -> str:
    """A counterexample to 2-induction of TwoPhase without its strengthening invariant."""
    from dataclasses import replace

    from txncheck.checker.symbolic.induction import k_induction
    from txncheck.spec import catalog
    from txncheck.spec.ground import ground
    from txncheck.reports.atomic import write_atomic
    spec = replace(catalog.load("twophase"), invariants_for_induction=())
    (p,) = k_induction(ground(spec, spec.resolve_config("tiny")), 2).properties
    path = os.path.join(root, "cti", "traces", "TCConsistent.json")  # where bmc --out writes it
    write_atomic(path, json.dumps(p.trace.to_json(), indent=1) + "\n")
    return path


class Base:
    def __init__(self, path: str):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.doc = json.loads(self.text)
        self.code = CONFIRMED[self.doc["kind"]]
        self.norm = _norm(self.doc)[1]
        self.paths = list(_paths(self.doc, ()))
        leaves = (_get(self.doc, p) for p in self.paths)
        self.scalars = sorted({json.dumps(v) for v in leaves if not isinstance(v, (dict, list))})


def _paths(x, path):
    if path:
        yield path
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, path + (i,))


def _get(x, path):
    for p in path:
        x = x[p]
    return x


# ---- the mutator -----------------------------------------------------------------------------
def mutate(base: Base, rnd: random.Random) -> tuple[str, bytes]:
    """(what was done, the mutated file's bytes); rnd decides everything, so a seed replays it."""
    op = rnd.choice(OPS)
    doc = json.loads(base.text)
    got = op(base, doc, rnd)
    if isinstance(got, bytes):
        return op.__name__, got
    what, doc = got
    text = json.dumps(doc, indent=rnd.choice([None, 1]), ensure_ascii=rnd.random() < 0.5)
    for k, raw in RAW.items():
        text = text.replace(json.dumps(k), raw)
    return f"{op.__name__}: {what}", text.encode("utf-8", "surrogatepass")


def _pick(base, rnd, want=None):
    paths = base.paths if want is None else [p for p in base.paths if want(_get(base.doc, p), p)]
    return rnd.choice(paths) if paths else None


def op_delete(base, doc, rnd):
    p = _pick(base, rnd)
    parent = _get(doc, p[:-1])
    del parent[p[-1]]
    return f"delete {p}", doc


def op_junk(base, doc, rnd):
    p = _pick(base, rnd)
    _get(doc, p[:-1])[p[-1]] = v = rnd.choice(JUNK)
    return f"{p} = {v!r:.40}", doc


def op_scalar(base, doc, rnd):
    """A leaf becomes another value the trace uses elsewhere (a plausible lie, right type)."""
    p = _pick(base, rnd, lambda v, _: not isinstance(v, (dict, list)))
    _get(doc, p[:-1])[p[-1]] = v = json.loads(rnd.choice(base.scalars))
    return f"{p} = {v!r:.40}", doc


def op_string(base, doc, rnd):
    p = _pick(base, rnd, lambda v, _: isinstance(v, str))
    s = _get(doc, p)
    edits = [s + "x", s[:-1], s.upper(), s.replace("1", "2"), s.replace("r", "R"), " " + s, s + "\n",
             s + "\u2192", "bogus", s[::-1]]
    _get(doc, p[:-1])[p[-1]] = v = rnd.choice(edits)
    return f"{p} = {v!r:.40}", doc


def op_key(base, doc, rnd):
    """A key of an object is renamed (a cell, var, parameter or field name)."""
    p = _pick(base, rnd)
    parent = _get(doc, p[:-1])
    if not isinstance(parent, dict):
        return op_delete(base, doc, rnd)
    k = p[-1]
    new = rnd.choice([k + "x", k.upper(), k.replace("1", "2"), "bogus", ""])
    items = [(new if kk == k else kk, vv) for kk, vv in parent.items()]
    parent.clear()
    parent.update(items)
    return f"rename {p} to {new!r}", doc


def op_steps(base, doc, rnd):
    steps = doc["steps"]
    n = len(steps)
    how = rnd.choice(["swap", "drop", "dup", "cut", "reverse"])
    if how == "swap" and n > 2:
        i, j = rnd.sample(range(1, n), 2)
        steps[i], steps[j] = steps[j], steps[i]
    elif how == "drop" and n > 1:
        del steps[rnd.randrange(n)]
    elif how == "dup":
        i = rnd.randrange(n)
        steps.insert(i, json.loads(json.dumps(steps[i])))
    elif how == "cut":
        del steps[rnd.randrange(n):]
    else:
        steps.reverse()
    if rnd.random() < 0.7:  # renumber, so that only the order is wrong
        for i, s in enumerate(steps):
            if isinstance(s, dict):
                s["index"] = i
    return f"steps {how}", doc


def op_changed(base, doc, rnd):
    steps = [s for s in doc["steps"][1:] if s["changed"]]
    if not steps:
        return op_scalar(base, doc, rnd)
    s = rnd.choice(steps)
    ch = s["changed"]
    how = rnd.choice(["reverse", "drop", "dup", "before", "after", "cell", "add"])
    if how == "reverse":
        ch.reverse()
    elif how == "drop":
        del ch[rnd.randrange(len(ch))]
    elif how == "dup":
        ch.append(dict(rnd.choice(ch)))
    elif how == "add":
        ch.append({"cell": rnd.choice(list(doc["values"]) or ["x"]), "before": 0, "after": 1})
    else:
        c = rnd.choice(ch)
        c[how] = json.loads(rnd.choice(base.scalars))
    return f"step {s['index']} changed {how}", doc


def op_values(base, doc, rnd):
    vals = doc["values"]
    how = rnd.choice(["change", "drop", "add"]) if vals else "add"
    if how == "change":
        k = rnd.choice(list(vals))
        vals[k] = json.loads(rnd.choice(base.scalars))
    elif how == "drop":
        del vals[rnd.choice(list(vals))]
    else:
        vals[rnd.choice(["rmState[r9]", "tmState", "bogus"])] = "working"
    return f"values {how}", doc


def op_describe(base, doc, rnd):
    """A step's actor, trigger, label or tags said differently."""
    steps = doc["steps"]
    if len(steps) < 2:
        return op_scalar(base, doc, rnd)
    s, other = rnd.choice(steps[1:]), rnd.choice(steps)
    f = rnd.choice(["actor", "trigger", "label", "tags", "row", "params"])
    s[f] = other[f] if other is not s and rnd.random() < 0.5 else \
        {"actor": "TM", "trigger": "", "label": "Init", "tags": ["fault"], "row": "TM-01", "params": {"x": 1}}[f]
    return f"step {s['index']} {f} = {s[f]!r:.40}", doc


def op_kind(base, doc, rnd):
    if rnd.random() < 0.5:
        doc["kind"] = rnd.choice(["violation", "witness", "deadlock", "unrecoverable", "cti", "bogus"])
        return f"kind = {doc['kind']}", doc
    f = rnd.choice(["kind", "name", "doc"])
    doc["property"][f] = rnd.choice({"kind": ["always", "sometimes", "recoverable", "deadlock", "eventually"],
                                     "name": ["TCConsistent", "SomeAbort", "ATOM-2", "LIVE-1", "deadlock", "Nope"],
                                     "doc": ["", "All good.", doc["property"]["doc"] + "!"]}[f])
    return f"property.{f} = {doc['property'][f]!r:.40}", doc


def op_config(base, doc, rnd):
    cfg = doc["config"]
    how = rnd.choice(["name", "value", "string", "drop", "add", "overrides", "bound", "variant"])
    if how == "name":
        cfg["name"] = rnd.choice(["tiny", "ci", "nightly", "eos", "huge"])
    elif how in ("value", "string", "drop") and cfg["values"]:
        k = rnd.choice(list(cfg["values"]))
        v = cfg["values"][k]
        if how == "drop":
            del cfg["values"][k]
        else:
            cfg["values"][k] = str(v) if how == "string" else (v + rnd.choice([-1, 1]) if isinstance(v, int) else "tv2")
    elif how == "add":
        cfg["values"][rnd.choice(["colour", "rm", "zombies"])] = 1
    elif how == "overrides":
        if "overrides" in cfg and rnd.random() < 0.5:
            del cfg["overrides"]
        else:
            cfg["overrides"] = {rnd.choice(["rm", "protocol", "max_states"]): rnd.choice([1, 3, "tv2", None])}
    elif how == "bound":
        cfg[rnd.choice(["max_states", "max_depth"])] = rnd.choice([None, 0, 5, 10**6])
    else:
        doc["variant"] = rnd.choice([None, "commit-without-all-prepared", "B7-tid-per-worker", "nope"])
    return f"config {how}", doc


def op_provenance(base, doc, rnd):
    """Neutral: a reader learns nothing false from these (nothing replays them)."""
    if rnd.random() < 0.5:
        doc["engine"] = rnd.choice(["vector", "scalar", "spark", "bmc", "k-induction", "warp"])
    else:
        doc["symmetry"] = not doc["symmetry"]
    return "provenance", doc


def op_reorder(base, doc, rnd):
    """Neutral: the same object with its keys in another order."""
    p = _pick(base, rnd, lambda v, _: isinstance(v, dict)) or ()
    obj = _get(doc, p) if p else doc
    items = list(obj.items())
    rnd.shuffle(items)
    obj.clear()
    obj.update(items)
    return f"reorder {p}", doc


def op_bytes(base, doc, rnd) -> bytes:
    data = base.text.encode("utf-8")
    how = rnd.choice(["cut", "flip", "insert", "bom", "invalid", "dupkey", "empty", "nul"])
    i = rnd.randrange(len(data))
    if how == "cut":
        return data[:i]
    if how == "flip":
        return data[:i] + bytes([rnd.randrange(32, 127)]) + data[i + 1:]
    if how == "insert":
        return data[:i] + rnd.choice([b",", b"]", b"{", b'"', b"\\", b"0", b"-"]) + data[i:]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "invalid":
        return data[:i] + b"\xff\xfe" + data[i:]
    if how == "dupkey":  # the first key of the first state said twice, the first time falsely
        return data.replace(b'"state": {', b'"state": {"' + next(iter(base.doc["steps"][0]["state"])).encode()
                            + b'": "bogus", ', 1)
    if how == "nul":
        return data[:i] + b"\x00" + data[i:]
    return b""


OPS = [op_delete, op_junk, op_junk, op_scalar, op_scalar, op_string, op_key, op_steps, op_changed, op_changed,
       op_values, op_describe, op_describe, op_kind, op_config, op_provenance, op_reorder, op_bytes, op_bytes]


# ---- the oracle ------------------------------------------------------------------------------
class _Dup:
    pass


def _oracle_load(data: bytes):
    """The document as JSON means it, or None if it is not JSON; numbers are kept apart by type."""
    def pairs(ps):
        d = dict(ps)
        return d if len(d) == len(ps) else _Dup()
    try:
        return json.loads(data.decode("utf-8"), parse_int=lambda s: int(s) if len(s) < 100 else ("huge", s),
                          parse_float=lambda s: ("float", s), parse_constant=lambda s: ("const", s),
                          object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None


def _norm(x):
    if isinstance(x, bool):
        return ("bool", x)
    if isinstance(x, dict):
        return ("object", {k: _norm(v) for k, v in x.items()})
    if isinstance(x, list):
        return ("array", [_norm(v) for v in x])
    if isinstance(x, _Dup):
        return ("dup", id(x))
    return (type(x).__name__, x)


def classify(base: Base, data: bytes) -> str:
    """same | neutral | maybe | reordered | changed: what a reader of the mutated file would see
    differently. `reordered`: the same steps in another order, numbered 0, 1, 2, ...: with states
    rebuilt from the changed cells, steps that commute make another true trace (the oracle checks it)."""
    doc = _oracle_load(data)
    if not isinstance(doc, dict):
        return "changed"
    a, b = base.norm, _norm(doc)[1]
    if a == b:
        return "same"
    differ = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    if differ == {"steps"} and _reordered(base.doc["steps"], doc.get("steps")):
        return "reordered"
    if differ <= NEUTRAL:  # neutral only while still of the right type
        ok = isinstance(doc.get("engine"), str) and isinstance(doc.get("symmetry"), bool)
        return "neutral" if ok else "changed"
    return "maybe" if differ <= NEUTRAL | MAYBE else "changed"


def _reordered(ours, theirs) -> bool:
    if not isinstance(theirs, list) or len(theirs) != len(ours) or ours == theirs:
        return False
    if any(not isinstance(s, dict) or s.get("index") != i for i, s in enumerate(theirs)):
        return False

    def canon(x):  # a normalized value with its objects' keys in order
        if isinstance(x, tuple) and x and x[0] == "object":
            return ("object", tuple(sorted((k, canon(v)) for k, v in x[1].items())))
        if isinstance(x, tuple) and x and x[0] == "array":
            return ("array", tuple(canon(v) for v in x[1]))
        return x

    def key(s):
        return repr(canon(_norm({k: v for k, v in s.items() if k != "index"})))
    return sorted(map(key, ours)) == sorted(map(key, theirs))


def true_trace(doc: dict, base_doc: dict) -> bool:
    """The oracle's own replay (the reference interpreter, not traces/replay.py): from the initial
    state (a cti: step 0's), each step's action is enabled and changes exactly its `changed` cells to
    their `after` values, and the last state shows what `kind` says (an unrecoverable one: it is the
    base trace's last state, from which the base's confirmed replay found no goal)."""
    from txncheck.spec.evaluate import evaluate
    from txncheck.traces.replay import model_for
    from txncheck.traces.schema import Trace
    m = model_for(Trace.from_json(doc))
    s = _walk(m, doc)
    if s is None:
        return False
    if doc["kind"] == "unrecoverable":
        return s == _walk(m, base_doc)
    p = next((p for p in m.properties if p.name == doc["property"]["name"]), None)
    if p is None or doc["kind"] not in ("violation", "witness", "cti"):
        return False
    holds = (p.when is not None and not evaluate(p.when, s)) or bool(evaluate(p.expr, s))
    return holds == (doc["kind"] == "witness")


def _walk(m, doc: dict):
    from txncheck.spec.evaluate import evaluate, successor
    from txncheck.spec.state_text import value_label
    lay = m.layout
    s = m.parse_state(doc["steps"][0]["state"]) if doc["kind"] == "cti" else tuple(m.init)
    for step in doc["steps"][1:]:
        a = next((a for a in m.actions if a.label == step["label"]), None)
        if a is None or not evaluate(a.guard, s):
            return None
        t = successor(m, a, s)
        got = [[lay.cell_names[p], value_label(lay.vars[lay.cell_var[p]].var.domain, t[p], m.env)]
               for p in range(lay.width) if s[p] != t[p]]
        if json.dumps(got) != json.dumps([[c["cell"], c["after"]] for c in step["changed"]]):
            return None
        s = t
    return s


def replay_file(path: str, show: bool) -> tuple[int, str, str]:
    return _cli("replay", *(["--show"] if show else []), path)


def check_one(base: Base, data: bytes, path: str, show: bool, what: str) -> tuple[int, str]:
    """Replay the mutated file and assert the bar; returns (exit code, its class)."""
    with open(path, "wb") as f:
        f.write(data)
    code, out, err = replay_file(path, show)
    cls = classify(base, data)
    ctx = f"{what} ({cls}) on {os.path.basename(base.path)}: exit {code}\n{out[-2000:]}\n{err[-2000:]}"
    assert code != 4 and "Traceback" not in err + out and "internal error" not in err, ctx
    if cls in ("same", "neutral"):
        assert code == base.code, ctx
    elif cls == "changed":
        assert code == 2, ctx
    elif cls == "reordered":
        assert code == 2 or (code == base.code and true_trace(json.loads(data), base.doc)), ctx
    else:
        assert code in (base.code, 2), ctx
    if code == 2:
        msg = err if "error:" in err else out
        assert NAMES_A_FIELD.search(msg), ctx
    return code, cls


# ---- the tests -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz-bases")
    return [Base(p) for p in make_base_traces(str(root))]


def test_the_base_traces_replay_as_confirmed(bases):
    kinds = {b.doc["kind"] for b in bases}
    assert kinds == {"violation", "witness", "unrecoverable", "cti"}, kinds
    for b in bases:
        code, out, err = replay_file(b.path, show=True)
        assert code == b.code and "confirmed" in out, out + err


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_replay_of_a_mutated_trace_is_exit_2_naming_a_field_or_unchanged(bases, tmp_path_factory, data):
    rnd = data.draw(st.randoms(use_true_random=False))
    base = rnd.choice(bases)
    what, blob = mutate(base, rnd)
    path = str(tmp_path_factory.getbasetemp() / "fuzz-mutated.json")
    check_one(base, blob, path, show=rnd.random() < 0.5, what=what)


@pytest.mark.heavy
def test_thousands_of_mutations(bases, tmp_path_factory):
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
    from fuzz_traces import fuzz
    counts = fuzz(bases, 3000, seed=15, workdir=str(tmp_path_factory.mktemp("fuzz-heavy")))
    assert counts["exit 4"] == 0 and counts["tracebacks"] == 0 and counts["failures"] == 0, counts
