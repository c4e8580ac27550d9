"""Side-by-side benchmark of txncheck's engines and peer model checkers, in one run.

    python benchmarks/run.py [--quick] [--out benchmarks/RESULTS.md] [--repeats N] [--profile]
                             [--cases twophase8,paxoscommit,kafka] [--tlc-jar JAR] [--tla-specs DIR]

Each measurement runs in a fresh subprocess (so peak memory is that run's own), `--repeats`
times; the table reports the median time and the largest peak. Cases: TwoPhase at several sizes
(with Spin's compiled verifier on the same model, benchmarks/peers/twophase.pml), PaxosCommit
with 2 RMs, 3 acceptors and ballots {0,1}, and Kafka's ci config; each without and with symmetry.
Spin is installed with apt-get when missing; where that is impossible the peer is skipped with a
message. TLC (one worker) runs PaxosCommit side by side where its jar (`--tlc-jar`, or the environment
variable TXNCHECK_TLA2TOOLS) and the TLA+ specs of tlaplus/Examples' specifications/transaction_commit/
(`--tla-specs`, or TXNCHECK_TLA_SPECS: that folder or a checkout of the repository) are given, and
java is installed; otherwise it is skipped with a note. Neither is part of this repository. The engine section of RESULTS.md (between its markers) is rewritten; other sections are
kept.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- engines:begin -->", "<!-- engines:end -->"

# Published single-worker figure on the reference machine, quoted where TLC cannot run here.
TLC_PAXOSCOMMIT_SECONDS = 138.0
TLC_FILES = ("PaxosCommit.tla", "PaxosCommit.cfg", "TCommit.tla")


def worker(argv: list[str]) -> None:
    """Run one search and print its figures as JSON (called in a subprocess)."""
    spec_name, config, overrides, engine, sym = argv
    t0 = time.perf_counter()
    from txncheck.checker.allocator import reused_memory
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import build_model
    from txncheck.spec import catalog

    spec = catalog.load(spec_name)
    model = build_model(spec, config, json.loads(overrides))
    opts = ExploreOptions(symmetry=sym == "1", stop_on_violation=False)
    if engine == "scalar":
        from txncheck.checker.scalar.explore import explore
    else:
        from txncheck.checker.vector.explore import explore
    c0 = time.process_time()
    with reused_memory():  # as `check` runs a search
        out = explore(model, opts)
    cpu = time.process_time() - c0
    print(json.dumps({
        "cpu_seconds": cpu,
        "distinct": out.distinct, "generated": int(out.generated), "seconds": out.elapsed,
        "process_seconds": time.perf_counter() - t0, "peak": out.peak_memory,
        "store_bytes": out.store_bytes, "depth": out.depth,
        "violations": sorted(out.violations), "extra": out.extra,
    }))


TIME_FORMAT = ["/usr/bin/time", "-f", "MAXRSS %M CPU %U %S"]


def timed_run(distinct: int, generated: int | None, wall: float, out: str) -> dict:
    """One peer run's figures, its peak and CPU read from `/usr/bin/time -f "MAXRSS %M CPU %U %S"`."""
    rss = re.search(r"MAXRSS (\d+) CPU ([\d.]+) ([\d.]+)", out)
    return {"distinct": distinct, "generated": generated, "seconds": wall,
            "peak": int(rss.group(1)) * 1024 if rss else 0,
            "cpu_seconds": float(rss.group(2)) + float(rss.group(3)) if rss else None}


def summary(runs: list[dict]) -> dict:
    """The last run's counts with the median wall and CPU seconds and the largest peak of all runs."""
    r = dict(runs[-1])
    r["seconds"] = statistics.median(x["seconds"] for x in runs)
    r["all_seconds"] = [round(x["seconds"], 3) for x in runs]
    r["peak"] = max(x["peak"] for x in runs)
    cpus = [x["cpu_seconds"] for x in runs if x["cpu_seconds"] is not None]
    r["cpu_seconds"] = statistics.median(cpus) if cpus else None
    return r


