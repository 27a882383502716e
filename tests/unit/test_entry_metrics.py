"""GIVEN metrics turned off (POWERTOOLS_METRICS_DISABLED, as the local stack runs its functions)
WHEN a warm function counts over many invocations THEN nothing piles up, nothing is printed and no
invocation fails — Powertools' flush clears nothing while metrics are off, and once a metric held
100 values it printed them all (failing the request when the module was imported before the
namespace was set). GIVEN metrics on THEN each invocation prints its own counts, once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tickwork.api import documented
from tickwork.entry import Entry


@dataclass
class _Context:
    function_name: str = "fn"
    memory_limit_in_mb: int = 128
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:fn"
    aws_request_id: str = "r"


def _counting(entry: Entry, per_invocation: int) -> Any:
    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        for _ in range(per_invocation):
            entry.count("Fired")
            documented.count("scheduled")
        return {}

    return entry(handle)


def test_with_metrics_off_a_warm_function_counts_without_limit_and_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_NAMESPACE", raising=False)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    handler = _counting(Entry(), per_invocation=7)
    for _ in range(40):  # 280 of each metric: past Powertools' 100 values per metric
        assert handler({}, _Context()) == {}
    assert "Tickwork" not in capsys.readouterr().out
    assert not documented.metrics.metric_set


def test_with_metrics_on_each_invocation_prints_its_own_counts_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Tickwork")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    handler = _counting(Entry(), per_invocation=3)
    capsys.readouterr()
    for _ in range(2):
        handler({}, _Context())
    blobs = [
        json.loads(line)
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("{") and "Fired" in line
    ]
    assert len(blobs) == 2
    for blob in blobs:
        assert blob["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Tickwork"
        assert blob["Fired"] == [1.0, 1.0, 1.0]
        assert blob["scheduled"] == [1.0, 1.0, 1.0]
