"""Where a SPEC argument leads: the one loader every command, request, replay and Spark executor uses.

A SPEC is one of (tried in this order):

- a **spec file**: a path that ends in `.py` or contains a `/` (`./fencing.py`, `protocols/fencing.py`,
  `/abs/fencing.py`). The file is executed as a module under a stable name of its own
  (`_txncheck_spec_<stem>_<hash of its absolute path>`), from the bytes that are hashed, without
  being on sys.path; while it runs its folder is first on sys.path, so it may import a module beside
  it (`from tcommit import *`), as a script would. It must assign its `Spec` to `SPEC`.
- **MODULE:ATTRIBUTE** of a module on the Python path (`mypkg.specs:FENCING`).
- a **shipped** name (`spec/catalog.py`: twophase, paxoscommit, kafka).
- a name an installed package publishes in the entry-point group `txncheck.specs`
  (`fencing = "mypkg.specs:FENCING"`); a shipped name wins over a published one.

Every mistake in a user's spec is one message and exit 2, never a traceback: an exception raised
while its module runs is a `ConfigError` naming the file, the line in the user's code and the message;
a mistake found later (grounding, a variant, a config) is a `SpecError` or `ConfigError` about a part
of the spec, which `locate_error` locates at that part's definition (`fencing.py:41: row F-03: ...`).

Provenance (`SpecSource`): how a spec was loaded, as traces record it (`spec_source`) with a content
hash (`spec_sha256`). A file spec's hash is the sha256 of its file when it imports nothing beside it
(`sha256sum fencing.py` gives the same), else a sha256 over it and the modules beside it that it
imports (found by reading its import statements, recursively; never by running it). A module's hash
covers its file (a package's: every .py file of the package). Shipped specs carry no hash: they are
part of txncheck, and replay checks every field of a trace against the installed spec anyway.
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import os
import re
import sys
import tempfile
from dataclasses import dataclass

from . import catalog, source_location
from .errors import ConfigError, TxncheckError
from .model import Spec

ENTRY_POINT_GROUP = "txncheck.specs"
FILE, MODULE, SHIPPED, ENTRY_POINT = "file", "module", "shipped", "entry-point"


@dataclass(frozen=True)
class SpecSource:
    """How a spec was loaded. `ref` is what a trace records as `spec_source`: the catalogue name, the
    absolute path of a spec file, or MODULE:ATTRIBUTE (also for a spec published as an entry point)."""

    kind: str                      # file, module, shipped or entry-point
    ref: str
    sha256: str | None = None      # None for a shipped spec
    files: tuple[str, ...] = ()    # the files hashed, the defining one first


@dataclass(frozen=True)
class Loaded:
    spec: Spec
    source: SpecSource
    texts: tuple[tuple[str, bytes], ...] = ()  # a file spec's files (path relative to its folder, bytes): Spark ships them


# ---- what a SPEC argument is ---------------------------------------------------------------------
def is_file_ref(ref: str) -> bool:
    return ref.endswith(".py") or "/" in ref or (os.sep in ref) or bool(os.altsep and os.altsep in ref)


def kind_of(ref: str) -> str:
    if is_file_ref(ref):
        return FILE
    if ":" in ref:
        return MODULE
    if ref in catalog.names():
        return SHIPPED
    if ref in entry_points():
        return ENTRY_POINT
    return "unknown"


def canonical(ref: str) -> str:
    """The reference as a request holds it: a spec file's absolute path (the same from any working
    directory, and on a Spark executor); any other reference as given."""
    return os.path.abspath(os.path.expanduser(ref)) if is_file_ref(ref) else ref


def display_path(path: str) -> str:
    """A path relative to the working directory when it is under it (as the user typed it), else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return path
    return path if rel.startswith("..") else rel


# ---- loading -------------------------------------------------------------------------------------
def load(ref: str) -> Spec:
    return resolve(ref).spec


