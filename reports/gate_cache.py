"""The gate's cache: an entry that nothing it depends on has changed since its last green run is not searched.

An entry's key is a sha256 over what decides its result: the source of its spec (every .py of the spec's
package folder, e.g. spec/kafka/, or its single module file), the entry's settings (everything but its
name, line and note), the txncheck version, and a digest of txncheck's own code apart from the shipped specs
(the checker, the grounding, the judging). The last is there because an editable install keeps one version
number while its code changes, and a cache that survives a checker change would let the gate pass on a
result the current code never produced. Paths inside the digests are relative, so a checkout in another
directory (another CI runner) hits the same cache.

One record per entry, `CACHE/NAME.json`, written atomically after a green run: the key, the judged outcome
(verdicts, counts and the baseline's facts, so drift is still checked on a hit) and the files of the
entry's output folder (result.json, traces), which a hit restores under `--out` if they are not there.
A record that cannot be read is a miss, never an error: the cache is disposable.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys

from txncheck.spec import catalog

from .atomic import ReportPathError, write_atomic
from .gate import EntryOutcome, Expectation, PropertyReport
from .gatefile import GateEntry
from .run_output import RunOutput
from .source_location import spec_files

SCHEMA = "txncheck.gate-cache/1"


def default_dir(out: str) -> str:
    return os.path.join(out, ".cache")  # hidden: an entry's name starts with a letter or digit, never '.'


def _digest(root: str, files: list[str]) -> str:
    h = hashlib.sha256()
    for path in sorted(files, key=lambda p: os.path.relpath(p, root).replace(os.sep, "/")):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, "rb") as f:
            data = f.read()
        h.update(f"{rel}\0{len(data)}\0".encode())  # lengths keep (a, bc) and (ab, c) apart
        h.update(data)
    return h.hexdigest()


def _py_files(folder: str) -> list[str]:
    return [os.path.join(d, f) for d, dirs, files in os.walk(folder) for f in files
            if f.endswith(".py") and "__pycache__" not in d]


@functools.lru_cache(maxsize=None)
def spec_digest(spec: str) -> str:
    files = spec_files(spec)
    if not files:  # a validated entry's spec was imported, so its source is there to find
        raise FileNotFoundError(f"the source of spec {spec} cannot be found")
    return _digest(os.path.dirname(files[0]), list(files))  # the package's folder, or the module's


@functools.lru_cache(maxsize=None)
def code_digest() -> str:
    """txncheck's own code minus the shipped specs (those are each entry's spec digest)."""
    import txncheck.checker
    import txncheck.reports
    import txncheck.spec
    import txncheck.traces
    shipped = {os.path.abspath(f) for name in catalog.names() for f in spec_files(name)}
    files = []
    for pkg in (txncheck.checker, txncheck.traces, txncheck.reports, txncheck.spec):
        root = os.path.dirname(os.path.abspath(pkg.__file__))
        files += [(pkg.__name__, root, f) for f in _py_files(root) if os.path.abspath(f) not in shipped]
    h = hashlib.sha256()
    for name, root, f in sorted(files, key=lambda t: (t[0], os.path.relpath(t[2], t[1]))):
        h.update(f"{name}/{os.path.relpath(f, root).replace(os.sep, '/')}\0".encode())
        with open(f, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def version() -> str:
    try:
        from importlib.metadata import version as dist_version
        return dist_version("txncheck")
    except Exception:  # noqa: BLE001 - an uninstalled tree: the code digest still tells versions apart
        return ""


def key_parts(entry: GateEntry) -> dict:
    # a note is what the reports say of the entry, not what it checks: editing it keeps the key
    settings = {k: v for k, v in entry.__dict__.items() if k not in ("name", "line", "breaks", "note")}
    return {"schema": SCHEMA, "txncheck": version(), "code": code_digest(), "spec_source": spec_digest(entry.spec),
            "entry": json.loads(json.dumps(settings)),  # tuples as lists: the same form the record stores
            "python": f"{sys.version_info[0]}.{sys.version_info[1]}"}


def entry_key(entry: GateEntry) -> str:
    return hashlib.sha256(json.dumps(key_parts(entry), sort_keys=True).encode()).hexdigest()


def _record_path(cache: str, name: str) -> str:
    return os.path.join(cache, f"{name}.json")


def _read_files(folder: str) -> dict[str, str]:
    files = {}
    for d, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(d, n)
            with open(p, encoding="utf-8") as f:
                files[os.path.relpath(p, folder).replace(os.sep, "/")] = f.read()
    return dict(sorted(files.items()))


def store(cache: str, o: EntryOutcome, key: str) -> None:
    """Record a green outcome (the caller checks it is green; a failure is never cached)."""
    try:
        files = _read_files(o.out)
    except (OSError, UnicodeDecodeError):
        return  # an output folder we cannot read back is simply not cached
    d = o.to_json()
    for k in ("name", "ok", "cached", "notes", "error", "kind", "note"):
        d.pop(k, None)
    d["unfired_rows"] = list(o.unfired_rows)
    d["inapplicable_rows"] = list(o.inapplicable_rows)
    record = {"schema": SCHEMA, "key": key, "outcome": d, "files": files}
    try:
        write_atomic(_record_path(cache, o.name), json.dumps(record, indent=1, sort_keys=True) + "\n")
    except ReportPathError as err:
        # the verdict stands without a cache: an unwritable cache only makes the next run slower
        print(f"txncheck gate: not cached: {err}", file=sys.stderr)


def lookup(cache: str, entry: GateEntry, key: str, out: str) -> EntryOutcome | None:
    """The cached outcome of `entry` with its output restored under `out`, or None (a miss)."""
    try:
        with open(_record_path(cache, entry.name), encoding="utf-8") as f:
            record = json.load(f)
        if record.get("schema") != SCHEMA or record.get("key") != key:
            return None
        d, files = record["outcome"], record["files"]
        old_out = d["out"]

        def moved(text):  # the record names paths under the out of its run; this run's may differ
            return text.replace(old_out + os.sep, out + os.sep) if isinstance(text, str) else text
        props = tuple(PropertyReport(**{**p, "trace": moved(p["trace"]), "story": moved(p["story"]),
                                        "steps": tuple(tuple(x) for x in p.get("steps", ()))})
                      for p in d["properties"])
        o = EntryOutcome(entry, out, d["verdict"], d["distinct"], d["depth"], d["seconds"], props,
                         tuple(Expectation(**e) for e in d["expectations"]), tuple(d["unfired_rows"]),
                         witnessed=tuple(d["witnessed"]), fired_rows=tuple(d["fired_rows"]),
                         inapplicable_rows=tuple(d["inapplicable_rows"]),
                         violated=tuple(d["violated"]), proved=tuple(d["proved"]),
                         obligations=tuple(sorted(d["obligations"].items())), cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable or from another txncheck: search the entry again
    _restore(out, files)
    return o


def _restore(out: str, files: dict[str, str]) -> None:
    """Put the cached run's files under `out` unless they are already there (the usual case)."""
    try:
        if _read_files(out) == files:
            return
    except (OSError, UnicodeDecodeError):
        pass
    staged = RunOutput.prepare(out, option="--out")
    with staged:  # as one unit, like a run: a reader never sees half a restored folder
        for rel, text in files.items():
            staged.write_text(rel, text)
        staged.commit()
