"""Bounded model checking with and without the induction pass, side by side in one run.

    .venv/bin/python benchmarks/bmc_prove.py [CASE ...] [--skip-unrolled-all-above K] [--timeout S]

    .venv/bin/python benchmarks/bmc_prove.py --pass-only

With --pass-only: for the baseline and every Kafka variant, only the induction pass
(`txncheck bmc kafka --variant V --depth 0`): what it proves and which strengthening invariants it
keeps. Otherwise a CASE is `VARIANT@DEPTH` (`baseline@12` for the spec's baseline); the default is the Kafka cases
of benchmarks/RESULTS.md "Kafka BMC". For each, `txncheck bmc kafka --variant V --depth K` runs
twice in a fresh process, one after the other: with `--no-prove` (every always property unrolled)
and without (the induction pass first proves what is 1-inductive with the spec's strengthening
invariants, then unrolls the rest). Both must report the same violations at the same depths;
the script prints a Markdown table for RESULTS.md: the pass's seconds and what it proved, solver
and total seconds of each run, and their ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

DEFAULT = ("D4-no-sequence-check@17", "B4-no-bump-on-timeout@23", "B1d-produce-before-add@25",
           "B15-empty-txn@28", "B3-produce-after-marker@29")
TXNCHECK = os.path.join(os.path.dirname(sys.executable), "txncheck")


def run_bmc(variant: str | None, depth: int, prove: bool, timeout: float):
    cmd = [TXNCHECK, "bmc", "kafka", "--depth", str(depth), "--json"]
    if variant:
        cmd += ["--variant", variant]
    if not prove:
        cmd.append("--no-prove")
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout), time.perf_counter() - t0


def violations(res) -> dict:
    return {p["name"]: p["depth"] for p in res["properties"] if p["status"] == "violated"}


def pass_table(timeout: float) -> int:
    from txncheck.spec.kafka import SPEC
    rows = ["| case | always properties | proved for every depth | not proved (violated, or not 1-inductive there) "
            "| strengthening invariants kept | pass s |", "|---|---|---|---|---|---|"]
    for variant in [None] + [v.name for v in SPEC.variants]:
        res, _ = run_bmc(variant, 0, True, timeout)
        if res is None:
            rows.append(f"| {variant or 'baseline'} | timeout | | | | |")
            continue
        props = res["properties"]
        not_proved = [p["name"] for p in props if p["status"] != "proved"]
        rows.append(f"| {variant or 'baseline (tiny)'} | {len(props)} | {len(props) - len(not_proved)} | "
                    f"{', '.join(not_proved)} | {len(res['strengthening_kept'])} of {len(SPEC.invariants_for_induction)} | "
                    f"{res['queries'][0]['seconds']:.1f} |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=list(DEFAULT))
    ap.add_argument("--skip-unrolled-all-above", type=int, default=25, metavar="K",
                    help="do not run --no-prove deeper than K (it takes hours there); default 25")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per run (default 3600)")
    ap.add_argument("--pass-only", action="store_true", help="only the induction pass, for every variant")
    args = ap.parse_args()
    if args.pass_only:
        return pass_table(args.timeout)
    rows = ["| case | K | induction pass s (proved) | --no-prove: solver / total s | default: solver / total s "
            "| total ratio | violations (property @ depth) |", "|---|---|---|---|---|---|---|"]
    for case in args.cases:
        name, _, k = case.partition("@")
        if not k.isdigit():
            raise SystemExit(f"{case}: write a case as VARIANT@DEPTH (baseline@12 for the baseline)")
        variant, depth = (None if name == "baseline" else name), int(k)
        on, _ = run_bmc(variant, depth, True, args.timeout)
        off = None
        if depth <= args.skip_unrolled_all_above:
            off, off_wall = run_bmc(variant, depth, False, args.timeout)
        if on is None:
            rows.append(f"| {name} | {depth} | | | timeout ({args.timeout:.0f} s) | | |")
            print(rows[-1], flush=True)
            continue
        if off is not None and violations(off) != violations(on):
            raise SystemExit(f"{case}: the runs disagree: {violations(off)} vs {violations(on)}")
        pass_q = on["queries"][0]
        proved = sum(p["status"] == "proved" for p in on["properties"])
        off_cell = (f"{off['solver_s']:.1f} / {off['wall_s']:.1f}" if off is not None else
                    ("not run" if depth > args.skip_unrolled_all_above else f"timeout ({off_wall:.0f} s)"))
        ratio = f"{off['wall_s'] / on['wall_s']:.1f}x" if off is not None else ""
        found = ", ".join(f"{n} @{d}" for n, d in sorted(violations(on).items(), key=lambda x: x[1])) or "none"
        rows.append(f"| {name} | {depth} | {pass_q['seconds']:.1f} ({proved}) | {off_cell} | "
                    f"{on['solver_s']:.1f} / {on['wall_s']:.1f} | {ratio} | {found} |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
