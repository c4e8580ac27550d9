"""Timings of the symbolic engine on the shipped specs, as the Markdown section "Symbolic engine"
of benchmarks/RESULTS.md.

    python benchmarks/symbolic_bench.py [--write benchmarks/RESULTS.md] [--specs twophase,...]
                                         [--max-depth K]

For each spec: `tables --verify` (tiny); bmc of the baseline to the explicit engine's depth and of
each variant to its shortest counterexample (and the explicit engine's number, for comparison);
k-induction of TwoPhase for rm = 1..8. Only these parts of the file's "Symbolic engine" section are
rewritten; the subsections written by hand stay.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import time

from txncheck.spec import catalog
from txncheck.spec.ground import ground

from txncheck.checker.symbolic.bmc import bmc
from txncheck.checker.symbolic.induction import k_induction
from txncheck.checker.symbolic.tables import verify_tables

HEADER = "## Symbolic engine"


def _explicit(m):
    """The vector engine's depth and shortest violation of each always property (the only kind
    bmc checks)."""
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.vector.explore import explore
    t0 = time.perf_counter()
    always = tuple(p.name for p in m.properties if p.kind == "always")
    o = explore(m, ExploreOptions(stop_on_violation=False, properties=always))
    return o, {k: o.depth_of(i) for k, i in o.violations.items()}, time.perf_counter() - t0


def run(specs=("twophase", "paxoscommit", "kafka"), induction_rm=range(1, 9), max_depth=None) -> str:
    """`max_depth`: skip bmc cases deeper than this (listed as not run)."""
    lines = [HEADER, "",
             f"Measured by `python benchmarks/symbolic_bench.py` ({platform.python_version()}, "
             f"z3 {_z3_version()}; bmc with `fd`, z3's finite-domain solver, k-induction with `smt`, its general "
             "solver: each command's default; timings under load, ±50%). `solver` is the sum of z3 `check()` "
             "times, `total` includes encoding and trace replay. bmc's first query is its 1-induction pass; what "
             "it proves is not unrolled (on TwoPhase's baseline, everything).", "",
             "### Table checks (`txncheck tables SPEC --verify`, config tiny)", "",
             "| spec | findings | determinism q / s | completeness q / s | type q / s | conformance q / s | total s |",
             "|---|---|---|---|---|---|---|"]
    bmc_rows, ind_rows = [], []
    for name in specs:
        try:
            base = catalog.load(name)
        except Exception as err:  # noqa: BLE001 - a spec being written
            lines.append(f"| {name} | not loadable: {type(err).__name__} | | | | | |")
            continue
        m = ground(base, base.resolve_config("tiny"))
        t0 = time.perf_counter()
        r = verify_tables(m)
        tt = time.perf_counter() - t0
        cells = [f"{r.timings[c]['queries']} / {r.timings[c]['solver_s']:.3f}" for c in
                 ("determinism", "completeness", "type", "conformance")]
        lines.append(f"| {name} | {len(r.findings)} | " + " | ".join(cells) + f" | {tt:.2f} |")
        for variant in [None] + [v.name for v in base.variants]:
            spec = base.with_variant(variant)
            v = base.variant_named(variant) if variant else None
            mv = ground(spec, spec.resolve_config(v.config if v else "tiny", dict(v.settings) if v else {}))
            o, viol, te = _explicit(mv)
            depth = max(viol.values()) if viol else o.depth
            if max_depth is not None and depth > max_depth:
                bmc_rows.append(f"| {name} | {variant or 'baseline'} | not run (K = {depth} > {max_depth}) | | | "
                                f"| | | {te:.2f} |")
                continue
            res = bmc(mv, depth)
            got = {p.name: p.depth for p in res.properties if p.status == "violated"}
            agree = "yes" if got == viol else f"NO (explicit {viol})"
            shown = ", ".join(f"{k} @ {d}" for k, d in sorted(got.items())) or f"none up to {depth}"
            bmc_rows.append(f"| {name} | {variant or 'baseline'} | {shown} | {agree} | {len(res.queries)} | "
                            f"{res.solver_s:.2f} | {res.encode_s:.2f} | {res.wall_s:.2f} | {te:.2f} |")
    lines += ["", "### Bounded model checking (`txncheck bmc SPEC [--variant V] --depth K`)", "",
              "K is the explicit engine's depth (baseline) or its shortest counterexample (variant).", "",
              "| spec | variant | counterexample (property @ length) | same length as explicit | queries | "
              "solver s | encode s | total s | explicit s |", "|---|---|---|---|---|---|---|---|---|", *bmc_rows]
    if "twophase" in specs:
        spec = catalog.load("twophase")
        for rm in induction_rm:
            m = ground(spec, spec.resolve_config("tiny", {"rm": rm}))
            res = k_induction(m, 2)
            p = res.properties[0]
            ind_rows.append(f"| {rm} | {m.width} | {len(m.actions)} | {p.status} (k={p.depth}) | "
                            f"{len(res.queries)} | {res.solver_s:.3f} | {res.wall_s:.3f} |")
        lines += ["", "### k-induction (`txncheck bmc twophase --set rm=N --induction 2`)", "",
                  "TCConsistent with the strengthening invariant TPInductive (spec/twophase.py).", "",
                  "| rm | cells | actions | TCConsistent | queries | solver s | total s |",
                  "|---|---|---|---|---|---|---|", *ind_rows]
    return "\n".join(lines) + "\n"


def _z3_version() -> str:
    import z3
    return z3.get_version_string()


def write_section(path: str, section: str) -> None:
    """Replace, in `path`, the parts of the "## Symbolic engine" section this harness writes: its
    first paragraph and each of its `### ` subsections, found by heading. The subsections written by
    hand in between (Kafka's deep cases, the strengthening invariants) are kept."""
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    blocks = re.split(r"(?m)^(?=### )", section.rstrip("\n") + "\n")
    intro, subsections = blocks[0], blocks[1:]
    head = re.compile(r"^## Symbolic engine\n.*?(?=^### |^## |\Z)", re.S | re.M)
    if not head.search(text):
        text = text.rstrip("\n") + "\n\n" + section
    else:
        text = head.sub(lambda _m: intro, text, count=1)
        for block in subsections:
            title = block.splitlines()[0]
            pat = re.compile(rf"^{re.escape(title)}\n.*?(?=^### |^## |\Z)", re.S | re.M)
            if pat.search(text):
                text = pat.sub(lambda _m: block + ("\n" if not block.endswith("\n\n") else ""), text, count=1)
            else:  # a new subsection: at the end of the Symbolic engine section
                end = re.search(r"^## Symbolic engine\n.*?(?=^## (?!Symbolic)|\Z)", text, re.S | re.M).end()
                text = text[:end].rstrip("\n") + "\n\n" + block + "\n" + text[end:]
    from txncheck.reports.atomic import write_atomic
    write_atomic(path, text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", default="twophase,paxoscommit,kafka")
    ap.add_argument("--write", default=None, help="RESULTS.md to update (only the Symbolic engine section)")
    ap.add_argument("--max-depth", type=int, default=None, help="skip bmc cases deeper than this")
    args = ap.parse_args(argv)
    section = run(tuple(s for s in args.specs.split(",") if s), max_depth=args.max_depth)
    print(section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
