"""GIVEN two functions' handlers running at once in one process (as the local stack runs them)
WHEN each logs while the other runs THEN every line carries its own function's name and its own
invocation's correlation id — never the other's — and a thread a handler starts in a copy of its
context logs them too."""

from __future__ import annotations

import contextvars
import io
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

import pytest

from tickwork.entry import Entry


@dataclass
class _Context:
    function_name: str
    memory_limit_in_mb: int = 128
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:f"
    aws_request_id: str = "r"


def test_concurrent_invocations_keep_their_own_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")  # only the logs are looked at
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    first, second = Entry(correlation_id_path="detail.id"), Entry(correlation_id_path="detail.id")
    shared = logging.getLogger(first.logger.service)
    formatter = shared.handlers[0].formatter
    handler.setFormatter(formatter)
    shared.addHandler(handler)
    both_in = threading.Barrier(2)
    try:

        def body(entry: Entry, tag: str) -> Any:
            def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
                both_in.wait(timeout=10)  # both invocations are inside their handlers now
                for n in range(20):
                    entry.logger.info("step", extra={"tag": tag, "n": n})
                worker = threading.Thread(
                    target=contextvars.copy_context().run,
                    args=(lambda: entry.logger.info("worker", extra={"tag": tag}),),
                )
                worker.start()
                worker.join()
                return {}

            return entry(handle)

        runs = [
            threading.Thread(
                target=body(entry, tag),
                args=({"detail": {"id": f"id-{tag}"}}, _Context(f"fn-{tag}")),
            )
            for entry, tag in ((first, "a"), (second, "b"))
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
    finally:
        shared.removeHandler(handler)

    lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    assert len(lines) == 2 * 21
    for line in lines:
        tag = line["tag"]
        assert line["function_name"] == f"fn-{tag}", line
        assert line["correlation_id"] == f"id-{tag}", line
