"""Delivers EventBridge rule matches to our functions, as EventBridge's Lambda targets do.

moto's EventBridge delivers matches to SQS but not to Lambda. Each function rule gets its own
queue as target; a poller thread hands every message to the function in process. Pollers long
poll (moto wakes a waiting receive as soon as a message arrives), so a delivery is immediate and
an idle stack costs no CPU. A received message stays hidden while its batch is handled (a
busy stack must not hand it out twice); a handler that raises makes it visible again after
``retry_seconds`` (EventBridge's retry policy); after ``max_receives`` it goes to the
dead-letter queue, as the template's DeadLetterConfig would.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import uuid
from collections.abc import Callable
from typing import Any

from tickwork_local.activity import Activity
from tickwork_local.useful_runs import UsefulRuns
from tickwork_local.virtual_clock import LocalClock

__all__ = ["QueuePoller", "ScheduleRunner", "as_delivered"]

log = logging.getLogger(__name__)

_WAKE = '{"tickwork-local": "a stopping poller\'s wake-up"}'


def as_delivered(body: str, account: str) -> dict[str, Any]:
    """The event as EventBridge delivers it: moto leaves "account" out of the envelope."""
    event: dict[str, Any] = json.loads(body)
    event.setdefault("account", account)
    return event


class QueuePoller(threading.Thread):
    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        deliver: Callable[[dict[str, Any]], str | None],
        dead_letter_url: str | None,
        account: str,
        max_receives: int = 5,
        wait_seconds: int = 1,
        retry_seconds: int = 1,
        hidden_seconds: int = 300,
    ) -> None:
        super().__init__(name=f"poll-{queue_url.rsplit('/', 1)[-1]}", daemon=True)
        self._sqs = sqs
        self.queue_url = queue_url
        self._deliver = deliver
        self._dead_letter_url = dead_letter_url
        self._account = account
        self._max_receives = max_receives
        self._wait = wait_seconds  # also how long stop() may take to be noticed
        self._retry = retry_seconds
        self._hidden = hidden_seconds  # while a received batch is being handled
        self._stopped = threading.Event()
        self.delivered = 0

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        """Stop polling: a receive waiting on the queue is woken by a message of no use (a
        stack per test would otherwise wait out every poller's long poll when it stops)."""
        self._stopped.set()
        try:
            self._sqs.send_message(QueueUrl=self.queue_url, MessageBody=_WAKE)
        except Exception:  # the emulator already gone: the poll ends at its timeout
            log.debug("could not wake poller %s", self.name, exc_info=True)

    def run(self) -> None:
        while not self._stopped.is_set():
            try:
                self.poll_once(self._wait)
            except Exception:  # the emulator going away at shutdown, or a bug: keep polling
                if self._stopped.is_set():
                    return
                log.exception("poller %s failed", self.name)
                self._stopped.wait(self._wait)

    def poll_once(self, wait_seconds: int = 0) -> int:
        response = self._sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=10,
            AttributeNames=["ApproximateReceiveCount"],
            WaitTimeSeconds=wait_seconds,
            VisibilityTimeout=self._hidden,
        )
        messages = response.get("Messages", [])
        if self._stopped.is_set():  # stopping: what was received stays for no one
            return 0
        delivered: list[dict[str, str]] = []
        for message in messages:
            event = as_delivered(message["Body"], self._account)
            error_type = self._deliver(event)
            receives = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
            if error_type is None:
                delivered.append(
                    {"Id": str(len(delivered)), "ReceiptHandle": message["ReceiptHandle"]}
                )
                self.delivered += 1
            elif receives >= self._max_receives and self._dead_letter_url:
                log.warning(
                    "dead-lettering %s after %d deliveries (%s)",
                    event.get("id"),
                    receives,
                    error_type,
                )
                self._sqs.send_message(QueueUrl=self._dead_letter_url, MessageBody=message["Body"])
                self._sqs.delete_message(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
            else:  # delivered again after the retry delay, as EventBridge retries a target
                self._sqs.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=message["ReceiptHandle"],
                    VisibilityTimeout=self._retry,
                )
        if delivered:  # one call for the batch, as Lambda's poller deletes a batch it handled
            self._sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=delivered)
        return len(messages)


