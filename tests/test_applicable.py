"""Rows a configuration switches off (checker/applicable.py): listed as not applicable, apart from the rows
the configuration lets fire and the search never fired; sound on every shipped configuration; and how the
CLI, the gate, the report and the state diagram tell the two apart."""
import json
import os

import pytest

from txncheck.checker.applicable import inapplicable_rows
from txncheck.checker.outcome import ExploreOptions
from txncheck.checker.run import build_model, check_spec
from txncheck.reports.gate import EntryOutcome
from txncheck.reports.gate_baseline import drift
from txncheck.reports.gatefile import GateEntry
from txncheck.reports.report_model import build_report
from txncheck.reports.state_diagram import render_status_diagram
from txncheck.reports.status_graph import status_graph
from txncheck.spec import catalog
from txncheck.spec.domains import BOOL, EnumDomain, IntRange
from txncheck.spec.expr import Config, Var
from txncheck.spec.model import Always, ConfigParam, NamedConfig, Row, Spec, Table

LATE = [f"TC-{n}" for n in (101, 102, 103, 104, 105, 106, 107, 110, 111, 112, 113, 120, 121, 122, 123, 124, 125,
                            130, 131, 132, 133, 134, 135, 136, 137, 190, 191, 192, 193, 194, 195, 196)] + ["NET-20", "NET-21"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = sum(len(t.rows) for t in catalog.load("kafka").tables)
BUDGETED = ["NET-01", "NET-02", "NET-10", "PL-24", "PL-25", "PL-26", "PL-27", "PL-30"]


def feature_spec() -> Spec:
    """A budgeted fault (F-01), a row that waits on what only the fault sets (F-02), and a row whose guard no
    reachable state meets although each of its cells may hold the values it asks for (F-03: x < y < x)."""
    St = EnumDomain("St", ("idle", "busy", "done"))
    st = Var("st", St, init=St.idle)
    used = Var("used", IntRange("Used", 0, "faults"), init=0)
    hurt = Var("hurt", BOOL, init=False)
    x = Var("x", IntRange("X", 0, 2), init=0)
    y = Var("y", IntRange("Y", 0, 2), init=0)
    rows = (
        Row("M-01", "T", "start", guard=(st == St.idle,), updates=(st.set(St.busy), x.set(1), y.set(2))),
        Row("M-02", "T", "finish", guard=(st == St.busy,), updates=(st.set(St.done),)),
        Row("F-01", "T", "fault", guard=(used < Config("faults"), st == St.busy), updates=(hurt.set(True),
                                                                                            used.set(used + 1))),
        Row("F-02", "T", "recover", guard=(hurt, st == St.busy), updates=(hurt.set(False), st.set(St.idle))),
        Row("F-03", "T", "impossible", guard=(st == St.done, x < y, y < x), updates=(st.set(St.busy),)),
    )
    return Spec(name="feature", doc="fixture", vars=(st, used, hurt, x, y), tables=(Table("T", rows, status="st"),),
                properties=(Always("P", x <= y),), params=(ConfigParam("faults", 0, lo=0, hi=2),),
                configs=(NamedConfig("off", ()), NamedConfig("on", (("faults", 1),))))


# ---- the criterion --------------------------------------------------------------------------------------
def test_a_budget_of_zero_and_what_only_it_enables_are_not_applicable():
    spec = feature_spec()
    assert inapplicable_rows(build_model(spec, "off")) == ("F-01", "F-02")
    assert inapplicable_rows(build_model(spec, "on")) == ()
    r = check_spec(spec, "off", engine="scalar")
    # F-03's cells may each hold what it asks for: only the search shows it never fires
    assert r.inapplicable_rows == ("F-01", "F-02") and r.unfired_rows == ("F-03",)
    assert json.loads(json.dumps(r.to_json()))["inapplicable_rows"] == ["F-01", "F-02"]
    on = check_spec(spec, "on", engine="scalar")
    assert on.inapplicable_rows == () and on.unfired_rows == ("F-03",) and {"F-01", "F-02"} <= set(on.fired_rows)


def test_kafka_tiny_rows_switched_off_by_its_budgets():
    off = inapplicable_rows(build_model("kafka", "tiny"))
    assert set(LATE + BUDGETED) <= set(off)
    late = inapplicable_rows(build_model("kafka", "tiny", {"late_requests": 1}))
    assert {"NET-20", "TC-101", "TC-103", "TC-130"}.isdisjoint(late)  # the rows test_kafka_late_requests fires
    assert {"TC-110", "TC-122"} <= set(late)  # TV1's: protocol tv2 switches them off
    verify = inapplicable_rows(build_model("kafka", "tiny", {"late_requests": 1, "protocol": "verify"}))
    assert {"NET-20", "TC-101", "TC-110", "TC-113", "TC-120", "TC-122", "TC-123"}.isdisjoint(verify)
    assert set(BUDGETED) <= set(late)
    dups = inapplicable_rows(build_model("kafka", "tiny", {"marker_dups": 1}))
    assert {"NET-10", "PL-24", "PL-25", "PL-26", "PL-27"}.isdisjoint(dups) and set(LATE) <= set(dups)


def test_kafka_protocol_and_client_switch_rows_off_but_not_the_models_own_questions():
    tv2 = inapplicable_rows(build_model("kafka", "tiny"))
    # under TV2 the Java client never bumps the epoch itself (INITBUMP) nor sends AddPartitionsToTxn
    assert {"TC-04", "TC-05", "TC-06", "TC-92", "PC-05"} <= set(tv2)
    assert {"TC-04", "PC-05"}.isdisjoint(inapplicable_rows(build_model("kafka", "tiny", {"protocol": "verify"})))
    # no row answers ABORTABLE (PC-19) and no row enters Dead (TC-90): questions about the model, kept in view
    assert {"PC-19", "TC-90", "TC-95", "TC-97"}.isdisjoint(tv2)


def test_kafka_tiny_result_lists_only_applicable_rows_as_never_fired():
    r = check_spec("kafka", "tiny", engine="vector")
    fired = set(r.fired_rows)
    assert set(r.inapplicable_rows).isdisjoint(fired) and set(r.unfired_rows).isdisjoint(fired)
    assert set(r.inapplicable_rows).isdisjoint(r.unfired_rows)
    assert len(fired) + len(r.unfired_rows) + len(r.inapplicable_rows) == len(r.coverage) == ROWS
    assert set(LATE + BUDGETED) <= set(r.inapplicable_rows)
    assert "PC-19" in r.unfired_rows and len(r.unfired_rows) < 30  # 94 rows fire 0 times, most switched off


# ---- soundness: no row listed as not applicable ever fires --------------------------------------------------
def _runs():
    out = []
    others = [os.path.join(ROOT, "examples", "ewd840.py")] + [f"models.{m}:SPEC" for m in (
        "fair_mutex", "lamps", "ping_pong", "commit_liveness")]
    for name in list(catalog.names()) + others:
        spec = catalog.load(name) if name in catalog.names() else build_model(name).spec
        for cfg in spec.configs:
            out.append((name, cfg.name, ()))
        for v in spec.variants:
            run = (name, spec.configs[0].name, (("variant", v.name),))
            # Kafka's variants add about 80 s on a fast machine, several minutes on CI's: make test-heavy
            out.append(pytest.param(*run, marks=pytest.mark.heavy) if name == "kafka" else run)
    kafka_settings = [{"protocol": "kip98"}, {"protocol": "verify"}, {"client": "reference"},
                      {"late_requests": 1, "delays": 0, "timeouts": 0}, {"marker_dups": 1, "delays": 0, "timeouts": 0},
                      {"expiries": 1, "losses": 1}, {"ctp": 1}, {"duplicates": 1, "zombies": 1, "app_aborts": 1},
                      {"protocol": "verify", "late_requests": 1, "failovers": 0}]
    out += [("kafka", "tiny", tuple(sorted(s.items()))) for s in kafka_settings]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name,config,settings", _runs(), ids=lambda x: "-".join(f"{k}={v}" for k, v in x)
                         if isinstance(x, tuple) else os.path.basename(str(x)))
