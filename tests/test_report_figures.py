"""The report's figures: a table's state machine, as a graph derived from the rows
(reports/status_graph.py) and as a drawing (reports/state_diagram.py), and the states per BFS level
(reports/level_plot.py)."""
import re
import struct
import xml.etree.ElementTree as ET

import pytest

from txncheck.checker.symbolic.tables import verify_tables
from txncheck.reports.level_plot import plot_levels, render_levels, use_log
from txncheck.reports.state_diagram import draw_status_diagram, render_status_diagram
from txncheck.reports.status_graph import ANY, edge_rows, status_graph
from txncheck.spec.catalog import load
from txncheck.spec.domains import BOOL, EnumDomain, IdSet
from txncheck.spec.expr import Config, Exists, If, Not, Param, Var
from txncheck.spec.ground import ground
from txncheck.spec.kafka.doc import PENDING
from txncheck.spec.model import Always, ConfigParam, NamedConfig, Row, Spec, Table

TXN_STATES = {"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
              "PrepareEpochFence"}


@pytest.fixture(scope="module")
def twophase():
    return load("twophase")


@pytest.fixture(scope="module")
def kafka():
    return load("kafka")


def pairs(g, kind=None) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for a, b, k, d in g.edges(keys=True, data=True):
        if kind is None or d["kind"] == kind:
            out.setdefault((a, b), []).append(k)
    return out


def edge_groups(svg: str, pairs_drawn) -> dict[tuple[str, str], str]:
    """The SVG of each arrow (its gid: edge-FROM-TO, spaces as _)."""
    by_gid = {f"edge-{a}-{b}".replace(" ", "_"): (a, b) for a, b in pairs_drawn}
    found = {m.group(1): m.group(2) for m in re.finditer(r'<g id="(edge-[^"]+)">(.*?)</g>', svg, re.S)}
    assert set(found) == set(by_gid)
    return {by_gid[k]: v for k, v in found.items()}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


# ---- the graph ------------------------------------------------------------------------------------
def test_twophase_tm(twophase):
    g = status_graph(twophase, "TM")
    assert list(g.nodes) == ["init", "done"] and g.graph["initial"] == "init"
    assert pairs(g) == {("init", "done"): ["TM-02", "TM-03"]}
    assert g.graph["unchanged"] == ("TM-01",)     # TMRcvPrepared keeps tmState


def test_twophase_rm_any_state(twophase):
    """RMRcvCommitMsg / RMRcvAbortMsg do not look at rmState: one "any state" node, not four edges each."""
    g = status_graph(twophase, "RM")
    assert pairs(g) == {("working", "prepared"): ["RM-01"], ("working", "aborted"): ["RM-02"],
                        (ANY, "committed"): ["RM-03"], (ANY, "aborted"): ["RM-04"]}
    assert g.nodes[ANY]["kind"] == "any"
    assert set(g.nodes[ANY]["members"]) == {"working", "prepared", "committed", "aborted"}


def test_kafka_coordinator(kafka):
    g = status_graph(kafka, "coordinator")
    assert {n for n, d in g.nodes(data=True) if d["kind"] == "state"} == TXN_STATES
    assert g.graph["initial"] == "Empty" and g.graph["status"] == "tc_st"
    p = pairs(g)
    # the EndTxn transition: made durable by TL-04 (its trigger names EndTxn); the fence/timeout by TL-05
    assert "TL-04" in p[("Ongoing", "PrepareCommit")]
    assert "EndTxn" in g.edges["Ongoing", "PrepareCommit", "TL-04"]["trigger"]
    # an if-then-else on the status var pairs each from-state with its own branch, no cross product
    assert p[("PrepareCommit", "CompleteCommit")] == ["TL-06"] and p[("PrepareAbort", "CompleteAbort")] == ["TL-06"]
    assert ("PrepareCommit", "CompleteAbort") not in p and ("PrepareAbort", "CompleteCommit") not in p
    # TL-04's "*" from-state is refined by its guard: never from a Prepare or Complete state to PrepareCommit
    assert {a for (a, b) in p if b == "PrepareCommit"} == {"Ongoing"}
    assert p[("Empty", "Empty")] == ["TL-01"]    # a durable write of the same state is a self-loop
    assert "TC-22" in g.graph["unchanged"]       # without `pending`, the EndTxn handler keeps tc_st
    assert ("FLT-03", "faults") in g.graph["written_elsewhere"]
    assert not any("Dead" in pair for pair in p)  # never cached: no row enters or leaves it


