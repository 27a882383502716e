"""The dashboard in headless Chromium, served by the real API over the local stack.

Nothing is faked: the stack is the template's resources in moto, the actions are written by
the start use case and the repository, and the page talks to the API function through
``serving_api`` exactly as API Gateway would call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from moto import mock_aws

from tests.e2e.support import Stack
from tickwork import bootstrap
from tickwork.domain.action import Occurrence, Status
from tickwork.domain.fire import Outcome
from tickwork.steering.start import StartCommand, start_action
from tickwork_local.stack import LocalStack

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ROUTES = REPO / "src" / "tickwork" / "api" / "routes.py"
OUTPUT = REPO / "test-output"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass(frozen=True)
class Seeded:
    pending: tuple[str, ...]
    failed: str
    failed_error: str
    completed: str

    def counts(self) -> dict[str, int]:
        return {"PENDING": len(self.pending), "FAILED": 1, "COMPLETED": 1}


@pytest.fixture
def stack() -> Iterator[Stack]:
    with mock_aws(), LocalStack.from_repo().running() as local:
        yield Stack(local)


@pytest.fixture
def seeded(stack: Stack) -> Seeded:
    """Three actions waiting an hour, one that failed, one that fired six times and ended."""
    deps = bootstrap.from_environment()
    pending = tuple(f"dash:pending:{n}" for n in (1, 2, 3))
    for action_id in pending:
        start_action(StartCommand({"id": action_id, "delay": "1h", "data": {"n": 1}}), deps)

    failed = "dash:failed:1"
    error = "FulfillmentFailed: subscriber answered 503 Service Unavailable"
    start_action(StartCommand({"id": failed, "delay": "1h", "data": {"invoice": 42}}), deps)
    action = stack.record(failed)
    assert action.execution_arn is None  # an hour away: parked, no execution to stop
    now = deps.clock.now()
    fire = Occurrence(
        1, now - timedelta(minutes=3), now - timedelta(minutes=2), 3, Outcome.FAILED, error
    )
    failed_record = replace(
        action,
        status=Status.FAILED,
        history=(fire,),
        last_error=error,
        retry_count=2,
        execution_arn=None,
        version=action.version + 1,
    )
    deps.records.save(failed_record, expected_version=action.version, recorded=fire)

    completed = "dash:report:every-20m"
    start_action(
        StartCommand({"id": completed, "rate": "rate(20 minutes)", "executionRemainder": 6}), deps
    )
    action = stack.record(completed)
    assert action.execution_arn is None  # 20 minutes away: parked, no execution to stop
    lateness = {2: 95, 4: 240}  # seconds: two of the six fires were late
    for n in range(1, 7):
        scheduled = now - timedelta(minutes=130 - 20 * n)
        actual = scheduled + timedelta(seconds=lateness.get(n, 0.3))
        record = Occurrence(n, scheduled, actual, 1, Outcome.FIRED)
        following = scheduled + timedelta(minutes=20) if n < 6 else None
        before = action
        action = action.fired(actual, record, following, {"delivered": "tick-event"}, deps.limits)
        deps.records.save(action, expected_version=before.version, recorded=record)
    stack.wait_counted()  # and folded into the counts, as the count function does
    return Seeded(pending, failed, error, completed)


@pytest.fixture
def api_url(stack: Stack) -> Iterator[str]:
    """The API behind its token, as `tickwork local` serves it."""
    with stack.local.serving_api() as url:
        yield url


@pytest.fixture
def token_link(stack: Stack, api_url: str) -> Callable[[str], str]:
    """The dashboard link `tickwork local` prints: the page, then #token=<the API token>."""
    return lambda path="/": f"{api_url}{path}#token={stack.local.api_token}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for a file's tests (a launch costs seconds of CPU); each test gets
    a context of its own, so no cookie, storage or cache passes from one to the next. While it
    is up, Playwright's event loop runs in this thread: a test of the file cannot call
    ``asyncio.run`` itself."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser, api_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def screenshot_path() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT / "dashboard.png"