def resolve(ref: str) -> Loaded:
    kind = kind_of(ref)
    if kind == FILE:
        return _load_file(canonical(ref), ref)
    if kind == MODULE:
        return _load_module(ref)
    if kind == SHIPPED:
        return Loaded(catalog.load(ref), SpecSource(SHIPPED, ref))  # (catalog.load: tests may swap it)
    if kind == ENTRY_POINT:
        value, dist = entry_points()[ref]
        loaded = _load_module(value, f"entry point {ref} ({value}{f', from {dist}' if dist else ''})")
        return Loaded(loaded.spec, SpecSource(ENTRY_POINT, value, loaded.source.sha256, loaded.source.files))
    published = sorted(entry_points())
    raise ConfigError(f"unknown spec '{ref}'; shipped specs are: {', '.join(catalog.names())}"
                      + (f"; installed packages publish: {', '.join(published)}" if published else "")
                      + " (run `txncheck specs` to list them; a spec file is named by its path, e.g. "
                      f"./{ref}.py, a module's spec as MODULE:ATTRIBUTE)")


def current_sha256(ref: str) -> str | None:
    """The hash `resolve(ref)` would record, computed from the files without running them (replay
    refuses a trace whose spec changed before executing the changed code); None if unknown."""
    kind = kind_of(ref)
    if kind == FILE:
        path = canonical(ref)
        provided = _PROVIDED.get(path)
        if provided is not None:
            return _digest_texts(provided)
        try:
            return _digest(path, _file_closure(path))
        except OSError:
            return None
    if kind in (MODULE, ENTRY_POINT):
        files = list(source_files(ref))
        try:
            return _digest(files[0], files) if files else None
        except OSError:
            return None
    return None


def source_files(ref: str) -> tuple[str, ...]:
    """The source files of the spec `ref` names, the defining one first, found without running anything
    (for links to a row's line, and the gate's cache key): a spec file and the modules beside it that it
    imports; a module's file (a package's every .py file); a shipped spec's module or package. () if
    they cannot be found."""
    kind = kind_of(ref)
    if kind == FILE:
        path = canonical(ref)
        try:
            return tuple(_file_closure(path))
        except OSError:
            return ()
    if kind == SHIPPED:
        module = dict(catalog.SPECS)[ref]
    elif kind == ENTRY_POINT:
        module = entry_points()[ref][0].partition(":")[0]
    elif kind == MODULE:
        module = ref.partition(":")[0]
    else:
        return ()
    try:
        return tuple(_module_files_of(importlib.util.find_spec(module)))
    except (ImportError, ValueError):
        return ()


def locate_error(err: TxncheckError, ref: str) -> TxncheckError:
    """`err` located at its subject's definition in the source of the spec `ref` names (a copy: its
    message then begins `path:line: `), found by reading the source text (spec/source_location.py);
    `err` itself when it has no subject, is located already, or the definition cannot be found."""
    subject = getattr(err, "subject", None)
    if subject is None or err.location is not None:
        return err
    found = source_location.find(source_files(ref), subject.kind, subject.name, subject.nth)
    return err.located(display_path(found[0]), found[1]) if found else err


# ---- spec files ----------------------------------------------------------------------------------
_FILES: dict[str, tuple[str, Loaded]] = {}                     # path -> (hash, what it loaded)
_PROVIDED: dict[str, tuple[tuple[str, bytes], ...]] = {}       # path -> its files, as shipped to an executor


def provide(path: str, texts: tuple[tuple[str, bytes], ...]) -> None:
    """Load the spec file `path` from these files (relative path, bytes) rather than from disk: a Spark
    executor grounds exactly what the driver loaded, on a machine that need not have the file."""
    _PROVIDED[path] = tuple(texts)


def _module_name(path: str) -> str:
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]) or "spec"
    return f"_txncheck_spec_{stem}_{hashlib.sha256(path.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def _read(path: str, shown: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise ConfigError(f"spec file {shown} does not exist (looked for {path}); give the path of a Python file "
                          "that defines SPEC, a shipped spec (`txncheck specs`) or MODULE:ATTRIBUTE") from None
    except IsADirectoryError:
        raise ConfigError(f"spec file {shown} is a directory; give the path of the .py file that defines SPEC") from None
    except OSError as err:
        raise ConfigError(f"cannot read spec file {shown}: {err.strerror}") from None


