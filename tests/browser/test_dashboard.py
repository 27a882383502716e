"""GIVEN seeded actions in the local stack, WHEN an operator uses the dashboard in Chromium,
THEN it shows the counts, filters, shows a failure's history, retries and cancels, draws the
chart, and pages through the table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import CHROMIUM, OUTPUT, REPO, ROUTES, Seeded
from tests.e2e.support import Stack
from tickwork import bootstrap
from tickwork.domain.fire import FireFailure
from tickwork.domain.times import iso
from tickwork.fire.record import record_failure
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.tick import TickData
from tickwork.steering.start import StartCommand, start_action
from tickwork_local.stack import stop_execution

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium)",
    ),
    pytest.mark.skipif(
        not ROUTES.exists(),
        reason=f"awaits the HTTP API: {ROUTES.relative_to(REPO)} is not written yet",
    ),
]


def test_dashboard_counts_filters_retries_and_charts(
    stack: Stack,
    seeded: Seeded,
    page: Page,
    token_link: Callable[[str], str],
    screenshot_path: Path,
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # GIVEN the page is open
    page.goto(token_link("/"))
    expect(page).to_have_title("tickwork")

    # THEN each status card shows what was seeded
    for status in ("PENDING", "IN_PROGRESS", "COMPLETED", "FAILED", "NO_ACTION", "CANCELLED"):
        expect(page.get_by_test_id(f"count-{status}-value")).to_have_text(
            str(seeded.counts().get(status, 0))
        )
    expect(page.get_by_test_id("action-row")).to_have_count(len(seeded.pending) + 2)

    # AND the chart is drawn: a titled SVG with stacked bars (the seeds fired in the window)
    chart = page.get_by_test_id("chart-svg")
    expect(chart.locator("title").first).to_contain_text("Fires per")
    for kind in ("onTime", "late", "failed"):
        expect(chart.locator(f"rect.bar[data-kind='{kind}']").first).to_be_visible()
    expect(page.get_by_test_id("chart-empty")).to_have_count(0)
    expect(page.get_by_test_id("chart-legend")).to_contain_text("Late")

    # WHEN the FAILED card is clicked THEN the filter and the table show only the failed action
    page.get_by_test_id("count-FAILED").click()
    expect(page.get_by_test_id("status-filter")).to_have_value("FAILED")
    rows = page.get_by_test_id("action-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-id", seeded.failed)
    expect(rows.first.get_by_test_id("row-status")).to_have_text("Failed")

    # AND the select filters the same way (and back to all)
    page.get_by_test_id("status-filter").select_option("")
    expect(rows).to_have_count(len(seeded.pending) + 2)
    page.get_by_test_id("status-filter").select_option("FAILED")
    expect(rows).to_have_count(1)

    # WHEN its row is clicked THEN its history shows the failed fire and its error
    rows.first.click()
    detail = page.get_by_test_id("detail")
    expect(detail).to_be_visible()
    expect(detail.get_by_test_id("detail-id")).to_contain_text(seeded.failed)
    expect(detail.get_by_test_id("history-error")).to_have_text(seeded.failed_error)
    expect(detail.get_by_test_id("detail-last-error")).to_contain_text(seeded.failed_error)
    expect(detail.get_by_test_id("cancel-button")).to_have_count(0)
    page.screenshot(path=str(screenshot_path), full_page=True)

    # WHEN Retry is clicked THEN the API answers 200 and the table refreshes without it
    with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith("/retry")
    ) as answer:
        detail.get_by_test_id("retry-button").click()
    assert answer.value.status == 200, answer.value.text()
    expect(page.get_by_test_id("no-actions")).to_be_visible()
    expect(detail.get_by_test_id("retry-button")).to_have_count(0)
    page.get_by_test_id("status-filter").select_option("")
    retried = page.locator(f'tr[data-id="{seeded.failed}"]').get_by_test_id("row-status")
    expect(retried).not_to_have_text("Failed")
    assert stack.record(seeded.failed).status != "FAILED"

    # WHEN a pending action is cancelled (and the confirm accepted) THEN it reads Cancelled
    pending = page.locator(f'tr[data-id="{seeded.pending[0]}"]')
    pending.click()
    expect(detail.get_by_test_id("detail-id")).to_contain_text(seeded.pending[0])
    page.once("dialog", lambda dialog: dialog.accept())
    detail.get_by_test_id("cancel-button").click()
    expect(pending.get_by_test_id("row-status")).to_have_text("Cancelled")
    expect(page.get_by_test_id("count-CANCELLED-value")).to_have_text("1")

    assert errors == [], errors


def test_an_empty_stack_shows_zero_counts_and_says_no_fires_yet(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    page.goto(token_link("/"))
    expect(page.get_by_test_id("count-PENDING-value")).to_have_text("0")
    expect(page.get_by_test_id("no-actions")).to_have_text("No actions yet.")
    chart = page.get_by_test_id("chart-svg")
    expect(chart.locator("title").first).to_contain_text("Fires per")
    expect(page.get_by_test_id("chart-empty")).to_have_text("No fires yet")
    expect(chart.locator("rect.bar")).to_have_count(0)


def test_the_table_pages_forward_and_back_with_the_cursor(
    stack: Stack, seeded: Seeded, page: Page, token_link: Callable[[str], str]
) -> None:
    rows = page.get_by_test_id("action-row")
    page.goto(token_link("/?limit=2"))
    seen: list[str] = []
    for number, count in ((1, 2), (2, 2), (3, 1)):
        expect(page.get_by_test_id("page-label")).to_have_text(f"Page {number}")
        expect(rows).to_have_count(count)
        seen += [rows.nth(i).get_attribute("data-id") or "" for i in range(count)]
        if number < 3:
            page.get_by_test_id("next-page").click()
    expect(page.get_by_test_id("next-page")).to_be_disabled()
    assert sorted(seen) == sorted([*seeded.pending, seeded.failed, seeded.completed])

    page.get_by_test_id("prev-page").click()
    expect(page.get_by_test_id("page-label")).to_have_text("Page 2")
    expect(rows).to_have_count(2)
    assert [rows.nth(i).get_attribute("data-id") for i in range(2)] == seen[2:4]


def test_without_the_token_the_dashboard_says_how_to_get_in(
    stack: Stack, page: Page, api_url: str
) -> None:
    # GIVEN the page opened without the link's token
    page.goto(f"{api_url}/")
    # THEN the API's refusal is shown, naming the header and the fix, and no action is listed
    message = page.get_by_test_id("message")
    expect(message).to_contain_text("Authorization")
    expect(message).to_contain_text("Bearer")
    expect(page.get_by_test_id("action-row")).to_have_count(0)


def test_dashboard_steers_an_action_and_filters_by_group_and_attention(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    deps = bootstrap.from_environment()
    start_action(
        StartCommand({"id": "sub:42:renew", "rate": "rate(1 hour)", "group": "sub-42"}), deps
    )
    start_action(StartCommand({"id": "other", "rate": "rate(1 hour)"}), deps)
    soon = iso(datetime.now(UTC) + timedelta(seconds=3))  # inside the horizon: an execution
    start_action(StartCommand({"id": "flaky", "rate": "rate(1 hour)", "startTime": soon}), deps)
    flaky = stack.record("flaky")
    assert flaky.execution_arn is not None
    # its execution stopped, so that the failure below is its first fire's outcome however
    # long this test takes to get there (a fire at +3 s would otherwise race it)
    assert stop_execution(stack.local.client("stepfunctions"), flaky.execution_arn, "test")
    name = flaky.execution_arn.rpartition(":")[2]  # its own execution's report
    failure = FireFailure(
        "flaky", flaky.generation, 1, flaky.execution_time, name, "FireFailed",
        execution_arn=flaky.execution_arn,
    )  # fmt: skip
    record_failure(failure, deps)  # CONTINUE: it goes on, needing attention

    # GIVEN the page, filtered to one group
    page.goto(token_link("/"))
    rows = page.get_by_test_id("action-row")
    expect(rows).to_have_count(3)
    page.get_by_test_id("group-filter").fill("sub-42")
    page.get_by_test_id("group-filter").press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-id", "sub:42:renew")
    expect(rows.first.get_by_test_id("row-group")).to_have_text("sub-42")

    # WHEN it is paused with a note THEN it reads Paused, with the note, and counts as paused
    rows.first.click()
    detail = page.get_by_test_id("detail")
    page.once("dialog", lambda dialog: dialog.accept("card expired"))
    detail.get_by_test_id("pause-button").click()
    expect(rows.first.get_by_test_id("row-status")).to_have_text("Paused")
    expect(detail.get_by_test_id("pause-note")).to_contain_text("card expired")
    expect(page.get_by_test_id("count-PAUSED-value")).to_have_text("1")

    # WHEN it is resumed THEN it is pending again
    detail.get_by_test_id("resume-button").click()
    expect(rows.first.get_by_test_id("row-status")).to_have_text("Pending")

    # WHEN Run now is clicked THEN the API accepts one fire now
    with page.expect_response(lambda r: r.url.endswith("/run-now")) as answer:
        detail.get_by_test_id("run-now-button").click()
    assert answer.value.status == 202, answer.value.text()
    assert stack.record("sub:42:renew").manual != ()

    # WHEN the attention card is clicked (all groups) THEN only the failed recurrence shows
    page.get_by_test_id("group-filter").fill("")
    page.get_by_test_id("group-filter").press("Enter")
    expect(page.get_by_test_id("count-ATTENTION-value")).to_have_text("1")
    page.get_by_test_id("count-ATTENTION").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-id", "flaky")
    expect(rows.first.get_by_test_id("attention-badge")).to_be_visible()
    rows.first.click()
    expect(detail.get_by_test_id("failed-fires")).to_contain_text("occurrence 1")
    expect(detail.get_by_test_id("retry-button")).to_be_visible()

    assert errors == [], errors


def test_the_dashboard_of_a_stack_behind_sigv4_works_through_tickwork_dashboard(
    stack: Stack, seeded: Seeded, page: Page
) -> None:
    """The deployed API takes only SigV4: the page, served by `tickwork dashboard`, lists and
    counts through the proxy that signs each call with the user's credentials."""
    from botocore.credentials import Credentials

    from tickwork_cli.dashboard import SigV4Signer, serving_dashboard
    from tickwork_local.server import LOCAL_CREDENTIALS

    credentials = Credentials(
        LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"], LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
    )
    with (
        stack.local.serving_api(auth="sigv4") as api,
        serving_dashboard(f"{api}/", SigV4Signer(credentials, stack.local.region)) as served,
    ):
        url, token = served
        page.goto(f"{url}/#token={token}")
        expect(page.get_by_test_id("action-row")).to_have_count(5)
        expect(page.get_by_test_id("message")).not_to_contain_text("Authorization")