def run_engine(case, engine, sym, repeats, timeout):
    spec_name, config, overrides = case["spec"], case["config"], case.get("overrides", {})
    runs = []
    for _ in range(repeats):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", spec_name, config,
               json.dumps(overrides), engine, "1" if sym else "0"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout} s"}
        if p.returncode != 0:
            return {"error": (p.stderr.strip().splitlines() or ["failed"])[-1]}
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return summary(runs)


# -- Spin -----------------------------------------------------------------------------------------
def ensure_spin() -> str | None:
    """Path of `spin`, installing the Debian package if missing; None (with a message) if impossible."""
    exe = shutil.which("spin")
    if exe:
        return exe
    if shutil.which("apt-get") and os.geteuid() == 0:
        print("spin not found: installing it with apt-get", file=sys.stderr)
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "spin"], capture_output=True)
        exe = shutil.which("spin")
    if not exe:
        print("skipping the Spin peer: spin is not installed and cannot be installed here "
              "(apt-get install spin)", file=sys.stderr)
    return exe


def run_spin(spin: str, n: int, repeats: int, timeout: int, expected: int | None = None):
    if not shutil.which("gcc"):
        return {"error": "gcc not found"}
    pml = os.path.join(HERE, "peers", "twophase.pml")
    with tempfile.TemporaryDirectory(prefix="txncheck-spin-") as d:
        t0 = time.perf_counter()
        p = subprocess.run([spin, f"-DN={n}", "-a", pml], cwd=d, capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": p.stderr.strip()[-200:] or p.stdout.strip()[-200:]}
        p = subprocess.run(["gcc", "-O2", "-DNOREDUCE", "-DSAFETY", "-o", "pan", "pan.c"], cwd=d,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": p.stderr.strip()[-200:]}
        build = time.perf_counter() - t0
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            # hash table sized for the state count (2^w slots, about twice the states), as one tunes pan
            w = max(16, min(28, (int(expected or 2**20) * 2).bit_length()))
            p = subprocess.run([*TIME_FORMAT, "./pan", f"-w{w}"], cwd=d,
                               capture_output=True, text=True, timeout=timeout)
            wall = time.perf_counter() - t0
            out = p.stdout + p.stderr
            stored = re.search(r"(\d+) states, stored", out)
            trans = re.search(r"(\d+) transitions", out)
            if not stored:
                return {"error": out.strip()[-300:]}
            runs.append(timed_run(int(stored.group(1)), int(trans.group(1)) if trans else None, wall, out))
        return {**summary(runs), "build_seconds": build}


# -- TLC ------------------------------------------------------------------------------------------
def find_tlc(jar: str | None, specs: str | None) -> tuple[str, str] | str:
    """(jar, folder with the PaxosCommit files), or why TLC is skipped."""
    if not jar or not os.path.isfile(jar):
        return ("no TLC jar (give --tlc-jar or TXNCHECK_TLA2TOOLS: tla2tools.jar of TLC 2.20)" if not jar
                else f"TLC jar {jar} not found")
    if not shutil.which("java"):
        return "java not found (apt-get install default-jre-headless)"
    for d in (specs, os.path.join(specs or "", "specifications", "transaction_commit")):
        if d and all(os.path.isfile(os.path.join(d, f)) for f in TLC_FILES):
            return jar, d
    return ("no PaxosCommit specs (give --tla-specs or TXNCHECK_TLA_SPECS: tlaplus/Examples' "
            f"specifications/transaction_commit/ with {', '.join(TLC_FILES)})")


def run_tlc(jar: str, specs: str, repeats: int, timeout: int):
    """TLC with one worker on PaxosCommit.cfg (2 RMs, 3 acceptors, ballots {0,1}), each run in a fresh
    folder; CPU is the whole JVM's (its JIT and garbage collector threads included)."""
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="txncheck-tlc-") as d:
            for f in TLC_FILES:
                shutil.copy(os.path.join(specs, f), d)
            cmd = [*TIME_FORMAT, "java", "-XX:+UseParallelGC", "-cp", jar,
                   "tlc2.TLC", "-workers", "1", "-metadir", os.path.join(d, "meta"),
                   "-config", "PaxosCommit.cfg", "PaxosCommit.tla"]
            t0 = time.perf_counter()
            try:
                p = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"error": f"timeout after {timeout} s"}
            wall = time.perf_counter() - t0
        out = p.stdout + p.stderr
        got = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", out)
        if not got:
            return {"error": (out.strip().splitlines() or ["TLC failed"])[-1][-200:]}
        runs.append(timed_run(int(got.group(2).replace(",", "")), int(got.group(1).replace(",", "")), wall, out))
    return summary(runs)


