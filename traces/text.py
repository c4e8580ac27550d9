"""A trace's text with what its model adds (traces/render.py renders a trace without one).

- the story: one line per step in sequence-chart terms (`traces/story.py`); a step with no lane
  (a spec that declares none) is placed on its row's actor;
- the state guide: the spec's vars grouped by the actor whose rows write them, every cell's initial
  value, and the cells no action of the configuration writes (`StateGuide`).

The groups come from the spec alone. A ghost var (`Var.ghost`) is history, in its own group; a var a
channel's message count reads (`Spec.channels`) is a message in flight; any other var belongs to the
tables whose rows update it, not counting fault rows (tagged crash, zombie, timeout or network), so
a var that two actors write (a request the producer sends and the coordinator consumes) is in the
group "producer + coordinator"; a var only fault rows write (a fault budget) is the environment's.
The legend abbreviates a var prefix (`pc_` up to the first underscore) shared by two or more vars of
the group that holds most of the prefix's vars as `pc_*`; other vars are named in full.
"""
from __future__ import annotations

from collections import Counter, OrderedDict

from txncheck.spec.errors import TxncheckError
from txncheck.spec.evaluate import dyn_cells
from txncheck.spec.expr import Member, Op, Quant, Read, Var
from txncheck.spec.ground_ir import GCell, GroundModel
from txncheck.spec.model import Spec
from txncheck.spec.state_text import value_label

from .render import StateGuide, VarGroup, render_trace_text
from .schema import Trace
from .story import FAULT_TAGS, build_story, step_lines

GHOST = "history (ghost)"
MESSAGES = "messages in flight"
ENVIRONMENT = "environment (fault budgets and fault state)"
UNWRITTEN = "written by no row"


def trace_text(trace: Trace, model: GroundModel | None = None) -> str:
    """The text of `trace` with its story and state guide; without them if its model cannot be built
    (a spec, variant or config that is not there: `txncheck replay` says which)."""
    if model is None:
        from .replay import model_for
        try:
            model = model_for(trace)
        except TxncheckError:
            return render_trace_text(trace)
    return render_trace_text(trace, story_lines(model, trace), state_guide(model))


def story_lines(model: GroundModel, trace: Trace) -> dict[int, str] | None:
    """`{step: line}` from the trace's story, or None if it cannot be built (a step that is not an
    action of the model; the text then names each step's actor and trigger)."""
    try:
        story = build_story(model, trace)
        lines = step_lines(story)
    except TxncheckError:  # a step no action of the model takes: the text names actors and triggers instead
        return None
    out = {}
    for st in story.steps:
        line = lines.get(st.index, "")
        if st.lane is None:  # no lane: the row's actor, then what step_lines says (its trigger, messages)
            line = f"{trace.steps[st.index].actor}  {line}".strip()
        out[st.index] = line
    return out


_GUIDES: OrderedDict = OrderedDict()  # id(model) -> (model, guide), the last few (models are cached too)


def state_guide(model: GroundModel) -> StateGuide:
    hit = _GUIDES.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    lay = model.layout
    written: set[int] = set()
    for a in model.actions:
        for target, _ in a.updates:
            written.update((target.pos,) if isinstance(target, GCell) else dyn_cells(target))
    initial = {}
    for pos, value in enumerate(model.init):
        initial[lay.cell_names[pos]] = value_label(lay.vars[lay.cell_var[pos]].var.domain, value, model.env)
    guide = StateGuide(var_groups(model.spec), initial,
                       frozenset(lay.cell_names[p] for p in range(lay.width) if p not in written))
    _GUIDES[id(model)] = (model, guide)
    while len(_GUIDES) > 8:
        _GUIDES.popitem(last=False)
    return guide


def var_groups(spec: Spec) -> tuple[VarGroup, ...]:
    """The spec's vars by the actor(s) whose rows write them, in the order of their first var."""
    tables = [t.actor for t in spec.tables]
    writers: dict[str, set] = {v.name: set() for v in spec.vars}
    faulty: dict[str, set] = {v.name: set() for v in spec.vars}
    for t in spec.tables:
        for r in t.rows:
            fault = bool(set(r.tags) & set(FAULT_TAGS))
            for u in r.updates:
                (faulty if fault else writers).setdefault(u.target.var.name, set()).add(t.actor)
    messages = set().union(*(_vars_in(ch.copies) for ch in spec.channels)) if spec.channels else set()

    def title(v: Var) -> str:
        if v.ghost:
            return GHOST
        if v.name in messages:
            return MESSAGES
        if writers[v.name]:
            return " + ".join(a for a in tables if a in writers[v.name])
        return ENVIRONMENT if faulty[v.name] else UNWRITTEN

    members: dict[str, list[str]] = {}
    for v in spec.vars:
        members.setdefault(title(v), []).append(v.name)
    # a prefix is abbreviated in the group that holds most of its vars, a protocol group before the ghost history
    # (the first such group on a tie)
    order = list(members)
    owner = {}
    counts: dict[str, Counter] = {}
    for g, names in members.items():
        for n in names:
            if _prefix(n):
                counts.setdefault(_prefix(n), Counter())[g] += 1
    for pre, c in counts.items():
        owner[pre] = max(c, key=lambda g: (g != GHOST, c[g], -order.index(g)))
    groups = []
    for g, names in members.items():
        legend: list[str] = []
        for n in names:
            pre = _prefix(n)
            shared = pre and owner.get(pre) == g and sum(1 for m in names if _prefix(m) == pre) > 1
            token = f"{pre}*" if shared else n
            if token not in legend:
                legend.append(token)
        groups.append(VarGroup(g, tuple(names), tuple(legend)))
    return tuple(groups)


def _prefix(name: str) -> str:
    """`pc_seq` -> `pc_`; a name without an inner underscore has none."""
    k = name.find("_")
    return name[:k + 1] if 0 < k < len(name) - 1 else ""


def _vars_in(e) -> set[str]:
    out: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            out.add(x.name)
        elif isinstance(x, Read):
            out.add(x.var.name)
            stack.extend(x.index)
        elif isinstance(x, Op):
            stack.extend(x.args)
        elif isinstance(x, Quant):
            stack.append(x.body)
        elif isinstance(x, Member):
            stack.extend((x.subset, x.elem))
    return out
