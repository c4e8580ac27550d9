"""`txncheck bmc`'s result in `check`'s words: each status's outcome, the run's verdict and the exit code
(checker/symbolic/status.py, docs/symbolic.md "Result fields"), through the real command line."""
import itertools
import json

import pytest

from txncheck.checker.result import OUTCOMES, VERDICTS
from txncheck.checker.symbolic import status
from txncheck.cli.bmc import EXIT_OF_VERDICT

BUG = ("--variant", "commit-without-all-prepared")

# one row of the mapping table each: (command, status, outcome, verdict, exit code, first line printed)
ROWS = [
    pytest.param(("twophase", *BUG, "--depth", "5"), "violated", "violated", "violation", 1,
                 "TCConsistent: VIOLATED at depth 3: ", id="violated"),
    pytest.param(("twophase", "--depth", "4"), "proved", "holds", "pass", 0,
                 "TCConsistent: proved for every depth", id="proved-bmc"),
    pytest.param(("twophase", "--induction", "1"), "proved", "holds", "pass", 0,
                 "TCConsistent: proved by 1-induction", id="proved-k-induction"),
    pytest.param(("twophase", "--depth", "3", "--no-prove"), "holds-to-depth", "holds", "pass", 0,
                 "TCConsistent: no counterexample up to depth 3", id="holds-to-depth"),
    pytest.param(("kafka", "--config", "tiny", "--induction", "1", "--property", "BOUNDS"), "cti", "unknown",
                 "incomplete", 3, "BOUNDS: not proved; counterexample to 1-induction: ", id="cti",
                 marks=pytest.mark.long),  # 15 s; test_symbolic_bmc's CLI cti test stays in make test
    # Spacer cannot answer Kafka in 10 ms: the query is cancelled, z3's unknown
    pytest.param(("kafka", "--config", "tiny", "--pdr", "--timeout", "0.01", "--property", "BOUNDS"), "unknown",
                 "unknown", "incomplete", 3, "BOUNDS: unknown at depth ", id="unknown"),
]


def test_the_mapping_is_total_and_in_checks_words():
    assert set(status.OUTCOME_OF) == set(status.STATUSES)
    assert set(status.OUTCOME_OF.values()) <= set(OUTCOMES)
    assert set(status.VERDICT_OF) == set(status.OUTCOME_OF.values())
    assert set(status.RANK) <= set(VERDICTS) and set(EXIT_OF_VERDICT) == set(status.RANK)


def _exit_by_status(statuses) -> int:
    """The exit code `txncheck bmc` has always given, decided from the statuses directly."""
    if "violated" in statuses:
        return 1
    if any(s in ("cti", "unknown") for s in statuses):
        return 3
    return 0


@pytest.mark.parametrize("n", range(4))
def test_the_verdict_gives_the_exit_code_bmc_gave_for_every_mix_of_statuses(n):
    for statuses in itertools.product(status.STATUSES, repeat=n):
        assert EXIT_OF_VERDICT[status.verdict_of(statuses)] == _exit_by_status(statuses), statuses


@pytest.mark.parametrize("args,st,outcome,verdict,code,first", ROWS)
def test_each_status_through_the_cli(txncheck_main, args, st, outcome, verdict, code, first):
    rc, out, err = txncheck_main("bmc", *args, "--json")
    assert rc == code, out + err
    data = json.loads(out)
    (p,) = data["properties"]
    assert (p["status"], p["outcome"], data["verdict"]) == (st, outcome, verdict)
    assert EXIT_OF_VERDICT[data["verdict"]] == rc
    rc, out, err = txncheck_main("bmc", *args)
    assert rc == code and out.startswith(first), out + err


@pytest.mark.long  # 20 s (2026-11-27)
def test_the_json_verdict_is_the_exit_code_in_result_json(txncheck_main, tmp_path):
    """`--out`'s result.json carries the same verdict and outcomes as --json, and the exit code is its verdict;
    a proved property beside a counterexample to induction leaves the run incomplete."""
    rc, out, err = txncheck_main("bmc", "kafka", "--config", "tiny", "--induction", "1", "--property", "DUR-1",
                                 "--property", "BOUNDS", "--out", str(tmp_path / "o"))
    data = json.loads((tmp_path / "o" / "result.json").read_text())
    assert data["schema"] == "txncheck.symbolic/1"
    assert [(p["name"], p["status"], p["outcome"]) for p in data["properties"]] == \
        [("DUR-1", "proved", "holds"), ("BOUNDS", "cti", "unknown")]
    assert data["verdict"] == "incomplete" and rc == EXIT_OF_VERDICT[data["verdict"]] == 3, out + err
    rc, out, err = txncheck_main("bmc", "twophase", *BUG, "--depth", "5", "--out", str(tmp_path / "v"))
    data = json.loads((tmp_path / "v" / "result.json").read_text())
    assert data["verdict"] == "violation" and rc == EXIT_OF_VERDICT[data["verdict"]] == 1, out + err
