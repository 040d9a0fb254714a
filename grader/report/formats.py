"""The report for other tools: JUnit XML for CI test reporters, Gradescope's results.json.

Both are rendered from the same ``Report`` as the text and JSON forms, so a
check means the same thing everywhere: one JUnit test case, one Gradescope
test, with the same points.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from grader.diagnosis.feedback import METHOD_NAMES
from grader.report.model import TARGETS, CheckResult, Report


def _details(report: Report, check: CheckResult) -> str:
    """What a failed check's reader needs: its message, the diagnoses of its target, the counterexample."""
    lines = [check.message] if check.message else []
    lines += [f"[{d.code}] {d.message}" for d in report.diagnoses if d.target == check.target]
    if check.counterexample is not None:
        example = check.counterexample.to_json()
        lines += [f"expression: {example['expression']}"]
        lines += [f"{key}: {json.dumps(example[key])}" for key in ("inputs", "expected", "actual")]
        lines += [f"oracle: {example['oracle']}"]
    return "\n".join(lines)


def _seconds(x: float) -> str:
    return f"{x:.3f}"


def render_junit(report: Report, seconds: dict[str, float] | None = None) -> str:
    """JUnit XML as Jenkins, GitLab and GitHub test reporters read it (Jenkins' junit-10.xsd)."""
    seconds = seconds or {}
    suites = ET.Element("testsuites", name="micrograde")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for target in ("submission", *TARGETS):
        checks = [c for c in report.checks if c.target == target]
        diagnoses = [d for d in report.diagnoses if d.target == "submission"] if target == "submission" else []
        if target == "submission" and not diagnoses:
            continue
        failures = sum(c.status == "failed" for c in checks) + len(diagnoses)
        errors = sum(c.status in ("error", "timeout") for c in checks)
        tests = len(checks) + len(diagnoses)
        suite = ET.SubElement(suites, "testsuite", name=target, tests=str(tests), failures=str(failures),
                              errors=str(errors), skipped="0", time=_seconds(seconds.get(target, 0.0)))
        score, max_score = report.target_scores().get(target, (0.0, 0.0))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="score", value=f"{score:g}")
        ET.SubElement(properties, "property", name="max_score", value=f"{max_score:g}")
        for check in checks:
            ET.SubElement(properties, "property", name=f"points.{check.id}",
                          value=f"{check.score:g}/{check.max_score:g}")
        for diagnosis in diagnoses:
            case = ET.SubElement(suite, "testcase", name=f"submission.{diagnosis.code}",
                                 classname="micrograde.submission", time="0.000")
            failure = ET.SubElement(case, "failure", type=diagnosis.code, message=diagnosis.message[:200])
            failure.text = diagnosis.message
        for check in checks:
            case = ET.SubElement(suite, "testcase", name=check.id, classname=f"micrograde.{target}",
                                 time="0.000")
            if check.status == "passed":
                continue
            codes = ",".join(d.code for d in report.diagnoses if d.target == target) or check.status
            kind = "failure" if check.status == "failed" else "error"
            element = ET.SubElement(case, kind, type=codes, message=(check.message or check.status)[:200])
            element.text = _details(report, check)
        for key, value in (("tests", tests), ("failures", failures), ("errors", errors)):
            totals[key] += value
    if report.warnings and len(suites):  # such as a score that is not tamper-proof
        ET.SubElement(suites[0], "system-err").text = "\n".join(f"warning: {w}" for w in report.warnings)
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", _seconds(sum(seconds.values())))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def render_gradescope(report: Report, execution_time: float = 0.0) -> str:
    """Gradescope's ``results.json``: one test per check, the score, and the diagnoses as output."""
    from grader.report.text import render_text

    tests = []
    for check in report.checks:
        tests.append({
            "name": f"{METHOD_NAMES[check.target]}: {check.title}",
            "number": check.id,
            "score": check.score,
            "max_score": check.max_score,
            "status": "passed" if check.status == "passed" else "failed",
            "output": "" if check.status == "passed" else _details(report, check),
            "visibility": "visible",
        })
    results = {
        "score": report.score,
        "execution_time": round(execution_time, 3),
        "output": render_text(report),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    return json.dumps(results, indent=2) + "\n"
