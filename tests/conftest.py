"""Suite-wide safety: every AWS call in the tests goes to moto, never to a real account."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tickwork_local.tuning.collector import collect_less_often

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
# Every local stack of the suite (in process, or `tickwork local` started by a test) leaves out
# the scheduled runs of the pump and the reconciler that would find nothing, as virtual time
# does: the suite's many stacks on the wall clock would otherwise spend a fifth of its CPU on
# pump runs reading 16 empty shards each second (tickwork_local.delivery.ScheduleRunner).
os.environ["TICKWORK_LOCAL_LEAN_RUNS"] = "1"
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_ENDPOINT_URL", None)


# The files that take longest, longest first (seconds of a full run, 4 workers on 2 cores):
# each file goes to one worker (``--dist loadfile``: a module's fixtures are made once), in
# this order, so the long ones start first and the short ones fill in around them instead of
# one worker finishing a long file alone. A file not named here runs after these, in
# collection order; a list out of date costs time, never a result.
LONGEST_FIRST = (
    "tests/e2e/test_client_distribution.py",  # 134 s (a fresh virtualenv)
    "tests/e2e/test_time_command.py",  # 132 s
    "tests/e2e/test_local_restart.py",  # 100 s (kill -9 mid-wait: real seconds, mostly idle)
    "tests/e2e/test_local_command.py",  # 90 s
    "tests/e2e/test_virtual_time.py",  # 75 s
    "tests/e2e/test_protocol_holes.py",  # 67 s
    "tests/functional/test_index_buckets.py",  # 64 s
    "tests/template/test_permissions.py",  # 63 s
    "tests/template/test_policy_scan.py",  # 60 s
    "tests/e2e/test_steering.py",  # 57 s
    "tests/e2e/test_local_auth.py",  # 50 s
    "tests/browser/test_dashboard.py",  # 45 s
    "tests/functional/test_api_schema.py",  # 42 s
    "tests/e2e/test_rejections_seen.py",  # 42 s
    "tests/e2e/test_readme_shell.py",  # 40 s
    "tests/e2e/test_batches.py",  # 35 s
    "tests/e2e/test_bus_refusals.py",  # 32 s
    "tests/e2e/test_security.py",  # 30 s
    "tests/functional/test_dynamodb_stores.py",  # 27 s
    "tests/e2e/test_templates_command.py",  # 27 s
    "tests/e2e/test_repairs_and_catch_up.py",  # 24 s
    "tests/template/test_template.py",  # 24 s
    "tests/e2e/test_targets.py",  # 24 s
    "tests/model/test_protocol.py",  # 23 s
)


def pytest_configure(config: pytest.Config) -> None:
    # Each worker runs the emulator in process: its collector runs as `tickwork local`'s does,
    # far less often than Python's default (tuning/collector.py).
    collect_less_often()


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
