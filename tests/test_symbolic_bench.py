"""The symbolic benchmark rewrites only what it measures in RESULTS.md."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from symbolic_bench import write_section  # noqa: E402  (a script of benchmarks/, not a package module)

RESULTS = """# Benchmark results

## Symbolic engine

Measured by an old run.

### Table checks (`txncheck tables SPEC --verify`, config tiny)

| old table row |

### Kafka BMC (written by hand)

The deep cases, kept.

### k-induction (`txncheck bmc twophase --set rm=N --induction 2`)

| old induction row |

## Spark engine

Untouched.
"""

NEW = """## Symbolic engine

Measured by a new run.

### Table checks (`txncheck tables SPEC --verify`, config tiny)

| new table row |

### k-induction (`txncheck bmc twophase --set rm=N --induction 2`)

| new induction row |

### Something new

| added |
"""


def test_write_section_replaces_the_measured_parts_and_keeps_the_rest(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(RESULTS)
    write_section(str(path), NEW)
    text = path.read_text()
    assert "new run" in text and "old run" not in text
    assert "| new table row |" in text and "| old table row |" not in text
    assert "| new induction row |" in text and "| old induction row |" not in text
    assert "The deep cases, kept." in text and "Untouched." in text
    assert text.index("| added |") < text.index("## Spark engine")
    assert text.index("Kafka BMC") < text.index("### k-induction")  # order kept
    write_section(str(path), NEW)
    assert path.read_text() == text  # idempotent
