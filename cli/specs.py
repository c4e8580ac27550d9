"""`txncheck specs [SPEC] [--json]`: the shipped specs and those installed packages publish (entry-point
group `txncheck.specs`), their configs, variants and properties; SPEC may also be a spec file or
MODULE:ATTRIBUTE, as every command reads it."""
from __future__ import annotations

import json
import sys
import textwrap

from txncheck.spec import loader
from txncheck.spec.errors import TxncheckError
from txncheck.spec.expr import show

from .common import SPEC_HELP


def register(sub):
    p = sub.add_parser("specs", help="list shipped and installed specs, configs, variants and properties")
    p.add_argument("spec", nargs="?", metavar="SPEC", help="show one spec in detail: " + SPEC_HELP)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def describe(spec, source=None) -> dict:
    params = {p.name: p for p in spec.params}
    return {
        "name": spec.name, "doc": spec.doc, "ref": spec.ref,
        "source": {"kind": source.kind, "ref": source.ref, "sha256": source.sha256} if source else None,
        "params": [{"name": p.name, "default": p.default, "doc": p.doc, "choices": list(p.choices) or None,
                    "min": p.lo, "max": p.hi} for p in spec.params],
        "configs": [{"name": c.name, "doc": c.doc,
                     "values": {**{k: p.default for k, p in params.items()}, **dict(c.values)},
                     "max_states": c.max_states, "max_depth": c.max_depth} for c in spec.configs],
        "tables": [{"actor": t.actor, "rows": len(t.rows), "status": t.status} for t in spec.tables],
        "properties": [{"name": p.name, "kind": p.kind, "doc": p.doc,
                        "applies": show(p.applies) if p.applies is not None else None} for p in spec.properties],
        "strengthening_invariants": [{"name": p.name, "doc": p.doc,
                                      "applies": show(p.applies) if p.applies is not None else None}
                                     for p in spec.invariants_for_induction],
        "variants": [{"name": v.name, "breaks": list(v.breaks), "config": v.config, "settings": dict(v.settings),
                      "doc": v.doc, "ref": v.ref} for v in spec.variants],
        "symmetry": spec.symmetry.describe() if spec.symmetry else [],
    }


def _listed() -> list[dict]:
    """Every shipped spec, then every spec an installed package publishes; one that cannot be loaded
    is named on stderr and left out (a broken package does not hide the others)."""
    out = []
    for name, kind in loader.listed():
        try:
            got = loader.resolve(name)
        except TxncheckError as err:
            print(f"txncheck: warning: installed spec {name}: {err}", file=sys.stderr)
            continue
        d = describe(got.spec, got.source)
        d["listed_as"] = name
        out.append(d)
    return out


def run(args) -> int:
    if args.spec:
        got = loader.resolve(args.spec)
        specs = [describe(got.spec, got.source)]
    else:
        specs = _listed()
    if args.json:
        print(json.dumps(specs if not args.spec else specs[0], indent=1))
        return 0
    for d in specs:
        src = d["source"] or {}
        shown = d.get("listed_as", d["name"])
        origin = "" if src.get("kind") in (None, "shipped") else (
            f"  [{'installed: ' + src['ref'] if src['kind'] == 'entry-point' else src['ref']}]")
        print(f"{shown}: {d['doc']}{origin}")
        if not args.spec:
            print(f"  configs: {', '.join(c['name'] for c in d['configs'])}; "
                  f"{len(d['properties'])} properties; {len(d['variants'])} variants; "
                  f"{sum(t['rows'] for t in d['tables'])} rows in {len(d['tables'])} tables")
            continue
        if d["ref"]:
            print(f"  reference: {d['ref']}")
        print("\n  constants:")
        for p in d["params"]:
            rng = f" one of {', '.join(map(str, p['choices']))}" if p["choices"] else (
                f" in {p['min']}..{p['max']}" if p["min"] is not None else "")
            print(f"    {p['name']:<18} default {p['default']!s:<8}{rng}  {p['doc']}")
        print("\n  configs (bounds):")
        for c in d["configs"]:
            vals = " ".join(f"{k}={v}" for k, v in c["values"].items())
            lim = []
            if c["max_states"]:
                lim.append(f"max_states={c['max_states']:,}")
            if c["max_depth"]:
                lim.append(f"max_depth={c['max_depth']}")
            print(f"    {c['name']:<10} {vals}{'  ' + ' '.join(lim) if lim else ''}")
            if c["doc"]:
                print(f"               {c['doc']}")
        print("\n  tables:")
        for t in d["tables"]:
            print(f"    {t['actor']:<22} {t['rows']} rows" + (f", status var {t['status']}" if t["status"] else ""))
        print("\n  properties:")
        for p in d["properties"]:
            cond = f" (applies when {p['applies']})" if p["applies"] else ""
            print(f"    {p['name']:<22} {p['kind']:<12} {p['doc']}{cond}")
        invs = d["strengthening_invariants"]
        if invs:
            print(f"\n  strengthening invariants ({len(invs)}, for `bmc`; `check --invariants` checks them; "
                  "texts with --json):")
            print(textwrap.fill(", ".join(i["name"] for i in invs), width=100, initial_indent="    ",
                                subsequent_indent="    "))
        print("\n  variants (each must break the listed property):")
        if not d["variants"]:
            print("    none")
        for v in d["variants"]:
            extra = " ".join(f"{k}={val}" for k, val in v["settings"].items())
            print(f"    {v['name']:<34} breaks {', '.join(v['breaks'])}  (config {v['config']}{' ' + extra if extra else ''})")
        if d["symmetry"]:
            print(f"\n  symmetry: {', '.join(d['symmetry'])} (use --symmetry)")
    return 0
