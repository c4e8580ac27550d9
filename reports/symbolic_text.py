"""The text `txncheck bmc` prints (bmc, k-induction, PDR), rendered from its result
(`checker.symbolic.bmc.SymbolicResult`): one line per property in the words of its status, the
strengthening invariants found not to hold, the lemmas, the solver times, and where each trace was written."""
from __future__ import annotations

from txncheck.checker.symbolic.status import CTI, PROVED, UNKNOWN, VIOLATED


def property_line(res, p) -> str:
    """One property of `res` (a SymbolicResult), as its status says it."""
    if p.status == VIOLATED:
        return (f"{p.name}: VIOLATED at depth {p.depth}" + (f" ({p.note})" if p.note else "") + ": "
                + "; ".join(p.labels))
    if p.status == PROVED and res.engine == "pdr":
        return f"{p.name}: proved by PDR ({p.note})"
    if p.status == PROVED and res.engine == "bmc":
        return f"{p.name}: proved for every depth (1-inductive with the spec's strengthening invariants)"
    if p.status == PROVED:
        return f"{p.name}: proved by {p.depth}-induction"
    if p.status == CTI:
        return (f"{p.name}: not proved; counterexample to {p.depth}-induction: "
                + "; ".join(p.labels) + (f" ({p.note})" if p.note else ""))
    if p.status == UNKNOWN:
        return f"{p.name}: unknown at depth {p.depth} ({p.note})"
    if res.from_depth:  # holds-to-depth, over the depths searched
        return f"{p.name}: no counterexample at depths {res.from_depth}..{p.depth}"
    return f"{p.name}: no counterexample up to depth {p.depth}"


def lemmas_text(ls) -> str:
    """The proved lemmas of a run (a `lemmas.LemmaSet`): how many, mined from what, at what cost."""
    out = (f"lemmas: {len(ls.lemmas)} proved inductive of {ls.candidates} candidates mined from "
           f"{ls.samples} {ls.source} states ({ls.rounds} Houdini rounds); sampling "
           f"{ls.sample_s:.2f} s, mining {ls.mine_s:.2f} s, Houdini {ls.houdini_s:.2f} s")
    if ls.properties_proved or ls.properties_dropped:
        out += (f"\n  1-inductive with the lemmas: {', '.join(ls.properties_proved) or 'none'}"
                f"; not: {', '.join(ls.properties_dropped) or 'none'}")
    return out


def summary(res) -> str:
    """The run's summary: its properties, then what else it learnt and what it cost."""
    out = [property_line(res, p) for p in res.properties]
    for name, d in res.refuted_invariants:
        out.append(f"strengthening invariant {name} is not an invariant of the spec (violated at depth {d}); "
                   "it was not used")
    if res.lemmas is not None:
        out.append(lemmas_text(res.lemmas))
    out.append(f"{res.engine}: {len(res.queries)} solver queries, solver {res.solver_s:.3f} s, "
               f"encoding {res.encode_s:.3f} s, total {res.wall_s:.3f} s"
               + (f" (+ lemmas {res.lemmas.total_s:.3f} s)" if res.lemmas is not None else ""))
    return "\n".join(out)


def written(res, paths: dict) -> str:
    """Where the run's files went (`paths`: property name, or a label such as "(viewer index)", -> path):
    each trace with the command that replays it."""
    status = {p.name: p.status for p in res.properties}
    out = []
    for name, path in paths.items():
        if name not in status:
            out.append(f"viewer: {path}")
            continue
        what = "counterexample to induction" if status[name] == CTI else "trace"
        out.append(f"{what} of {name}: {path} (txncheck replay {path})")
    return "\n".join(out)


def symbolic_text(res, paths: dict | None = None) -> str:
    """What `txncheck bmc` prints without --json: the summary, then the files written under --out."""
    files = written(res, paths or {})
    return summary(res) + ("\n" + files if files else "")
