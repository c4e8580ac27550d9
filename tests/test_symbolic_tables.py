"""z3 table checks: a clean request/response server spec, and planted faults (each a variant of it)
that must be found with the right rows named and a witness state."""
import json

import pytest

import z3  # noqa: E402,F401  (a required dependency: its absence must fail)

from txncheck.spec.listing import render_text, table_lines  # noqa: E402
from txncheck.checker.symbolic.tables import verify_tables  # noqa: E402
from txncheck.spec.domains import BOOL, EnumDomain, IdSet, IntRange  # noqa: E402
from txncheck.spec.errors import SpecError  # noqa: E402
from txncheck.spec.expr import Config, Param, Var  # noqa: E402
from txncheck.spec.ground import ground  # noqa: E402
from txncheck.spec.model import (AddRow, Always, ConfigParam, Conformance, DropRow, NamedConfig,  # noqa: E402
                                 ReplaceGuard, ReplaceUpdate, Row, Spec, Table, Variant)

# ---- fixture: one server per client id, a request bit per client, a small counter ---------------
Client = IdSet("Client", size="clients", prefix="c")
St = EnumDomain("St", ("idle", "busy", "done"))
Count = IntRange("Count", 0, 2)
Slot = IdSet("Slot", size=2, prefix="s")

st = Var("st", St, index=(Client,), init=St.idle)
req = Var("req", BOOL, index=(Client,), init=False, doc="a request from the client is in flight")
n = Var("n", Count, init=0)
slot = Var("slot", BOOL, index=(Slot,), init=False)
c = Param("c", Client)

SERVER = Table("Server", status="st", doc="answers each client's request", rows=(
    Row("S-01", "Server", "Handle", params=(c,), guard=(req[c], st[c] == St.idle),
        updates=(st[c].set(St.busy), req[c].set(False)), ref="accept"),
    Row("S-02", "Server", "Handle", params=(c,), guard=(req[c], st[c] == St.busy),
        updates=(req[c].set(False),), ref="reject: busy"),
    Row("S-03", "Server", "Handle", params=(c,), guard=(req[c], st[c] == St.done),
        updates=(req[c].set(False),), ref="reject: done"),
    Row("S-04", "Server", "Finish", params=(c,), guard=(st[c] == St.busy,),
        updates=(st[c].set(St.done),), ref="work completes"),
    Row("S-05", "Server", "Reset", params=(c,), guard=(st[c] == St.done,),
        updates=(st[c].set(St.idle),), ref="ready again"),
    Row("S-06", "Server", "Tick", guard=(n < 2,), updates=(n.set(n + 1),), ref="count"),
    Row("S-07", "Server", "Mark", guard=(n < 2,), updates=(slot[n].set(True),), ref="mark a slot"),
), conformance=(
    Conformance(allowed=(("idle", "busy"), ("busy", "done"), ("done", "idle")), ref="server.md v1",
                when=Config("version") == 1),
    Conformance(allowed=(("idle", "busy"), ("busy", "done"), ("done", "idle"), ("busy", "idle")),
                unused=(("busy", "idle"),), ref="server.md v2", when=Config("version") == 2,
                doc="v2 allows cancelling; the model never cancels"),
))

CLIENT = Table("Client", rows=(
    Row("C-01", "Client", "Send", params=(c,), guard=(~req[c],), updates=(req[c].set(True),)),
))

_noop = Always("Trivial", n <= 2)  # trivially true (an enum against a bare 7 is a domain error now)