def test_no_row_listed_as_not_applicable_ever_fires(name, config, settings):
    settings = dict(settings)
    variant = settings.pop("variant", None)
    # a bound keeps the heavy configs in test time: a partial search can only fire fewer rows
    r = check_spec(name, config, settings, variant, engine="vector",
                   options=ExploreOptions(stop_on_violation=False, max_states=300_000))
    assert r.stats["distinct"] > 0
    assert not set(r.inapplicable_rows) & set(r.fired_rows), (name, config, settings, variant)
    assert r.inapplicable_rows == inapplicable_rows(build_model(name, config, settings, variant))


def test_sound_under_symmetry():
    r = check_spec("twophase", "ci", engine="vector", options=ExploreOptions(symmetry=True))
    assert r.inapplicable_rows == () and not r.unfired_rows


# ---- what users see ----------------------------------------------------------------------------------------
def test_cli_counts_applicable_rows_and_says_how_many_are_off(txncheck_main, tmp_path):
    code, out, err = txncheck_main("check", "kafka", "--config", "tiny", "--out", str(tmp_path / "k"))
    assert code == 0, err
    r = json.loads((tmp_path / "k" / "result.json").read_text())
    off, never = r["inapplicable_rows"], r["unfired_rows"]
    fired = sum(1 for c in r["coverage"] if c["fired"])
    assert f"  coverage: {fired}/{ROWS - len(off)} applicable rows fired; never fired: {', '.join(never)}\n" in out
    assert f"\n  {len(off)} rows not applicable to this config (cannot fire under it; inapplicable_rows in " \
           "result.json)\n" in out
    assert not set(never) & set(off) and "NET-20" not in out
    code, out, err = txncheck_main("check", "twophase", "--config", "tiny", "--out", str(tmp_path / "t"))
    assert code == 0 and "  coverage: 7/7 rows fired\n" in out and "not applicable" not in out