# -- report ---------------------------------------------------------------------------------------
def fmt_int(x):
    return "—" if x is None else f"{x:,}"


def row(case_name, engine, sym, r):
    if "error" in r:
        return f"| {case_name} | {engine} | {'on' if sym else 'off'} | — | — | — | — | — | — | — | {r['error']} |"
    secs = r["seconds"]
    rate = r["distinct"] / secs if secs > 0 else 0
    bps = "—"
    if r.get("store_bytes") and r["distinct"]:
        visited = (r.get("extra") or {}).get("vector_store_bytes_per_state")
        total = r["store_bytes"] / r["distinct"]
        bps = f"{total:.1f}" if visited is None or abs(visited - total) < 0.05 else f"{visited:.1f} (+{total - visited:.1f} edges)"
    note = ", ".join(f"{s:.2f}" for s in r.get("all_seconds", []))
    return (f"| {case_name} | {engine} | {'on' if sym else 'off'} | {fmt_int(r['distinct'])} | "
            f"{fmt_int(r.get('generated'))} | {secs:.2f} | "
            f"{'—' if r.get('cpu_seconds') is None else format(r['cpu_seconds'], '.2f')} | {rate:,.0f} | {bps} | "
            f"{r['peak'] / 2**20:,.0f} | runs: {note} |")