def test_kafka_coordinator_pending(kafka):
    """With the pending-state var, the EndTxn handlers (TC-22 before TV2, TC-32 with it, and TC-122, TC-132:
    the same handlers for a late copy of the request) are on the Ongoing -> PrepareCommit edge, as the rows
    that prepare it."""
    g = status_graph(kafka, "coordinator", pending=PENDING)
    assert pairs(g, "pending")[("Ongoing", "PrepareCommit")] == ["TC-22", "TC-32", "TC-122", "TC-132"]
    assert pairs(g, "write")[("Ongoing", "PrepareCommit")] == ["TL-04", "TL-05"]
    assert set(pairs(g, "pending")[("Ongoing", "PrepareAbort")]) >= {"TC-07", "TC-22", "TC-32", "TC-40", "TC-41"}
    assert "TC-22" not in g.graph["unchanged"] and "TC-01" in g.graph["unchanged"]


def test_kafka_producer(kafka):
    g = status_graph(kafka, "producer")
    p = pairs(g)
    # PC-01's guard `pc_st = UNINITIALIZED ∨ (i = 0 ∧ pc_st = IDLE)`: shown as "*" by the listing
    assert p[("IDLE", "INITIALIZING")] == ["PC-01"] and p[("UNINITIALIZED", "INITIALIZING")] == ["PC-01"]
    assert p[(ANY, "FATAL_ERROR")] == ["PC-10", "PC-20"]
    assert p[("INITIALIZING", "READY")] == ["PC-02"]   # its other branch keeps pc_st: no edge
    assert p[("IN_TRANSACTION", "COMMITTING_TRANSACTION")] == ["PC-14"]


@pytest.mark.parametrize("spec_name,table,pending,protocol", [
    ("twophase", "TM", None, None), ("twophase", "RM", None, None),
    ("kafka", "coordinator", None, None), ("kafka", "coordinator", PENDING, None),
    ("kafka", "coordinator", PENDING, "kip98"), ("kafka", "coordinator", PENDING, "tv2"),
    ("kafka", "producer", None, None), ("kafka", "producer", None, "kip98"),
])
def test_every_row_is_accounted_for(spec_name, table, pending, protocol):
    """Each row of a table with a status var is on an edge, or listed as leaving the status unchanged,
    or (with a configuration) as switched off by it: exactly one of these."""
    spec = load(spec_name)
    env = spec.resolve_config("tiny", {"protocol": protocol}).env if protocol else None
    g = status_graph(spec, table, env=env, pending=pending)
    t = next(t for t in spec.tables if t.actor == table)
    on_edge = set(edge_rows(g))
    unchanged, disabled = set(g.graph["unchanged"]), set(g.graph["disabled"])
    for r in t.rows:
        assert (r.id in on_edge) + (r.id in unchanged) + (r.id in disabled) == 1, r.id
    for a, b in g.edges():
        assert g.nodes[a]["kind"] in ("state", "any") and g.nodes[b]["kind"] == "state"


@pytest.mark.parametrize("protocol", ["tv2", "kip98"])
def test_coordinator_edges_match_z3_conformance(kafka, protocol):
    """Under a configuration, the transitions the graph draws are those z3 finds some row taking
    (`txncheck tables --verify --check conformance`): the folding drops no real edge and, for this
    table, adds none."""
    cfg = kafka.resolve_config("tiny", {"protocol": protocol})
    g = status_graph(kafka, "coordinator", env=cfg.env)
    drawn = {(a, b) for a, b, d in g.edges(data=True) if d["kind"] == "write"}
    assert not any(a == ANY for a, _ in drawn)
    rep = verify_tables(ground(kafka, cfg), ("conformance",), ("coordinator",))
    note = next(n for n in rep.notes if "transitions taken" in n)
    taken = {tuple(x.split("->")) for x in note.split("taken: ")[1].split(", ")}
    assert drawn == taken
    if protocol == "kip98":
        assert {"TC-32", "TC-33", "TC-67"} <= set(g.graph["disabled"]) and ("Empty", "PrepareAbort") not in drawn
    else:
        assert ("Empty", "PrepareAbort") in drawn     # KIP-890: an empty abort bumps the epoch