def test_gate_says_a_lost_row_is_now_switched_off():
    entry = GateEntry(name="e", spec="feature", expect="pass", line=1)
    o = EntryOutcome(entry, "out/e", "pass", 3, 2, 0.1, fired_rows=("M-01", "M-02"), inapplicable_rows=("F-01",))
    base = {"distinct": 3, "depth": 2, "witnessed": [], "fired_rows": ["F-01", "M-01", "M-02", "M-03"]}
    exps, _ = drift(o, base)
    rows = next(e for e in exps if e.name == "drift rows")
    assert not rows.ok
    assert ("baseline drift: row F-01 fired in the baseline and no longer fires (it is now not applicable to this "
            "config: its guard cannot hold): a behaviour of the model is lost") in rows.message
    assert ("baseline drift: row M-03 fired in the baseline and no longer fires: a behaviour of the model is lost"
            in rows.message)


def _run(key, result, variant=None):
    return {"key": key, "config": key, "variant": variant, "settings": {}, "pages": {}, "result": result.to_json()}


def test_report_counts_only_applicable_rows_as_never_fired():
    spec = feature_spec()
    runs = [_run("off", check_spec(spec, "off", engine="scalar"))]
    d = build_report(spec, runs, {}, "scalar")
    assert d["never_fired"] == ["F-03"] and d["not_applicable_rows"] == ["F-01", "F-02"]
    item = next(i for i in d["look_first"] if i["kind"] == "unfired")
    assert item["text"] == ("1 row never fires in any checked configuration that lets them fire: F-03 (2 rows not "
                            "applicable to any checked configuration left out)")
    row = {r["id"]: r for t in d["tables"] for r in t["rows"]}
    assert row["F-01"]["not_applicable"] == ["off"] and row["M-01"]["not_applicable"] == []
    both = build_report(spec, runs + [_run("on", check_spec(spec, "on", engine="scalar"))], {}, "scalar")
    assert both["never_fired"] == ["F-03"] and both["not_applicable_rows"] == []
    # a result without inapplicable_rows (an older txncheck's): every row counts as applicable
    old = dict(runs[0], result={k: v for k, v in runs[0]["result"].items() if k != "inapplicable_rows"})
    assert build_report(spec, [old], {}, "scalar")["never_fired"] == ["F-01", "F-02", "F-03"]


def test_state_diagram_draws_switched_off_rows_apart():
    spec = feature_spec()
    r = check_spec(spec, "off", engine="scalar")
    g = status_graph(spec, "T")
    d = render_status_diagram(g, set(r.fired_rows), "svg", inapplicable=set(r.inapplicable_rows))
    assert d.inapplicable == (("busy", "idle"),) and d.unfired == (("done", "busy"),)
    assert d.arrows[d.inapplicable[0]].get_linestyle() != d.arrows[d.unfired[0]].get_linestyle()
    assert b"not applicable to any checked configuration" in d.data
    # without the rows switched off, the figure is what it was: no third legend entry
    plain = render_status_diagram(g, set(r.fired_rows), "svg")
    assert plain.inapplicable == () and b"not applicable" not in plain.data


def test_gate_cache_carries_the_rows_and_misses_a_record_without_them(tmp_path):
    from txncheck.reports import gate_cache
    entry = GateEntry(name="e", spec="twophase", expect="pass", line=1)
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text("{}")
    o = EntryOutcome(entry, str(out), "pass", 3, 2, 0.1, fired_rows=("M-01",), inapplicable_rows=("F-01",))
    cache = str(tmp_path / "cache")
    gate_cache.store(cache, o, "k")
    assert gate_cache.lookup(cache, entry, "k", str(out)).inapplicable_rows == ("F-01",)
    path = tmp_path / "cache" / "e.json"
    record = json.loads(path.read_text())
    del record["outcome"]["inapplicable_rows"]  # a record of an earlier txncheck: searched again
    path.write_text(json.dumps(record))
    assert gate_cache.lookup(cache, entry, "k", str(out)) is None