def write_section(path: str, body: str) -> None:
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n\n"
    block = f"{BEGIN}\n{body.rstrip()}\n{END}"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n## Engines: vector vs scalar vs peers (issue 4)\n\n" + block + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat (a smoke run)")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--no-scalar", action="store_true", help="skip the (slow) scalar engine on large cases")
    ap.add_argument("--profile", action="store_true", help="also write pyinstrument profiles of the vector engine")
    ap.add_argument("--cases", default=None,
                    help="run only these cases, comma-separated: twophase5 .. twophase8, paxoscommit, kafka "
                         "(write to another --out: a partial run does not replace the table)")
    ap.add_argument("--tlc-jar", default=os.environ.get("TXNCHECK_TLA2TOOLS"),
                    help="TLC's tla2tools.jar (default: $TXNCHECK_TLA2TOOLS); without it TLC is skipped")
    ap.add_argument("--tla-specs", default=os.environ.get("TXNCHECK_TLA_SPECS"),
                    help="tlaplus/Examples' specifications/transaction_commit/ or a checkout of that repository "
                         "(default: $TXNCHECK_TLA_SPECS)")
    ap.add_argument("--tlc-repeats", type=int, default=1, help="TLC runs (each takes minutes)")
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    command = "python benchmarks/run.py " + " ".join(a for a in sys.argv[1:])

    tp_sizes = [3, 5] if args.quick else [5, 6, 7, 8]
    cases = [{"name": f"twophase rm={n}", "spec": "twophase", "config": "tiny", "overrides": {"rm": n}, "rm": n,
              "scalar": n <= 7 or not args.no_scalar, "sym": n <= 6}
             for n in tp_sizes]
    pax = {"rm": 1} if args.quick else {}
    cases.append({"name": "paxoscommit " + ("tiny (1 RM)" if args.quick else "2 RMs, 3 acceptors, ballots {0,1}"),
                  "spec": "paxoscommit", "config": "tiny" if args.quick else "ci", "overrides": pax,
                  "scalar": not args.no_scalar, "sym": True, "tlc": not args.quick})
    cases.append({"name": "kafka " + ("tiny" if args.quick else "ci"), "spec": "kafka",
                  "config": "tiny" if args.quick else "ci", "scalar": args.quick, "sym": True})
    for c in cases:
        c["key"] = f"twophase{c['rm']}" if "rm" in c else c["spec"]
    if args.cases:
        wanted = args.cases.split(",")
        unknown = sorted(set(wanted) - {c["key"] for c in cases})
        if unknown:
            ap.error(f"unknown case {', '.join(unknown)}; the cases are {', '.join(c['key'] for c in cases)}")
        cases = [c for c in cases if c["key"] in wanted]
    tlc = find_tlc(args.tlc_jar, args.tla_specs) if any(c.get("tlc") for c in cases) else None

    spin = ensure_spin()
    lines = []
    results = {}
    for case in cases:
        for sym in ([False, True] if case["sym"] else [False]):
            engines = ["vector"] + (["scalar"] if case["scalar"] else [])
            for eng in engines:
                reps = repeats if eng == "vector" else 1
                print(f"running {case['name']} {eng} symmetry={'on' if sym else 'off'} ...", file=sys.stderr, flush=True)
                r = run_engine(case, eng, sym, reps, args.timeout)
                results[(case["name"], eng, sym)] = r
                lines.append(row(case["name"], eng, sym, r))
            if not sym and "rm" in case and case["spec"] == "twophase":
                if spin:
                    print(f"running {case['name']} spin ...", file=sys.stderr, flush=True)
                    r = run_spin(spin, case["rm"], repeats, args.timeout,
                                 results.get((case["name"], "vector", False), {}).get("distinct"))
                else:
                    r = {"error": "spin unavailable (apt-get install spin)"}
                results[(case["name"], "spin", False)] = r
                lines.append(row(case["name"], "spin (pan -O2 -DNOREDUCE -DSAFETY)", False, r))
            if not sym and case.get("tlc"):
                if isinstance(tlc, tuple):
                    print(f"running {case['name']} TLC ...", file=sys.stderr, flush=True)
                    r = run_tlc(*tlc, args.tlc_repeats, args.timeout)
                else:
                    print(f"skipping TLC: {tlc}", file=sys.stderr)
                    r = {"error": f"skipped: {tlc}"}
                results[(case["name"], "tlc", False)] = r
                lines.append(row(case["name"], "TLC 2.20 (-workers 1, PaxosCommit.cfg)", False, r))

    # -- comparisons against the targets --------------------------------------------------------
    comp = []
    big = f"twophase rm={tp_sizes[-1]}"
    v, s = results.get((big, "vector", False), {}), results.get((big, "spin", False), {})
    if "seconds" in v and "seconds" in s:
        comp.append(f"- {big}: vector {v['seconds']:.2f} s vs Spin {s['seconds']:.2f} s wall "
                    f"(Spin/vector = {s['seconds'] / v['seconds']:.2f}×)"
                    + (f"; CPU {v['cpu_seconds']:.2f} s vs {s['cpu_seconds']:.2f} s "
                       f"({s['cpu_seconds'] / v['cpu_seconds']:.2f}×; target ≥ 3×)"
                       if v.get("cpu_seconds") and s.get("cpu_seconds") else "")
                    + ".")
    pax = [c for c in cases if c["spec"] == "paxoscommit"]
    pname = pax[0]["name"] if pax else ""
    v, sc = results.get((pname, "vector", False), {}), results.get((pname, "scalar", False), {})
    if "seconds" in v:
        t = results.get((pname, "tlc", False), {})
        if "seconds" in t:
            comp.append(f"- {pname}: vector {v['seconds']:.2f} s vs TLC one worker {t['seconds']:.1f} s wall, measured "
                        f"in this run (TLC/vector = {t['seconds'] / v['seconds']:.0f}×)"
                        + (f"; CPU {v['cpu_seconds']:.2f} s vs {t['cpu_seconds']:.1f} s "
                           f"({t['cpu_seconds'] / v['cpu_seconds']:.0f}×; target ≥ 100×)"
                           if v.get("cpu_seconds") and t.get("cpu_seconds") else "") + ".")
        elif pax and pax[0].get("tlc"):
            comp.append(f"- {pname}: vector {v['seconds']:.2f} s vs TLC one worker {TLC_PAXOSCOMMIT_SECONDS:.0f} s "
                        f"(quoted, not measured here; {t.get('error', 'TLC skipped')}) = "
                        f"{TLC_PAXOSCOMMIT_SECONDS / v['seconds']:.0f}× (target ≥ 100×).")
        if "seconds" in sc:
            comp.append(f"- {pname}: vector vs scalar in this run = {sc['seconds'] / v['seconds']:.1f}× (target ≥ 20×).")
        if v.get("extra", {}).get("vector_store_bytes_per_state"):
            comp.append(f"- {pname}: visited store {v['extra']['vector_store_bytes_per_state']:.1f} bytes per state "
                        "(fingerprint, parent, action, sorted copy; target ≤ 32).")
    kname = next((c["name"] for c in cases if c["spec"] == "kafka"), "")
    v = results.get((kname, "vector", False), {})
    if "seconds" in v:
        comp.append(f"- {kname}: vector {v['seconds']:.1f} s (target < 60 s).")

    import numpy
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    spin_ver = ""
    if spin:
        spin_ver = subprocess.run([spin, "-V"], capture_output=True, text=True).stdout.strip()
    body = [
        f"Command: `{command}` (from the repository root; `make bench` runs it).",
        "",
        f"Machine: {os.cpu_count()} cores ({platform.processor() or platform.machine()}), Python "
        f"{platform.python_version()}, numpy {numpy.__version__}"
        + (f", {spin_ver}" if spin_ver else "") + f"; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in load) if load else 'n/a'}. Every engine runs on one core; "
        f"runs are sequential, in one invocation, each in a fresh process. Date: {time.strftime('%Y-%m-%d %H:%M')}.",
        "",
        "Seconds: wall-clock search time (median of the runs listed; Spin: the whole `./pan` process; TLC: the "
        "whole `java` process, parsing and start-up included, CPU of all its threads); "
        "CPU s: the same run's CPU time (user + system), which is less disturbed by other load on the machine. "
        "Bytes/state: "
        "the visited store (vector: sorted fingerprints + fingerprint, parent, action records; scalar: its arrays "
        "and dict) divided by distinct states; where a spec has `recoverable` properties the stored edges "
        "(source, target, action: 20 bytes per non-stuttering transition) are shown separately. "
        "Peak: peak RSS of the process (includes the interpreter and numpy, about 35 MiB).",
        "",
        "| case | engine | symmetry | distinct | generated | seconds | CPU s | distinct/s | bytes/state | peak MiB | notes |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
        *lines,
        "",
        "Against the targets:",
        "",
        *(comp or ["- (no comparison available in this run)"]),
    ]
    write_section(args.out, "\n".join(body))
    print("\n".join(body))
    if args.profile:
        profile(args.quick)


def profile(quick: bool) -> None:
    """pyinstrument profiles of the vector engine's hot path, into benchmarks/profiles/."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument is not installed (pip install '.[bench]'); no profiles", file=sys.stderr)
        return
    from txncheck.checker.outcome import ExploreOptions
    from txncheck.checker.run import build_model
    from txncheck.checker.vector.explore import explore
    from txncheck.spec import catalog
    os.makedirs(os.path.join(HERE, "profiles"), exist_ok=True)
    for name, spec, cfg, ov in (("twophase", "twophase", "tiny", {"rm": 5 if quick else 8}),
                                ("paxoscommit", "paxoscommit", "tiny" if quick else "ci", {}),
                                ("kafka", "kafka", "tiny" if quick else "ci", {})):
        model = build_model(catalog.load(spec), cfg, ov)
        p = Profiler(interval=0.001)
        p.start()
        explore(model, ExploreOptions(stop_on_violation=False))
        p.stop()
        with open(os.path.join(HERE, "profiles", f"{name}.txt"), "w") as fh:
            fh.write(p.output_text(unicode=False, color=False))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        main()
