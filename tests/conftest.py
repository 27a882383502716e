"""Suite-wide safety: every AWS call in the tests goes to moto, never to a real account."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EVENTS = REPO / "events"

for key, value in {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}.items():
    os.environ[key] = value
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_ENDPOINT_URL", None)


# The files that take longest, longest first (seconds of a full run, 4 workers on 2 cores):
# each file goes to one worker (``--dist loadfile``: a module's fixtures are made once), in
# this order, so the long ones start first and the short ones fill in around them instead of
# one worker finishing a long file alone. A file not named here runs after these, in
# collection order; a list out of date costs time, never a result.
LONGEST_FIRST = (
    "tests/e2e/test_local_command.py",  # 186 s (kill -9 mid-wait: 66 s)
    "tests/e2e/test_client_distribution.py",  # 117 s (a fresh virtualenv)
    "tests/template/test_permissions.py",  # 105 s
    "tests/e2e/test_virtual_time.py",  # 88 s (a year of a daily cron)
    "tests/functional/test_api.py",  # 63 s
    "tests/functional/test_index_buckets.py",  # 47 s
    "tests/functional/test_dynamodb_stores.py",  # 39 s
    "tests/e2e/test_batches.py",  # 37 s
    "tests/functional/test_control_tick_fulfill_handlers.py",  # 34 s
    "tests/functional/test_api_schema.py",  # 33 s
    "tests/e2e/test_bus_refusals.py",  # 30 s
    "tests/template/test_policy_scan.py",  # 30 s
    "tests/e2e/test_fires.py",  # 27 s
    "tests/functional/test_start_handler.py",  # 24 s
    "tests/e2e/test_changes.py",  # 22 s
    "tests/contract/test_count_tab.py",  # 21 s
    "tests/unit/test_publisher_client.py",  # 21 s
    "tests/functional/test_api_steering.py",  # 20 s
    "tests/e2e/test_time_command.py",  # 20 s
    "tests/functional/test_cli_without_a_stack.py",  # 20 s
    "tests/e2e/test_steering.py",  # 20 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def load_event(name: str) -> dict[str, Any]:
    """An events/ file by name, e.g. ``load_event("start/cron")`` — the same file
    ``sam local invoke -e events/start/cron.json`` takes."""
    return json.loads((EVENTS / f"{name}.json").read_text())


@pytest.fixture
def event():
    return load_event