class ScheduleRunner(threading.Thread):
    """Runs a function on its EventBridge schedule (``rate(...)``), as a Schedule event does,
    at the instants of the stack's clock: every ``interval`` from when the stack started.

    moto keeps scheduled rules but never fires them. On virtual time, the time machine may
    leave out runs that would find nothing (``useful``, ``skip_to``): a run is left out only
    when no work has ended since this runner last ran (``Activity.news``) and ``useful()``, the
    earliest moment its function could find work, lies beyond it.
    """

    def __init__(
        self,
        schedule: str,
        deliver: Callable[[dict[str, Any]], str | None],
        account: str,
        clock: LocalClock,
        activity: Activity,
        useful: UsefulRuns | None = None,
        lean: bool = False,
        fresh: Callable[[], None] = lambda: None,
    ) -> None:
        from tickwork.domain.schedule.rate import parse_rate

        super().__init__(name=f"schedule-{schedule}", daemon=True)
        self.interval = parse_rate(schedule, "Schedule").total_seconds()
        self._deliver = deliver
        self._account = account
        self._clock = clock
        self._activity = activity
        self._useful = useful
        # Lean (a test's stack): a run ``useful`` says would find nothing is left out on the
        # wall clock too, after a fresh glance (``fresh``), as virtual time leaves it out.
        self.lean = lean
        self._fresh = fresh
        self._stopped = threading.Event()
        self._token = activity.hold(self.name)
        self._base = clock.timestamp()
        self.next_run = self._base + self.interval
        self._seen: int | None = None  # Activity.news after the last run (None: never ran)
        self._last_run = -math.inf  # the instant of the last run
        self._skip_to: float | None = None  # runs before this instant are left out
        self._moved = False  # skip_to changed while waiting: work out the next run again
        self.runs = 0
        self.skipped = 0
        self.function = ""  # the logical id of the function it runs (the stack names it)

    def stop(self) -> None:
        self._stopped.set()
        self._clock.wake_all()

    @property
    def stopped(self) -> bool:
        """Stopped (a test's pump or reconciler down): the time machine waits for it no more."""
        return self._stopped.is_set()

    # --- what the time machine asks -----------------------------------------------------------
    def first_run_from(self, moment: float) -> float:
        """The first instant of this schedule at or after ``moment`` (inf: never)."""
        if math.isinf(moment):
            return moment
        periods = math.ceil(max(0.0, moment - self._base) / self.interval - 1e-9)
        return self._base + periods * self.interval

    def next_useful_run(self) -> float:
        """When this runner must run next: its next instant, unless nothing has happened since
        its last run and ``useful()`` says its function can find work only later (inf: never
        until something happens)."""
        if self._useful is None or self._seen is None:
            return self.next_run
        if not self._useful.exact and self._seen != self._activity.news:
            return self.next_run
        moment = self._useful.moment(self._last_run)
        return math.inf if moment is None else self.first_run_from(max(moment, self.next_run))

    def skip_to(self, moment: float | None) -> None:
        """Leave out the runs before ``moment`` (None: run every one again)."""
        if moment != self._skip_to:
            self._skip_to = moment
            self._moved = True
            self._clock.wake_all()

    def acknowledged(self) -> bool:
        """The last ``skip_to`` has been taken in (until then the runner counts as busy: its
        thread may still wait for an instant it no longer runs at)."""
        return not self._moved or self._stopped.is_set() or not self.is_alive()

    # --- running ------------------------------------------------------------------------------
    def run(self) -> None:
        self._activity.adopt(self._token)
        try:
            while not self._stopped.is_set():
                self._moved = False
                skip_to = self._skip_to
                wake_at = self.next_run
                if skip_to is not None and skip_to > self.next_run:
                    wake_at = self.first_run_from(skip_to)
                if not self._clock.wait_until(wake_at, self._interrupted):
                    if self._skip_to is None:  # skipping ended: the runs before now are gone
                        self._leave_out_until(self._clock.timestamp())
                    continue
                if skip_to is not None and self.next_run < skip_to:
                    self._leave_out_until(min(self._clock.timestamp(), skip_to))
                    continue
                ran_at = self._last_run = self.next_run
                if self._finds_nothing():
                    self._left_out(ran_at, 1)
                else:
                    self._run_once()
                # The next instant; one passed meanwhile is not made up for, as EventBridge.
                now = self._clock.timestamp()
                self.next_run = self.first_run_from(max(ran_at + self.interval, now))
        finally:
            self._activity.release(self._token)

    def _leave_out_until(self, moment: float) -> None:
        """Leave out the runs from ``next_run`` to before ``moment``, doing what they would
        have done (``UsefulRuns.left_out``); ``next_run`` becomes the first at or after it."""
        following = self.first_run_from(moment)
        if following <= self.next_run:
            return
        last = following - self.interval
        self._left_out(last, round((last - self.next_run) / self.interval) + 1)
        self.next_run = following

    def _finds_nothing(self) -> bool:
        """Lean only: whether a run now would find nothing, by a fresh glance at the table (the
        answer virtual time leaves runs out by; a run that is made finds nothing at worst)."""
        if not self.lean or self._useful is None or not self._useful.exact or self._seen is None:
            return False
        try:
            self._fresh()
            moment = self._useful.moment(self._last_run)
        except Exception:  # the table changed while glanced at: make the run
            return False
        return moment is None or moment > self._clock.timestamp()

    def _left_out(self, last: float, runs: int) -> None:
        """``runs`` runs, the last at ``last``, were left out: do what they would have done."""
        self.skipped += runs
        if self._useful is not None:
            try:
                self._useful.left_out(last)
            except Exception:
                log.exception("%s: the runs left out could not do their part", self.name)

    def _interrupted(self) -> bool:
        return self._stopped.is_set() or self._moved

    def _run_once(self) -> None:
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": self._account,
            "time": self._clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "region": "us-east-1",
            "resources": [],
            "detail": {},
        }
        try:
            with self._activity.routine():
                self._deliver(event)
        except Exception:
            log.exception("scheduled run of %s failed", self.name)
        self.runs += 1
        self._seen = self._activity.news