FIXTURE = Spec(
    name="server", doc="request/response fixture", vars=(st, req, n, slot), tables=(SERVER, CLIENT),
    properties=(_noop,),
    params=(ConfigParam("clients", 2, lo=1, hi=4), ConfigParam("version", 1, lo=1, hi=2)),
    configs=(NamedConfig("tiny", (("clients", 2),)),),
    variants=(
        Variant("overlap", "S-02 answers every non-idle state, overlapping S-03", breaks=(),
                edits=(ReplaceGuard("S-02", (req[c], st[c] != St.idle)),)),
        Variant("missing-row", "no row answers a request in state done", breaks=(),
                edits=(DropRow("S-03"),)),
        Variant("bad-transition", "a cancel row v1 does not allow", breaks=(),
                edits=(AddRow("Server", Row("S-08", "Server", "Cancel", params=(c,),
                                            guard=(st[c] == St.busy,), updates=(st[c].set(St.idle),))),)),
        Variant("unused-transition", "nobody resets: done -> idle is allowed but unused", breaks=(),
                edits=(DropRow("S-05"),)),
        Variant("out-of-domain", "the counter may pass its bound", breaks=(),
                edits=(ReplaceGuard("S-06", (n <= 2,)),)),
        Variant("bad-index", "a slot index may leave the array", breaks=(),
                edits=(ReplaceGuard("S-07", (n <= 2,)),)),
        Variant("bad-value", "writes 2 into a boolean cell", breaks=(),
                edits=(ReplaceUpdate("S-07", "slot", n + 1),)),
    ),
)


def check(variant=None, **overrides):
    spec = FIXTURE.with_variant(variant)
    return verify_tables(ground(spec, spec.resolve_config("tiny", overrides)))


def by_check(report, name):
    return [f for f in report.findings if f.check == name]


def test_clean_fixture_has_no_finding():
    r = check()
    assert r.ok, r.text()
    assert r.checked["determinism"] > 0 and r.checked["completeness"] > 0 and r.checked["conformance"] > 0
    # S-06 / S-07 / C-01 have no common conjunct with another row: one-row triggers are complete
    assert not any("Send" in n for n in r.notes)


def test_overlapping_guard_is_nondeterminism():
    r = check("overlap")
    fs = by_check(r, "determinism")
    assert [f.rows for f in fs] == [("S-02", "S-03")]
    f = fs[0]
    assert f.trigger == "Handle" and f.table == "Server"
    # the witness enables both rows for one client
    assert "done" in f.witness.values() and True in f.witness.values()
    assert json.loads(json.dumps(f.to_json()))["rows"] == ["S-02", "S-03"]
    assert "S-02" in f.text() and "witness" in f.text()


def test_declared_nondeterminism_is_not_reported():
    from dataclasses import replace
    spec = FIXTURE.with_variant("overlap")
    tables = tuple(replace(t, nondeterministic=("Handle",)) if t.actor == "Server" else t for t in spec.tables)
    spec = replace(spec, tables=tables)
    r = verify_tables(ground(spec, spec.resolve_config("tiny")))
    assert not by_check(r, "determinism")


def test_missing_handler_row_is_incompleteness():
    r = check("missing-row")
    fs = by_check(r, "completeness")
    assert len(fs) == 2  # one per client binding
    assert all(f.rows == ("S-01", "S-02") and f.trigger == "Handle" for f in fs)
    w = fs[0].witness
    assert w["req[c1]"] is True and w["st[c1]"] == "done"


def test_transition_not_allowed_is_nonconformance():
    r = check("bad-transition")
    fs = by_check(r, "conformance")
    assert len(fs) == 1 and fs[0].rows == ("S-08",)
    assert "busy to idle" in fs[0].message and "server.md v1" in fs[0].message
    assert fs[0].witness["st[c1]"] == "busy" or fs[0].witness.get("st[c2]") == "busy"


def test_conformance_follows_the_configured_version():
    # v2 allows busy -> idle (listed as deliberately unused): the cancel row is conformant there,
    # but then the pair is used although declared unused
    r = check("bad-transition", version=2)
    fs = by_check(r, "conformance")
    assert len(fs) == 1 and fs[0].rows == ("S-08",) and "deliberately unused" in fs[0].message
    assert check(version=2).ok


def test_allowed_transition_unused_is_reported():
    r = check("unused-transition")
    fs = by_check(r, "conformance")
    assert len(fs) == 1 and fs[0].rows == () and "done -> idle" in fs[0].message


