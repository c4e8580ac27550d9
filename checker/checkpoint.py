"""What every resumable engine shares: which search a checkpoint belongs to, and durable files.

A checkpoint (the vector engine's `--checkpoint DIR`, the Spark engine's store) is resumed only by
the search that wrote it: the same model request (spec, its source hash when it has one, config,
overrides, variant, symmetry, invariants), the same options that decide the result (`search_key`)
and, for the vector engine, the same txncheck and ground model (`model_digest`). Anything else is
refused with one message naming what differs (`refuse_other`). Files are made durable before the
manifest that names them (`durable.py`: a temporary file, fsync, rename, fsync of the
directory), so after a kill or a power cut a checkpoint holds its last complete level, never half
of one.
"""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass

from txncheck.spec.errors import ConfigError

from .durable import replace_file

MANIFEST = "manifest.json"
TMP_PREFIX = ".tmp-"  # what a killed writer may leave behind; never a checkpoint's content


class CheckpointError(ConfigError):
    """A checkpoint that cannot be used or written (exit 2): the message names it and the fix."""


@dataclass(frozen=True)
class Checkpointing:
    """An engine's checkpoint settings: write each completed level to `directory`, and with `resume`
    first continue the search recorded there."""

    directory: str
    resume: bool = False


def txncheck_version() -> str:
    try:
        from importlib.metadata import version
        return version("txncheck")
    except Exception:  # noqa: BLE001 - an uninstalled tree: the model digest still tells models apart
        return ""


def model_identity(request, model, symmetry: bool) -> dict:
    """The model request as the ground model resolved it (config name, every override as text), in the
    form the Spark engine's `ModelRef.to_json` records; a spec's source hash when it has one."""
    from txncheck.spec.request import ModelRequest
    resolved = ModelRequest.of(request.spec, model.config.name, dict(model.config.overrides), request.variant,
                               request.invariants)
    out = {"spec": resolved.spec if isinstance(resolved.spec, str) else resolved.spec.name,
           "config": resolved.config, "overrides": [list(x) for x in resolved.overrides],
           "variant": resolved.variant, "symmetry": bool(symmetry)}
    if resolved.invariants:
        out["invariants"] = True
    source = getattr(model, "source", None)
    if source is not None and getattr(source, "sha256", None):
        out["spec_sha256"] = source.sha256
    return out


def model_digest(model) -> str:
    """A sha256 of the ground model's actions, properties, initial state and layout width: a shipped spec
    has no source hash, and an edited spec or checker keeps txncheck's version number."""
    h = hashlib.sha256()
    h.update(repr((model.width, tuple(model.initial_states), model.terminal)).encode())
    for a in model.actions:
        h.update(repr((a.id, a.label, a.guard, a.updates)).encode())
    for p in model.properties:
        h.update(repr((p.name, p.kind, p.expr, p.when)).encode())
    return h.hexdigest()


def search_key(model_json: dict, options, always, sometimes, graph) -> dict:
    """What decides a search's result besides the model: the properties judged in it and the options
    (`--continue`, `--deadlock`, the bounds). `--memory-budget`, `--progress` and the like do not."""
    return json.loads(json.dumps({
        "model": model_json, "always": tuple(always), "sometimes": tuple(sometimes), "recoverable": tuple(graph),
        "check_deadlock": options.check_deadlock, "max_states": options.max_states,
        "max_depth": options.max_depth, "stop_on_violation": options.stop_on_violation}))


def differences(stored, wanted, path: str = "") -> list[tuple[str, object, object]]:
    """(field, stored, wanted) for every leaf where two JSON values differ, fields as dotted paths."""
    if isinstance(stored, dict) and isinstance(wanted, dict):
        out = []
        for k in sorted(set(stored) | set(wanted)):
            out += differences(stored.get(k), wanted.get(k), f"{path}.{k}" if path else str(k))
        return out
    return [] if stored == wanted else [(path or "value", stored, wanted)]


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def refuse_other(where: str, stored: dict, wanted: dict, error=CheckpointError) -> None:
    """Raise `error` naming what differs when a checkpoint belongs to another search: the model request's
    fields when they differ (the rest follows from them), else every option, version or digest that does."""
    diff = differences(stored, wanted)
    if not diff:
        return
    request = [d for d in diff if ".model." in f".{d[0]}"]
    diff = request or diff
    shown = "; ".join(f"{f.removeprefix('search.')} {_shown(a)} there, {_shown(b)} now" for f, a, b in diff[:4])
    if len(diff) > 4:
        shown += f"; and {len(diff) - 4} more"
    raise error(f"{where} was written by another search ({shown}); resume it with the same model and options, "
                "or run without --resume to start over")


# -- durable files -----------------------------------------------------------------------------------
def write_json_durable(path: str, value) -> None:
    """Replace `path` by `value` as JSON atomically and durably (the directory synced too)."""
    temp = os.path.join(os.path.dirname(path) or ".", f"{TMP_PREFIX}{uuid.uuid4().hex}")
    replace_file(path, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode(), temp, sync_dir=True)


def refuse_existing(directory: str, option: str = "--checkpoint") -> None:
    """A new checkpoint goes to a new or empty directory: one that holds a checkpoint already is resumed
    (`--resume`) or removed by its owner, never overwritten, and files txncheck did not write are never
    touched."""
    if not os.path.exists(directory):
        return
    if not os.path.isdir(directory):
        raise CheckpointError(f"{option} {directory} exists and is not a directory; give a directory path")
    entries = sorted(e for e in os.listdir(directory) if not e.startswith(TMP_PREFIX))
    if MANIFEST in entries:
        raise CheckpointError(f"{option} {directory} holds the checkpoint of an earlier run; continue it with "
                              f"--resume {directory}, or remove that directory (or give another) to start over")
    if entries:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise CheckpointError(f"{option} {directory} holds files txncheck did not write ({shown}); give a new "
                              "or empty directory")
