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


def load_event(name: str) -> dict[str, Any]:
    """An events/ file by name, e.g. ``load_event("start/cron")`` — the same file
    ``sam local invoke -e events/start/cron.json`` takes."""
    return json.loads((EVENTS / f"{name}.json").read_text())


@pytest.fixture
def event():
    return load_event