def synthetic_spec() -> Spec:
    Client = IdSet("Client", size="clients", prefix="c")
    St = EnumDomain("St", ("a", "b", "c", "d", "e"))
    st = Var("st", St, index=(Client,), init=St.a)
    other = Var("other", St, index=(Client,), init=St.a)
    flag = Var("flag", BOOL, index=(Client,), init=False)
    c = Param("c", Client)
    rows = (
        Row("X-01", "T", "go", params=(c,), guard=(st[c] == St.a,), updates=(st[c].set(St.b),)),
        Row("X-02", "T", "anywhere but e", params=(c,), guard=(st[c] != St.e,), updates=(st[c].set(St.c),)),
        Row("X-03", "T", "maybe", params=(c,), guard=(flag[c],),
            updates=(st[c].set(If(st[c] == St.b, St.d, st[c])),)),
        Row("X-04", "T", "v2 only", params=(c,), guard=(Config("version") == 2, st[c] == St.d),
            updates=(st[c].set(St.a),)),
        Row("X-05", "T", "copy", params=(c,), guard=(st[c] == St.d,), updates=(st[c].set(other[c]),)),
        # the quantifier rebinds c: knowing flag[c] (the row's c) says nothing about its flag[c]
        Row("X-06", "T", "rebinding", params=(c,), guard=(st[c] == St.a, Exists(Client, lambda c: Not(flag[c]))),
            updates=(st[c].set(If(flag[c], St.e, st[c])),)),
        Row("X-07", "T", "tick", params=(c,), guard=(flag[c],), updates=(flag[c].set(False),)),
    )
    return Spec(name="synth", doc="fixture", vars=(st, other, flag), tables=(Table("T", rows, status="st"),),
                properties=(Always("P", st[0] != 4),),
                params=(ConfigParam("clients", 2, lo=1, hi=3), ConfigParam("version", 1, lo=1, hi=2)),
                configs=(NamedConfig("tiny", ()),))


def test_folding_on_a_fixture():
    spec = synthetic_spec()
    g = status_graph(spec, "T")
    assert pairs(g) == {("a", "b"): ["X-01"], ("any state except e", "c"): ["X-02"], ("b", "d"): ["X-03"],
                        ("d", "a"): ["X-04"], ("d", "other[c]"): ["X-05"], ("a", "e"): ["X-06"]}
    assert g.nodes["other[c]"]["kind"] == "other" and g.graph["unchanged"] == ("X-07",)
    assert set(g.nodes["any state except e"]["members"]) == {"a", "b", "c", "d"}
    g1 = status_graph(spec, "T", env=spec.resolve_config("tiny").env)    # version 1: X-04 is off
    assert ("d", "a") not in pairs(g1) and g1.graph["disabled"] == ("X-04",)
    d = render_status_diagram(g1, {"X-01", "X-05"}, "png")
    assert set(d.unfired) == {("any state except e", "c"), ("b", "d"), ("a", "e")}
    png_size(d.data)


def test_table_without_status_is_refused(kafka):
    with pytest.raises(ValueError, match="no status var"):
        status_graph(kafka, "network")
    with pytest.raises(ValueError, match="no table"):
        status_graph(kafka, "nope")


# ---- the drawing ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def coordinator_drawing(kafka):
    g = status_graph(kafka, "coordinator", pending=PENDING)
    # no PrepareX was made durable (TL-04, TL-05), though the EndTxn handler TC-32 fired
    fired = {"TL-01", "TL-03", "TL-06", "TC-03", "TC-32"}
    return g, fired, render_status_diagram(g, fired, "svg", title="coordinator")


def test_unfired_edges_are_dashed_and_grey(coordinator_drawing):
    g, fired, d = coordinator_drawing
    # an arrow is dashed exactly when none of its durable rows fired
    want = {pair for pair, rows in pairs(g, "write").items() if not set(rows) & fired}
    assert set(d.unfired) == want and ("Ongoing", "PrepareCommit") in want and ("Empty", "Ongoing") not in want
    for pair, arrow in d.arrows.items():
        dashed = arrow.get_linestyle() not in ("-", "solid")
        assert dashed == (pair in want), pair
    svg = d.data.decode()
    for (a, b), group in edge_groups(svg, d.arrows).items():
        assert ("stroke-dasharray" in group) == ((a, b) in want), (a, b)
    assert "no row of it ever fired" in svg