def _sibling_imports(path: str, data: bytes) -> list[str]:
    """The modules beside `path` that its import statements name (absolute imports only), as files."""
    try:
        tree = ast.parse(data, path)
    except (SyntaxError, ValueError):
        return []  # reported when the file is run
    folder = os.path.dirname(path)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    out = []
    for name in dict.fromkeys(names):
        module = os.path.join(folder, name + ".py")
        package = os.path.join(folder, name, "__init__.py")
        if os.path.isfile(module):
            out.append(module)
        elif os.path.isfile(package):
            out += _package_files(os.path.dirname(package))
    return out


def _package_files(folder: str) -> list[str]:
    init = os.path.join(folder, "__init__.py")
    files = sorted(os.path.join(d, f) for d, dirs, fs in os.walk(folder) for f in fs
                   if f.endswith(".py") and "__pycache__" not in d)
    return sorted(files, key=lambda p: (p != init, p))


def _file_closure(path: str, data: bytes | None = None) -> list[str]:
    """`path`, then every module beside it that it imports, recursively."""
    seen = [path]
    todo = [(path, data)]
    while todo:
        p, d = todo.pop(0)
        for q in _sibling_imports(p, _bytes(p) if d is None else d):
            if q not in seen:
                seen.append(q)
                todo.append((q, None))
    return seen


def _bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _digest(main: str, files: list[str]) -> str:
    return _digest_texts(tuple((os.path.relpath(p, os.path.dirname(main)).replace(os.sep, "/"), _bytes(p))
                               for p in files))