def test_out_of_domain_assignment():
    r = check("out-of-domain")
    fs = by_check(r, "type")
    assert [f.rows for f in fs] == [("S-06",)]
    assert "outside 0..2" in fs[0].message and fs[0].witness["n"] == 2


def test_index_outside_array():
    r = check("bad-index")
    fs = by_check(r, "type")
    assert [f.rows for f in fs] == [("S-07",)]
    assert "computed index" in fs[0].message and fs[0].witness["n"] == 2


def test_integer_into_boolean_cell():
    r = check("bad-value")
    fs = by_check(r, "type")
    assert [f.rows for f in fs] == [("S-07",)] and "outside 0..1" in fs[0].message


def test_short_circuit_guard_is_not_an_index_error():
    from dataclasses import replace
    from txncheck.spec.expr import And
    spec = FIXTURE.with_variant("bad-index")
    # n < 2 guards the read slot[n]: the interpreter never evaluates it with n = 2
    spec = spec.with_variant(None)
    rows = SERVER.rows + (Row("S-09", "Server", "Peek", guard=(And(n < 2, slot[n]),), ref="peek"),)
    spec = replace(FIXTURE, tables=(replace(SERVER, rows=rows), CLIENT))
    r = verify_tables(ground(spec, spec.resolve_config("tiny")))
    assert not by_check(r, "type"), r.text()
    rows = SERVER.rows + (Row("S-09", "Server", "Peek", guard=(slot[n],), ref="peek"),)
    spec = replace(FIXTURE, tables=(replace(SERVER, rows=rows), CLIENT))
    r = verify_tables(ground(spec, spec.resolve_config("tiny")))
    assert [f.rows for f in by_check(r, "type")] == [("S-09",)]


def test_conformance_label_typo_is_a_spec_error():
    from dataclasses import replace
    bad = replace(SERVER, conformance=(Conformance(allowed=(("idle", "bussy"),)),))
    spec = replace(FIXTURE, tables=(bad, CLIENT))
    with pytest.raises(SpecError, match="bussy"):
        verify_tables(ground(spec, spec.resolve_config("tiny")))


def test_listing_shows_from_and_to_states():
    lines = table_lines(FIXTURE)
    s01 = next(ln for ln in lines if ln.id == "S-01")
    assert (s01.from_state, s01.trigger, s01.to_state) == ("idle", "Handle", "busy")
    assert "S-05" in render_text(lines)


def test_twophase_tables_are_clean():
    from txncheck.spec.twophase import SPEC
    r = verify_tables(ground(SPEC, SPEC.resolve_config("tiny")))
    assert r.ok, r.text()


def _kafka():
    from txncheck.spec.kafka import SPEC
    return SPEC


@pytest.mark.parametrize("config", ["tiny", "eos", "ci", "nightly", "inflight"])
def test_kafka_baseline_tables_are_clean(config):
    """Every shipped config, the consumer side's (`ctp=1`) included."""
    spec = _kafka()
    r = verify_tables(ground(spec, spec.resolve_config(config)))
    assert r.ok, r.text()
    assert r.checked["conformance"] > 0


def test_handler_of_another_trigger_counts_when_it_answers_the_same_request():
    # split S-03 off into its own trigger name: it still answers Handle requests in state done
    from dataclasses import replace
    rows = tuple(replace(r, trigger="Handle (done)") if r.id == "S-03" else r for r in SERVER.rows)
    spec = replace(FIXTURE, tables=(replace(SERVER, rows=rows), CLIENT))
    r = verify_tables(ground(spec, spec.resolve_config("tiny")))
    assert not by_check(r, "completeness"), r.text()


def test_assume_invariants_restricts_the_states_checked():
    from dataclasses import replace
    inv = Always("CounterBelow2", n < 2)
    spec = replace(FIXTURE.with_variant("out-of-domain"), invariants_for_induction=(inv,))
    m = ground(spec, spec.resolve_config("tiny"))
    assert by_check(verify_tables(m), "type")
    r = verify_tables(m, assume_invariants=True)
    assert not by_check(r, "type") and any("CounterBelow2" in n for n in r.notes)