def test_no_coverage_means_no_dashes(kafka):
    d = render_status_diagram(status_graph(kafka, "producer"), None, "svg")
    groups = edge_groups(d.data.decode(), d.arrows)
    assert not d.unfired and not any("stroke-dasharray" in x for x in groups.values())
    assert "ever fired" not in d.data.decode()


@pytest.mark.parametrize("table,pending", [("coordinator", PENDING), ("coordinator", None), ("producer", None)])
def test_labels_do_not_overlap(kafka, table, pending):
    """Legibility: no two edge labels overlap, and no label covers a state's box."""
    g = status_graph(kafka, table, pending=pending)
    d = render_status_diagram(g, None, "png")
    fig = d.figure
    r = fig.canvas.get_renderer()
    boxes = [(pair, t.get_window_extent(r)) for pair, t in d.labels.items()]
    for i, (p1, b1) in enumerate(boxes):
        for p2, b2 in boxes[i + 1:]:
            assert not b1.overlaps(b2), (p1, p2)
    states = [p for p in fig.axes[0].patches if (p.get_gid() or "").startswith("state-")]
    assert len(states) == g.number_of_nodes() - sum(1 for _, k in g.nodes(data="kind") if k == "any")
    for pair, b in boxes:
        for s in states:
            assert not b.overlaps(s.get_window_extent(r)), (pair, s.get_gid())


def test_drawing_is_deterministic(tmp_path, twophase, kafka):
    g = status_graph(kafka, "producer")
    for fmt in ("png", "svg"):
        a = render_status_diagram(g, {"PC-01"}, fmt, title="producer").data
        b = render_status_diagram(status_graph(kafka, "producer"), {"PC-01"}, fmt, title="producer").data
        assert a == b
    svg = render_status_diagram(g, None, "svg").data.decode()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg
    ET.fromstring(svg)
    path = tmp_path / "sub" / "rm.png"
    d = draw_status_diagram(status_graph(twophase, "RM"), {"RM-01"}, str(path), title="twophase RM")
    assert path.read_bytes() == d.data and b"Software" not in d.data
    w, h = png_size(d.data)
    assert 400 < w < 1500 and 200 < h < 1500
    with pytest.raises(ValueError):
        render_status_diagram(g, None, "pdf")


# ---- the level plot -------------------------------------------------------------------------------
TV2 = [1, 2, 3, 7, 10, 16, 21, 26, 30, 36, 52, 90, 175, 325, 584, 979, 1503, 2081, 2593, 2965, 3157]
KIP98 = [1, 2, 3, 7, 10, 16, 20, 25, 28, 30, 40, 61, 97, 155, 245, 390, 636, 1045]


def test_level_plot_png_and_svg(tmp_path):
    series = [("tiny tv2", TV2), ("tiny kip98", KIP98)]
    png = tmp_path / "levels.png"
    plot_levels(series, str(png), title="kafka tiny")
    w, h = png_size(png.read_bytes())
    assert (w, h) == (750, 400)
    svg = tmp_path / "levels.svg"
    plot_levels(series, str(svg), fmt="svg", title="kafka tiny")
    text = svg.read_text()
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    assert f"tiny tv2: {sum(TV2):,} states, depth {len(TV2) - 1}" in text
    assert "BFS level" in text and "(log scale)" in text
    assert render_levels(series, "png") == render_levels(series, "png")
    assert render_levels(series, "svg") == render_levels(series, "svg")
    with pytest.raises(ValueError):
        render_levels(series, "gif")


def test_level_plot_scale():
    assert use_log([("a", TV2)]) and not use_log([("a", [1, 3, 6, 9, 12, 7, 3])])
    lin = render_levels([("twophase", [1, 3, 6, 9, 12, 7, 3])], "svg").decode()
    assert "(log scale)" not in lin
    # an empty level list or no runs at all still gives a picture
    png_size(render_levels([], "png"))
    png_size(render_levels([("empty", [])], "png"))
    png_size(render_levels([("zeros", [0, 0])], "png"))
