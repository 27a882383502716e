"""Cancels, updates and pauses sent at a fire's lock boundary (fire time - LockSeconds, +-
jitter): after the fire's execution — its batch's, when it is in one — was launched.

Each ``cancel-race`` action gets ``DELETE /actions/{id}``, each ``update-race`` action
``PATCH /actions/{id}`` with the data's body version bumped to 2, each ``pause-race`` action
``POST /actions/{id}/pause``. Whether tickwork applied it at once (200), deferred it to after
the imminent fire (202: a recurrence inside its lock) or refused it (409: a one-off inside its
lock) decides what the run then expects to fire.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import requests

from chaoskit.plan import Kind, PlannedAction
from chaoskit.timeline import Timeline
from tickwork_local.process import LocalProcess

__all__ = ["RaceOutcome", "Races"]

LATE_LIMIT_SECONDS = 0.5  # a step the timeline ran later than this is not sent
_OUTCOMES = {"cancel": "cancelled", "pause": "paused"}  # an accepted answer's outcome
_OPERATIONS = {Kind.CANCEL: "cancel", Kind.UPDATE: "update", Kind.PAUSE: "pause"}


@dataclass(frozen=True)
class RaceOutcome:
    action_id: str
    operation: str  # cancel | update | pause
    target: int  # the occurrence whose lock boundary was raced
    sent: float
    answered: float
    status: int  # HTTP status; 0 = not sent (run behind, or the stack down), -1 = no answer
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        """Applied at once (200)."""
        if self.operation in _OUTCOMES:
            return self.status == 200 and self.body.get("outcome") == _OUTCOMES[self.operation]
        return self.status == 200

    @property
    def deferred(self) -> bool:
        """Accepted inside a recurrence's lock (202): it applies after the imminent fire."""
        return self.status == 202

    @property
    def applies_after(self) -> int:
        """The occurrence a deferred change waits for."""
        if self.operation in _OUTCOMES:
            return int(self.body["appliesAfter"]["occurrence"])
        return int(self.body["occurrence"])


class Races:
    def __init__(self, stack: LocalProcess, url: str) -> None:
        self._stack = stack
        self._url = url
        self.outcomes: dict[str, RaceOutcome] = {}

    def boundary(self, action: PlannedAction, first_fire: float) -> float:
        """When the raced fire's lock begins."""
        target = first_fire + (action.race_occurrence - 1) * action.interval
        return target - self._stack.lock_seconds

    def schedule(self, timeline: Timeline, action: PlannedAction, first_fire: float) -> None:
        send_at = self.boundary(action, first_fire) + action.race_offset
        operation = _OPERATIONS[action.kind]
        timeline.at(
            send_at, f"{operation} {action.id}", lambda: self._race(action, operation, send_at)
        )

    def _race(self, action: PlannedAction, operation: str, send_at: float) -> None:
        self._stack.up.wait(timeout=LATE_LIMIT_SECONDS)  # down: killed, restarting
        sent = time.time()
        if sent > send_at + LATE_LIMIT_SECONDS:
            self.outcomes[action.id] = RaceOutcome(
                action.id, operation, action.race_occurrence, sent, sent, 0
            )
            return
        address = f"{self._stack.api_url}/actions/{action.id}"
        try:
            if operation == "cancel":
                answer = requests.delete(address, headers=self._stack.api_headers, timeout=60)
            elif operation == "pause":
                answer = requests.post(
                    f"{address}/pause",
                    json={"note": "chaos: paused after its launch"},
                    headers=self._stack.api_headers,
                    timeout=60,
                )
            else:
                answer = requests.patch(
                    address,
                    json={"data": action.data(self._url, version=2)},
                    headers=self._stack.api_headers,
                    timeout=60,
                )
            status, body = answer.status_code, _json(answer)
        except requests.RequestException as error:
            status, body = -1, {"error": str(error)}
        self.outcomes[action.id] = RaceOutcome(
            action.id, operation, action.race_occurrence, sent, time.time(), status, body
        )

    def timings(
        self, first_fires: dict[str, float], plan: dict[str, PlannedAction]
    ) -> list[dict[str, Any]]:
        """Each race's send and answer times relative to its lock boundary, with the answer."""
        rows = []
        for action_id, outcome in sorted(self.outcomes.items()):
            boundary = self.boundary(plan[action_id], first_fires[action_id])
            rows.append(
                {
                    "id": action_id,
                    "operation": outcome.operation,
                    "occurrence": outcome.target,
                    "sent_after_boundary": round(outcome.sent - boundary, 3),
                    "answered_after_boundary": round(outcome.answered - boundary, 3),
                    "status": outcome.status,
                    "accepted": outcome.accepted,
                }
            )
        return rows

    def answered(self, operation: str) -> int:
        """How many requests of this operation tickwork answered with 200, 202 or 409."""
        return sum(
            1
            for outcome in self.outcomes.values()
            if outcome.operation == operation and outcome.status in (200, 202, 409)
        )

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = {}
        for outcome in self.outcomes.values():
            verdict = "accepted" if outcome.accepted else f"answered {outcome.status}"
            if outcome.deferred:
                verdict = "deferred to after the imminent fire"
            if outcome.status == 200 and not outcome.accepted:
                verdict = f"answered 200 ({outcome.body.get('outcome')})"
            if outcome.status == 0:
                verdict = "not sent (run behind or stack down)"
            label = f"{outcome.operation} {verdict}"
            tally[label] = tally.get(label, 0) + 1
        return dict(sorted(tally.items()))


def _json(answer: requests.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {"text": answer.text[:500]}
    return body if isinstance(body, dict) else {"body": body}
