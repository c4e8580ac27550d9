"""The gate as JUnit XML: what Jenkins, GitLab, GitHub test-report actions and most CI systems read.

One `<testsuite>` per entry (named after it), one `<testcase>` per property and one per expectation
(the verdict, each golden count, the time budget). A failure's message is the one-line story of the
trace (property, kind, length, last step) with the trace's path; an entry that could not run is one
`<error>`; an entry stopped over its time budget or out of its memory is a failed `time budget` or
`max memory` test case. Times are left out of the test cases' identity, so two runs differ only in
`time` attributes. Built with junitparser and written atomically; the tests validate the file against
the JUnit schema of Jenkins' xUnit plugin (`tests/schemas/junit-10.xsd`), which is why the root
`<testsuites>` carries no `skipped` count (the schema does not allow one; nothing is skipped anyway).
"""
from __future__ import annotations

from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from .atomic import write_atomic
from .gate import GateReport


def junit_xml(report: GateReport) -> str:
    xml = JUnitXml(name="txncheck gate")
    for o in report.outcomes:
        suite = TestSuite(o.name)
        suite.add_property("spec", o.entry.spec)
        suite.add_property("command", o.entry.command)
        suite.add_property("expect", o.entry.expect)
        suite.add_property("out", o.out)
        if o.entry.note:
            suite.add_property("note", o.entry.note)
        if o.error is not None:
            case = TestCase("run", classname=o.name, time=o.seconds)
            case.result = [Error(o.error, "error")]
            suite.add_testcase(case)
        for e in o.expectations:
            # the entry's time on its verdict's case, or on the case that says why there is none
            case = TestCase(e.name, classname=o.name,
                            time=o.seconds if e.name.startswith("expect") or not o.judged else 0.0)
            if not e.ok:
                case.result = [Failure(e.message, "expectation")]
            case.system_out = e.message
            suite.add_testcase(case)
        for p in o.properties:
            case = TestCase(p.name, classname=f"{o.name}.properties", time=0.0)
            if not p.ok:
                fail = Failure(p.story, p.outcome)
                fail.text = "\n".join(x for x in (p.doc, p.story) if x)
                case.result = [fail]
            case.system_out = p.story
            suite.add_testcase(case)
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    xml._elem.attrib.pop("skipped", None)  # not an attribute of <testsuites> in the JUnit schema Jenkins reads
    data = xml.tostring()
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return text if text.startswith("<?xml") else '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n"


def write_junit(report: GateReport, path: str) -> None:
    write_atomic(path, junit_xml(report))