def _digest_texts(texts: tuple[tuple[str, bytes], ...]) -> str:
    if len(texts) == 1:  # one file: its plain sha256, as sha256sum prints it
        return hashlib.sha256(texts[0][1]).hexdigest()
    h = hashlib.sha256()
    for rel, data in texts:  # the defining file first, then the others in the order they are imported
        h.update(f"{rel}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        h.update(data)
    return h.hexdigest()


def _load_file(path: str, given: str) -> Loaded:
    shown = display_path(path) if os.path.isabs(given) else given  # as the user typed it
    provided = _PROVIDED.get(path)
    if provided is not None:
        texts = provided
        digest = _digest_texts(texts)
        hit = _FILES.get(path)
        if hit is not None and hit[0] == digest:
            return hit[1]
        folder = _materialize(digest, texts)
        run_path = os.path.join(folder, texts[0][0])
    else:
        data = _read(path, shown)
        try:
            files = _file_closure(path, data)
            others = [(os.path.relpath(p, os.path.dirname(path)).replace(os.sep, "/"), _bytes(p)) for p in files[1:]]
        except OSError as err:
            raise ConfigError(f"cannot read a module the spec file {shown} imports: {err}") from None
        texts = ((os.path.basename(path), data), *others)
        digest = _digest_texts(texts)
        hit = _FILES.get(path)
        if hit is not None and hit[0] == digest:
            return hit[1]
        run_path = path
    module = _exec_file(run_path, path, texts, shown)
    spec = _spec_attr(module, "SPEC", f"spec file {shown}")
    files = (path,) + tuple(os.path.join(os.path.dirname(path), rel) for rel, _ in texts[1:])
    loaded = Loaded(spec, SpecSource(FILE, path, digest, files), texts)
    _FILES[path] = (digest, loaded)
    return loaded


_MATERIALIZED: dict[str, str] = {}  # hash -> this process's private folder holding the shipped files


def _materialize(digest: str, texts) -> str:
    """A private folder (created for this process, removed when it exits) holding the shipped files: an
    executor imports the modules beside the spec from it."""
    folder = _MATERIALIZED.get(digest)
    if folder is None:
        import atexit
        import shutil
        folder = tempfile.mkdtemp(prefix=f"txncheck-spec-{digest[:12]}-")
        atexit.register(shutil.rmtree, folder, True)
        for rel, data in texts:
            target = os.path.join(folder, *rel.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        _MATERIALIZED[digest] = folder
    return folder


def _exec_file(run_path: str, path: str, texts, shown: str):
    """Run the spec file's bytes (exactly those hashed) as a fresh module, with its folder first on sys.path."""
    data = texts[0][1]
    name = _module_name(path)
    folder = os.path.dirname(run_path)
    siblings = {os.path.normcase(os.path.join(folder, *rel.split("/"))) for rel, _ in texts[1:]}
    for mod_name, mod in list(sys.modules.items()):  # a module beside it imported before: run its current text
        f = getattr(mod, "__file__", None)
        if f and os.path.normcase(os.path.abspath(f)) in siblings:
            del sys.modules[mod_name]
    ispec = importlib.util.spec_from_file_location(name, run_path)
    module = importlib.util.module_from_spec(ispec)
    module.__file__ = run_path
    sys.modules[name] = module  # dataclasses and pickling look a module up by name while it runs
    sys.path.insert(0, folder)
    try:
        code = compile(data, run_path, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - running the user's spec is what was asked
    except SyntaxError as err:
        sys.modules.pop(name, None)
        raise ConfigError(_syntax_message(err, shown, path, run_path)) from None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the user's code: its error is theirs, named exactly
        sys.modules.pop(name, None)
        raise ConfigError(f"cannot load spec {shown}: {_where(err, {run_path: ''}, folder)}"
                          f"{_describe(err)}") from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass
    return module


def _syntax_message(err: SyntaxError, shown: str, path: str, run_path: str) -> str:
    fname = err.filename or run_path
    line = f"line {err.lineno}" if err.lineno else ""
    if os.path.abspath(fname) != os.path.abspath(run_path):  # in a module beside it
        line = display_path(fname) + (f", {line}" if line else "")
    code = (err.text or "").strip()
    snippet = f": {code[:80]}" if code else ""
    return f"cannot load spec {shown}: {line + ': ' if line else ''}{type(err).__name__}: {err.msg}{snippet}"


def _where(err: BaseException, names: dict[str, str], folder: str | None) -> str:
    """`FILE, line N: ` for the deepest frame of the traceback in the user's code (the spec file or a
    module beside it, else the deepest file that is not txncheck's or Python's import machinery), or
    nothing if there is none."""
    mine, other = None, None
    tb = err.__traceback__
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        tb_line, tb = tb.tb_lineno, tb.tb_next
        if f.startswith("<"):
            continue
        full = os.path.abspath(f)
        if any(full.startswith(d + os.sep) for d in _OURS) or "importlib" in full:
            continue
        if full in names or (folder and full.startswith(folder + os.sep)):
            mine = (names[full] if full in names else display_path(full), tb_line)
        else:
            other = (display_path(full), tb_line)
    best = mine or other
    if best is None:
        return ""
    return f"{best[0]}, line {best[1]}: " if best[0] else f"line {best[1]}: "  # '': the file already named


_OURS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), p)
              for p in ("spec", "checker", "traces", "reports", "cli"))  # txncheck's own packages


def _describe(err: BaseException) -> str:
    if isinstance(err, SystemExit):
        return f"it called sys.exit({err.code!r}) while being imported; a spec file only defines SPEC"
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    if isinstance(err, TxncheckError) and text:  # txncheck's own message (a Row built wrong): no class name
        return text
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _spec_attr(module, attr: str, what: str) -> Spec:
    found = module
    for part in attr.split("."):
        if not hasattr(found, part):
            if what.startswith("spec file"):
                raise ConfigError(f"{what} defines no SPEC; a spec file assigns its Spec to SPEC, e.g. "
                                  "SPEC = Spec(name=..., ...) (see docs/user-specs.md)")
            raise ConfigError(f"{what}: module {module.__name__} has no attribute {attr}; give "
                              "MODULE:ATTRIBUTE of a Spec")
        found = getattr(found, part)
    if not isinstance(found, Spec):
        where = f"SPEC in {what[len('spec file '):]}" if what.startswith("spec file") else f"{what}"
        raise ConfigError(f"{where} is {_a(type(found).__name__)}, not a Spec (txncheck.spec.model.Spec); "
                          "assign a Spec to it")
    return found


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


