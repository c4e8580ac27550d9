"""Helpers shared by the command modules: exit codes, spec loading and --set parsing."""
from __future__ import annotations

from txncheck.spec import loader
from txncheck.spec.errors import ConfigError
from txncheck.spec.model import Spec
from txncheck.spec.request import ModelRequest


SPEC_HELP = ("a shipped spec (see `txncheck specs`), a spec file (./myspec.py, which defines SPEC), "
             "MODULE:ATTRIBUTE of a Spec, or a spec an installed package publishes")


def load_spec(name: str) -> Spec:
    """The spec SPEC names, by the one loader (spec/loader.py): a shipped name, a spec file, MODULE:ATTRIBUTE
    or a published name; a mistake in a user's spec is a ConfigError naming its file and line."""
    return loader.load(name)


def parse_sets(items) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        if "=" not in item or not item.split("=", 1)[0].strip():
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r} (for example --set rm=4)")
        k, v = item.split("=", 1)
        k, v = k.strip(), v.strip()
        if k in out and out[k] != v:
            raise ConfigError(f"--set {k} is given twice ({k}={out[k]} and {k}={v}); keep one")
        out[k] = v
    return out


def model_request(args, invariants: bool = False) -> ModelRequest:
    """The one ModelRequest a command's SPEC, --config, --set and --variant describe."""
    load_spec(args.spec)  # an unknown spec is named before anything else
    return ModelRequest.of(args.spec, args.config, parse_sets(args.set), getattr(args, "variant", None), invariants)


def add_model_args(p, *, variant: bool = True) -> None:
    p.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    p.add_argument("--config", metavar="NAME", help="a named configuration of the spec (default: its first)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="override a configuration constant (repeatable), e.g. --set rm=4")
    if variant:
        p.add_argument("--variant", metavar="NAME", help="check a named variant (a known bug) instead of the spec")


def model_request_spec(name: str) -> Spec:
    """The spec SPEC names, as `check` reads it (the same loader as `load_spec` and every request)."""
    return ModelRequest.of(name).base_spec()
