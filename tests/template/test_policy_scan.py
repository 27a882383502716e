"""GIVEN template.yaml WHEN checkov scans it THEN every finding is fixed or skipped with a reason.

checkov scans the template as written and as SAM expands it (the generated IAM roles, with
every policy template spelled out, are only in the expansion). A finding passes only when it is
skipped on its resource (``Metadata: checkov: skip`` with a comment) or stack-wide in
``.checkov.yaml`` with the reason on its line; a stack-wide skip that matches nothing any more
fails too, so the list cannot outlive its reasons. One scan (about 10 s) serves every check, so
the checks are one test: split, each xdist worker would scan again.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from samtranslator.yaml_helper import yaml_parse

from tests.template.scanner import checkov, sam_expanded

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / ".checkov.yaml"
# A reason is a sentence, not a placeholder.
MIN_REASON = 30
# checkov installs itself on the first run from a fresh clone without `make` (about a minute).
pytestmark = pytest.mark.timeout(600)


def stack_wide_skips() -> dict[str, str]:
    """check id → the reason written after it in .checkov.yaml."""
    listed = yaml.safe_load(CONFIG.read_text())["skip-check"]
    entry = re.compile(r"^\s*-\s*(CKV2?_[A-Z0-9_]+)\s*#\s*(.*\S)\s*$", re.M)
    reasons = dict(entry.findall(CONFIG.read_text()))
    assert sorted(listed) == sorted(reasons), "every skip-check entry needs '# reason' on its line"
    return reasons


def run_checkov(work: Path) -> dict[str, list[dict[str, Any]]]:
    """checkov's results for template.yaml and its SAM expansion, by kind (passed_checks,
    failed_checks, skipped_checks). Stack-wide skips are applied by the test, not by checkov,
    so that a stale one shows."""
    executable = checkov()
    expanded = work / "template.sam-expanded.json"
    expanded.write_text(json.dumps(sam_expanded(yaml_parse((REPO / "template.yaml").read_text()))))
    run = subprocess.run(
        [
            str(executable),
            *("--file", str(REPO / "template.yaml"), "--file", str(expanded)),
            *("--framework", "cloudformation", "--output", "json", "--skip-download"),
        ],
        # Outside the repo and with an empty home, checkov reads no .checkov.yaml by itself.
        cwd=work,
        env={"HOME": str(work), "PATH": "/usr/bin:/bin", "BC_SKIP_MAPPING": "TRUE"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode in (0, 1), run.stderr[-4000:]  # 1 = there are failed checks
    reports = json.loads(run.stdout)
    results: dict[str, list[dict[str, Any]]] = {}
    for report in reports if isinstance(reports, list) else [reports]:
        assert report["summary"]["parsing_errors"] == 0, report["summary"]
        for kind, checks in report["results"].items():
            results.setdefault(kind, []).extend(checks)
    return results


def _where(check: dict[str, Any]) -> str:
    return f"{check['check_id']} {check['resource']} ({Path(check['file_path']).name})"


def test_every_stack_wide_skip_gives_its_reason() -> None:
    reasons = stack_wide_skips()
    vague = {check: reason for check, reason in reasons.items() if len(reason) < MIN_REASON}
    assert vague == {}, "write why the check does not apply to tickwork"


def test_policy_scan_has_no_unexplained_finding(tmp_path: Path) -> None:
    results = run_checkov(tmp_path)
    passed, failed = results.get("passed_checks", []), results.get("failed_checks", [])
    skipped = results.get("skipped_checks", [])

    # Both documents were scanned, and the IAM checks (no "*" action, no unconstrained write,
    # no privilege escalation or exfiltration, ...) ran on every role SAM generates.
    assert {Path(c["file_path"]).name for c in passed} == {
        "template.yaml",
        "template.sam-expanded.json",
    }
    expanded = sam_expanded(yaml_parse((REPO / "template.yaml").read_text()))
    roles = {
        f"AWS::IAM::Role.{k}"
        for k, r in expanded["Resources"].items()
        if r["Type"] == "AWS::IAM::Role"
    }
    iam_checked = {c["resource"] for c in passed if c["check_id"] == "CKV_AWS_111"}
    assert roles and iam_checked == roles

    accepted = stack_wide_skips()
    unexplained = [_where(c) for c in failed if c["check_id"] not in accepted]
    assert unexplained == [], (
        "fix these, or skip one on its resource (Metadata: checkov: skip, with a comment) or in "
        ".checkov.yaml if it holds for the whole stack, with the reason:\n" + "\n".join(unexplained)
    )

    vague = [
        _where(c)
        for c in skipped
        if len(c["check_result"].get("suppress_comment", "")) < MIN_REASON
    ]
    assert vague == [], f"resource skips without a reason in their comment: {vague}"

    stale = sorted(set(accepted) - {c["check_id"] for c in failed})
    assert stale == [], f"no finding matches these any more; drop them from .checkov.yaml: {stale}"
