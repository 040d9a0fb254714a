"""The report as JUnit XML, for the test reporters of Jenkins, GitLab and GitHub.

One ``testsuite`` per target, one ``testcase`` per check with the time it
really took, points as properties. Every string goes through ``printable``:
XML 1.0 cannot hold NUL or ESC at all, and a submission controls its own
exception messages.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grader.report.model import Report, printable


def _seconds(x: float) -> str:
    return f"{x:.3f}"


def not_graded(suites: ET.Element, report: Report) -> None:
    """A ``not-graded`` suite: each part of the submission no target covered, as a skipped test."""
    suite = ET.SubElement(suites, "testsuite", name="not-graded", tests=str(len(report.ungraded)), failures="0",
                          errors="0", skipped=str(len(report.ungraded)), time=_seconds(0.0))
    for part in report.ungraded:
        case = ET.SubElement(suite, "testcase", name=printable(part.name), classname="micrograde.not-graded",
                             time=_seconds(0.0))
        ET.SubElement(case, "skipped", message=printable(f"not graded: {part.describe()}")[:200])


def render_junit(report: Report) -> str:
    """JUnit XML valid against Jenkins' junit-10.xsd."""
    suites = ET.Element("testsuites", name="micrograde")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    shown = report.shown_checks()
    diagnoses = report.shown_diagnoses()
    loading = [d for d in diagnoses if d.target == "submission"]
    targets = (["submission"] if loading else []) + list(report.target_scores())
    for target in targets:
        checks = [c for c in shown if c.target == target]
        failed_loading = loading if target == "submission" else []
        failures = sum(c.status == "failed" for c in checks) + len(failed_loading)
        errors = sum(c.status in ("error", "timeout") for c in checks)
        tests = len(checks) + len(failed_loading)
        seconds = sum(c.seconds for c in checks)
        suite = ET.SubElement(suites, "testsuite", name=target, tests=str(tests), failures=str(failures),
                              errors=str(errors), skipped="0", time=_seconds(seconds))
        score, max_score = report.target_scores().get(target, (0.0, 0.0))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="score", value=f"{score:g}")
        ET.SubElement(properties, "property", name="max_score", value=f"{max_score:g}")
        for check in checks:
            ET.SubElement(properties, "property", name=f"points.{check.id}",
                          value=f"{check.score:g}/{check.max_score:g}")
        for diagnosis in failed_loading:
            case = ET.SubElement(suite, "testcase", name=f"submission.{diagnosis.code}",
                                 classname="micrograde.submission", time=_seconds(0.0))
            failure = ET.SubElement(case, "failure", type=diagnosis.code, message=printable(diagnosis.heading())[:200])
            failure.text = printable(f"{diagnosis.heading()}\n{diagnosis.message}")
        for check in checks:
            case = ET.SubElement(suite, "testcase", name=check.id, classname=f"micrograde.{target}",
                                 time=_seconds(check.seconds))
            if check.status == "passed":
                continue
            codes = ",".join(d.code for d in diagnoses if d.target == target) or check.status
            kind = "failure" if check.status == "failed" else "error"
            details = report.details(check)
            element = ET.SubElement(case, kind, type=codes, message=(details.split("\n", 1)[0] or check.status)[:200])
            element.text = details
        for key, value in (("tests", tests), ("failures", failures), ("errors", errors)):
            totals[key] += value
    if report.ungraded:  # what no target covered: skipped tests, so no reporter counts it as passed
        not_graded(suites, report)
        totals["tests"] += len(report.ungraded)
    if report.warnings and len(suites):  # such as a score that is not tamper-proof
        ET.SubElement(suites[0], "system-err").text = printable(
            "\n".join(f"warning: {w}" for w in report.warnings))
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", _seconds(sum(c.seconds for c in shown)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