# ---- MODULE:ATTRIBUTE and entry points -------------------------------------------------------------
_MODULES: dict[str, Loaded] = {}


def _module_files_of(found) -> list[str]:
    if found is None or not found.origin or not found.origin.endswith(".py") or not os.path.isfile(found.origin):
        return []
    if found.submodule_search_locations:  # a package: every module in it
        return _package_files(os.path.dirname(found.origin))
    return [found.origin]


def _load_module(ref: str, what: str | None = None) -> Loaded:
    hit = _MODULES.get(ref)
    if hit is not None:
        return hit
    what = what or f"spec {ref}"
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr or not re.fullmatch(r"[\w.]+", module_name) or not re.fullmatch(r"[\w.]+", attr):
        raise ConfigError(f"{what}: give MODULE:ATTRIBUTE, e.g. mypkg.specs:SPEC (or a spec file's path, e.g. "
                          "./myspec.py)")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and (module_name == err.name or module_name.startswith(err.name + ".")):
            raise ConfigError(f"cannot load {what}: no module named {err.name} on the Python path; install it, add "
                              "its folder to PYTHONPATH, or give a spec file's path (./myspec.py)") from None
        raise ConfigError(f"cannot load {what}: {_where(err, {}, _module_folder(module_name))}"
                          f"{_describe(err)}") from None
    except SyntaxError as err:
        fname = err.filename or module_name
        line = f", line {err.lineno}" if err.lineno else ""
        code = (err.text or "").strip()
        raise ConfigError(f"cannot load {what}: {display_path(fname)}{line}: {type(err).__name__}: {err.msg}"
                          + (f": {code[:80]}" if code else "")) from None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the user's module: its error is theirs
        raise ConfigError(f"cannot load {what}: {_where(err, {}, _module_folder(module_name))}"
                          f"{_describe(err)}") from None
    spec = _spec_attr(module, attr, what)
    files = _module_files_of(getattr(module, "__spec__", None))
    digest = _digest(files[0], files) if files else None
    loaded = Loaded(spec, SpecSource(MODULE, ref, digest, tuple(files)))
    _MODULES[ref] = loaded
    return loaded


def _module_folder(module_name: str) -> str | None:
    """The folder of the module's (top-level package's) file, whose frames are the user's code."""
    try:
        found = importlib.util.find_spec(module_name.split(".")[0])
    except (ImportError, ValueError):
        return None
    return os.path.dirname(found.origin) if found is not None and found.origin else None


_ENTRY_POINTS: dict[str, tuple[str, str]] | None = None


def entry_points() -> dict[str, tuple[str, str]]:
    """name -> (MODULE:ATTRIBUTE, distribution) for every spec installed packages publish in the
    entry-point group `txncheck.specs`; a shipped name is not overridden (`txncheck specs` says so)."""
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        from importlib.metadata import entry_points as eps
        found: dict[str, tuple[str, str]] = {}
        try:
            group = eps(group=ENTRY_POINT_GROUP)
        except Exception:  # noqa: BLE001 - a broken installed distribution must not stop the shipped specs
            group = ()
        for ep in group:
            dist = getattr(getattr(ep, "dist", None), "name", "") or ""
            found.setdefault(ep.name, (ep.value, dist))
        _ENTRY_POINTS = found
    return _ENTRY_POINTS


def listed() -> list[tuple[str, str]]:
    """(name, kind) of every spec `txncheck specs` lists: the shipped ones, then the published ones."""
    out = [(n, SHIPPED) for n in catalog.names()]
    out += [(n, ENTRY_POINT) for n in sorted(entry_points()) if n not in catalog.names()]
    return out