def test_the_local_outbox_panel_shows_what_a_fire_sent(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    """On the local stack the dashboard shows the outbox: each message a fire sent, its fire.
    (This stack runs no executions: the message is kept as a fulfillment's call keeps it.)"""
    fire = FulfillmentRequest(
        action_id="dash:sqs",
        action="SQS_MESSAGE",
        occurrence=1,
        scheduled_time=datetime.now(UTC),
        data=TickData(),
        idempotency_key="0b9f7c1e-1111-5222-8333-444455556666",
    )
    stack.local.outbox.keep("queue", {"to": "dash-orders", "body": "order 7 is due"}, fire)

    page.goto(token_link("/"))

    panel = page.get_by_test_id("outbox")
    expect(panel).to_be_visible()
    expect(panel.get_by_test_id("outbox-row")).to_have_count(1)
    expect(panel.get_by_test_id("outbox-text")).to_have_text("order 7 is due")
    expect(panel).to_contain_text("dash:sqs #1")


def test_outbox_failures_show_and_filter_and_link_to_their_action(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    """A webhook answered 400 is not shown as delivered; the panel filters by kind and action,
    and a message's fire opens its action."""
    deps = bootstrap.from_environment()
    start_action(StartCommand({"id": "dash:hook", "delay": "1h", "data": {"n": 1}}), deps)

    def fire(action_id: str) -> FulfillmentRequest:
        return FulfillmentRequest(
            action_id=action_id, action="HTTP_REQUEST", occurrence=1,
            scheduled_time=datetime.now(UTC), data=TickData(),
            idempotency_key="0b9f7c1e-1111-5222-8333-444455556666",
        )  # fmt: skip

    outbox = stack.local.outbox
    outbox.keep("queue", {"to": "dash-orders", "body": "order 7 is due"}, fire("dash:sqs"))
    outbox.keep(
        "webhook",
        {"to": "https://hooks.example/x", "status": 400, "error": "400 Bad Request", "body": "{}"},
        fire("dash:hook"),
    )

    page.goto(token_link("/"))
    panel = page.get_by_test_id("outbox")
    rows = panel.get_by_test_id("outbox-row")
    expect(rows).to_have_count(2)
    refused = panel.locator('tr[data-failed="true"]')
    expect(refused).to_have_count(1)
    expect(refused.get_by_test_id("outbox-result")).to_have_text("answered 400")
    expect(panel.locator('tr[data-failed="false"]').get_by_test_id("outbox-result")).to_have_text(
        "sent"
    )

    panel.get_by_test_id("outbox-kind").select_option("webhook")
    expect(rows).to_have_count(1)
    panel.get_by_test_id("outbox-kind").select_option("")
    panel.get_by_test_id("outbox-id").fill("dash:sqs")
    panel.get_by_test_id("outbox-id").press("Enter")
    expect(rows).to_have_count(1)
    expect(panel.get_by_test_id("outbox-text")).to_have_text("order 7 is due")

    panel.get_by_test_id("outbox-id").fill("")
    panel.get_by_test_id("outbox-id").press("Enter")
    refused.get_by_test_id("outbox-fire").click()
    expect(page.get_by_test_id("detail-id")).to_contain_text("dash:hook")


def test_fires_lateness_retries_schedule_search_and_rejections_read_right(
    stack: Stack, seeded: Seeded, page: Page, token_link: Callable[[str], str]
) -> None:
    from tickwork.domain.announcements import Rejected
    from tickwork.fire.rejections import announce_rejected

    deps = bootstrap.from_environment()
    announce_rejected(
        Rejected(
            action_id="inv:9",
            request="Schedule Start",
            reason="InvalidStartRequest",
            message="rate: refused",
            problems=[{"field": "rate", "problem": "is zero", "fix": "give 1 minute or more"}],
            event_id="e-9",
        ),
        deps,
    )
    page.goto(token_link("/"))

    # a fired occurrence's outcome is a visible badge, and sub-second lateness is in ms
    page.locator(f'tr[data-id="{seeded.completed}"]').click()
    fired = page.get_by_test_id("history-row").first.get_by_test_id("status-badge")
    expect(fired).to_have_text("Fired")
    background = fired.evaluate("b => getComputedStyle(b).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    expect(page.get_by_test_id("history-table")).to_contain_text("300 ms")

    # the schedule shows its instants in local time like every other column, exact in its title
    schedule = page.get_by_test_id("detail").get_by_test_id("schedule-text")
    expect(schedule).not_to_contain_text("+00:00")
    assert "T" in (schedule.get_attribute("title") or "")

    # the failed action retried by hand counts its retry
    page.locator(f'tr[data-id="{seeded.failed}"]').click()
    page.get_by_test_id("retry-button").click()
    retried = page.locator(f'tr[data-id="{seeded.failed}"]').get_by_test_id("row-retries")
    expect(retried).to_have_attribute("title", "2 automatic (the last fire's), 0 by hand")

    # search by id prefix
    page.get_by_test_id("prefix-filter").fill("dash:pending:")
    page.get_by_test_id("prefix-filter").press("Enter")
    expect(page.get_by_test_id("action-row")).to_have_count(len(seeded.pending))

    # the rejections panel names the field and the fix
    row = page.get_by_test_id("rejection-row")
    expect(row).to_have_count(1)
    expect(row.get_by_test_id("rejection-problems")).to_contain_text("rate is zero — give 1 minute")


def test_at_a_narrow_width_nothing_runs_off_the_side(
    stack: Stack, seeded: Seeded, page: Page, token_link: Callable[[str], str]
) -> None:
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(token_link("/"))
    expect(page.get_by_test_id("action-row")).to_have_count(len(seeded.pending) + 2)
    page.locator(f'tr[data-id="{seeded.completed}"]').click()
    expect(page.get_by_test_id("detail")).to_be_visible()
    overflow = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert overflow[0] <= overflow[1], overflow
    cards = page.get_by_test_id("status-cards").bounding_box()
    assert cards is not None and cards["x"] + cards["width"] <= 420


def test_the_detail_shows_skipped_and_moved_occurrences_and_a_missed_fire(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    from tickwork.steering.occurrences import Which, move_occurrence, skip_occurrence

    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    deps = bootstrap.from_environment()
    start_action(StartCommand({"id": "occ:1", "rate": "rate(1 hour)"}), deps)
    first = stack.record("occ:1").execution_time
    assert first is not None
    skip_occurrence("occ:1", Which(number=2), "bank holiday", deps)
    move_occurrence("occ:1", Which(number=3), first + timedelta(hours=2, minutes=20), None, deps)
    # and an action whose fire the watchdog found missed (its note, as the watchdog writes it)
    start_action(StartCommand({"id": "late:1", "rate": "rate(1 hour)"}), deps)
    late = stack.record("late:1")
    stack.records.save(late.noted_missed(datetime.now(UTC)), expected_version=late.version)
    stack.wait_counted()  # the counts the page shows are folded from the writes

    page.goto(token_link("/"))
    rows = page.get_by_test_id("action-row")
    expect(rows).to_have_count(2)
    detail = page.get_by_test_id("detail")
    page.locator('[data-testid="action-row"][data-id="occ:1"]').click()
    changes = detail.get_by_test_id("occurrence-changes")
    expect(changes).to_contain_text("skipped (bank holiday)")
    expect(changes).to_contain_text("moved to")
    expect(page.get_by_test_id("count-ATTENTION-value")).to_have_text("1")
    page.locator('[data-testid="action-row"][data-id="late:1"]').click()
    expect(detail.get_by_test_id("missed-fire")).to_contain_text("occurrence 1")
    expect(detail.get_by_test_id("missed-fire")).to_contain_text("has not fired")
    assert errors == [], errors


def test_a_late_answer_for_an_earlier_filter_never_replaces_the_counts_shown(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    """On a loaded machine an answer can come back after a newer one: the counts of the group
    filtered a moment ago must not replace those of the filter now shown (a race the suite hit
    under load, reading 0 for a count that was 1 until the next refresh)."""
    from playwright.sync_api import Route

    deps = bootstrap.from_environment()
    for action_id, group in (("g:a1", "a"), ("g:b1", "b"), ("g:b2", "b")):
        start_action(StartCommand({"id": action_id, "rate": "rate(1 hour)", "group": group}), deps)
    stack.wait_counted()
    page.goto(token_link("/"))
    page.get_by_test_id("auto-refresh").uncheck()  # only the loads the test makes
    pending = page.get_by_test_id("count-PENDING-value")
    expect(pending).to_have_text("3")
    held: list[Route] = []

    def hold_the_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(lambda url: url.endswith("/stats?group=a"), hold_the_first)
    with page.expect_request(lambda r: r.url.endswith("/stats?group=a")):
        page.get_by_test_id("group-filter").fill("a")
        page.get_by_test_id("group-filter").press("Enter")
    expect(page.get_by_test_id("action-row")).to_have_count(1)
    with page.expect_response(lambda r: r.url.endswith("/stats")):
        page.get_by_test_id("group-filter").fill("")
        page.get_by_test_id("group-filter").press("Enter")
    expect(page.get_by_test_id("action-row")).to_have_count(3)
    assert len(held) == 1
    with page.expect_response(lambda r: r.url.endswith("/stats?group=a")):
        held[0].continue_()
    with pytest.raises(AssertionError):  # group a's count (1) never shows
        expect(pending).to_have_text("1", timeout=2000)
    expect(pending).to_have_text("3")


def test_a_late_not_found_for_one_action_never_closes_the_detail_of_another(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    """An operator opens one action's detail, then another's before the first answer came: if
    the first answer is a late 404 (the action purged meanwhile), the detail shown stays; a 404
    for the action shown closes its detail."""
    from playwright.sync_api import Route

    deps = bootstrap.from_environment()
    for action_id in ("d:1", "d:2"):
        start_action(StartCommand({"id": action_id, "rate": "rate(1 hour)"}), deps)
    page.goto(token_link("/"))
    page.get_by_test_id("auto-refresh").uncheck()  # only the loads the test makes
    expect(page.get_by_test_id("action-row")).to_have_count(2)
    detail = page.get_by_test_id("detail")
    held: list[Route] = []
    page.route(lambda url: url.endswith("/actions/d%3A1"), lambda route: held.append(route))
    with page.expect_request(lambda r: r.url.endswith("/actions/d%3A1")):
        page.locator('[data-testid="action-row"][data-id="d:1"]').click()
    page.locator('[data-testid="action-row"][data-id="d:2"]').click()
    expect(detail.get_by_test_id("detail-id")).to_contain_text("d:2")
    assert len(held) == 1

    with page.expect_response(lambda r: r.url.endswith("/actions/d%3A1")):
        held[0].fulfill(status=404, json={"message": "no action d:1"})
    with pytest.raises(AssertionError):  # the late 404 never closes d:2's detail
        expect(detail).to_be_hidden(timeout=2000)
    expect(detail.get_by_test_id("detail-id")).to_contain_text("d:2")

    # WHEN the action shown is gone by its next load THEN its detail closes
    page.route(
        lambda url: url.endswith("/actions/d%3A2"),
        lambda route: route.fulfill(status=404, json={"message": "no action d:2"}),
    )
    page.locator('[data-testid="action-row"][data-id="d:2"]').click()
    expect(detail).to_be_hidden()


def test_the_detail_shows_an_actions_retry_policy_dead_letters_and_a_fire_retrying(
    stack: Stack, page: Page, token_link: Callable[[str], str]
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    deps = bootstrap.from_environment()
    queue = stack.local.client("sqs").create_queue(QueueName="dash-dlq")["QueueUrl"]
    dlq = f"arn:aws:sqs:us-east-1:123456789012:{queue.rsplit('/', 1)[1]}"
    policy = {"maximumRetryAttempts": 20, "maximumEventAgeSeconds": 3600, "deadLetterArn": dlq}
    start_action(StartCommand({"id": "bill:1", "duration": "3s", **policy}), deps)
    # its fire under way, two attempts failed (as the fulfill step notes them)
    record = stack.record("bill:1")
    assert record.execution_arn is not None
    claimed = record.claimed(datetime.now(UTC), record.execution_arn, 20)
    stack.records.save(claimed, expected_version=record.version)
    failing = stack.record("bill:1")
    noted = failing.noted_failure(datetime.now(UTC), "TransientFulfillmentError: 503", 1)
    stack.records.save(noted, expected_version=failing.version)

    page.goto(token_link("/"))
    page.locator('[data-testid="action-row"][data-id="bill:1"]').click()
    detail = page.get_by_test_id("detail")
    expect(detail.get_by_test_id("detail-retry-policy")).to_contain_text(
        "20 retries, within 3600 s"
    )
    expect(detail.get_by_test_id("detail-dead-letter")).to_have_text(dlq)
    retrying = detail.get_by_test_id("retrying")
    expect(retrying).to_contain_text("2 attempt(s) made, 19 left")
    assert errors == [], errors


_TIME = r"\d{2}:\d{2}:\d{2} [A-Z]{2,5}([+-]\d{1,2}(:\d{2})?)?"  # 24-hour, with its zone


@pytest.mark.parametrize("width", [360, 420, 768, 1280])
def test_the_dashboard_reads_from_a_phone_to_a_wide_screen(
    stack: Stack, seeded: Seeded, page: Page, token_link: Callable[[str], str], width: int
) -> None:
    import re

    long_id = "sub:cust-42:downgrade"
    start_action(StartCommand({"id": long_id, "delay": "1h"}), bootstrap.from_environment())
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(token_link("/"))
    expect(page.get_by_test_id("action-row")).to_have_count(len(seeded.pending) + 3)

    # nothing runs off the side
    scroll, client = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert scroll <= client, (width, scroll, client)
    row = page.locator(f'tr[data-id="{long_id}"]')
    for cell in ("open-action", "row-status", "row-next", "row-result"):
        box = row.get_by_test_id(cell).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (cell, box)
    # the id wraps at its separators, never a character a line: at most 3 lines
    id_box = row.get_by_test_id("open-action").bounding_box()
    line = page.evaluate(
        "(e) => parseFloat(getComputedStyle(e).lineHeight) || 20",
        row.get_by_test_id("open-action").element_handle(),
    )
    assert id_box is not None and id_box["height"] <= 3 * line + 2, (id_box, line)
    # a card at a phone's width: the list's header row is not shown, each value labelled
    header = page.locator('table[data-testid="actions-table"] thead')
    if width <= 420:
        expect(header).to_be_hidden()
        label = page.evaluate(
            "(e) => getComputedStyle(e, '::before').content",
            row.get_by_test_id("row-next").element_handle(),
        )
        assert label == '"Next fire"', label
    else:
        expect(header).to_be_visible()
    # every time in one 24-hour form with its zone, the exact instant in its tooltip
    next_fire = row.get_by_test_id("row-next")
    assert re.search(_TIME, next_fire.inner_text()), next_fire.inner_text()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T[\d:.]+Z", next_fire.get_attribute("title") or "")
    result = page.locator(f'tr[data-id="{seeded.completed}"]').get_by_test_id("row-result")
    expect(result).to_contain_text("Fired")
    assert re.search(_TIME, result.inner_text()), result.inner_text()
    assert not re.search(r"\b(AM|PM)\b", page.locator("body").inner_text())

    # tapping an action brings its details into view
    page.locator(f'tr[data-id="{seeded.completed}"]').click()
    detail = page.get_by_test_id("detail")
    expect(detail).to_be_visible()
    top = page.evaluate("(e) => e.getBoundingClientRect().top", detail.element_handle())
    assert -2 <= top < 800, top  # (scrolled to its top, to the subpixel)
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"dashboard-{width}px.png"), full_page=True)
