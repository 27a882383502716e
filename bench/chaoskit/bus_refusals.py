"""The bus refusing some of tickwork's events for a while, as EventBridge does when an account
is throttled or the service is down: PutEvents answers with the entry failed (``FailedEntryCount``
1, ``ThrottlingException``), so the state machine's ``events:putEvents`` task fails with
``EventBridge.FailedEntry`` and retries, and tickwork's own publisher raises.

``BusRefusals(choose, times)`` refuses each event that ``choose`` names a key for, the first
``times`` times that key is put: with ``times`` = 6, a tick's put by the Fulfill task and 5
attempts of Emit tick (the next gets it through), or every attempt of the Report failure task
(the first and its 5 retries: the reconciler puts the report there). Installed on moto's
EventBridge backend, so it sees every PutEvents, from the state machine, the functions and the
tests alike.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

from moto.events.models import EventsBackend

__all__ = ["BusRefusals", "tick_or_report_of"]

# The first put of a tick or report and its 5 retries (all of Report failure's attempts).
PUT_ATTEMPTS = 6


def tick_or_report_of(
    prefix: str, detail_type: str, occurrence: int | None = None
) -> Callable[[dict[str, Any]], Hashable]:
    """A chooser: each ``detail_type`` event (Schedule Tick or Schedule Failed) of an action
    whose id starts with ``prefix`` (of that ``occurrence`` only, when given), keyed on its
    fire: (detail type, id, generation, occurrence)."""

    def choose(entry: dict[str, Any]) -> Hashable:
        if entry.get("DetailType") != detail_type:
            return None
        detail = json.loads(entry.get("Detail") or "{}")
        action_id = str(detail.get("id", ""))
        if not action_id.startswith(prefix) or detail.get("manual"):
            return None
        if occurrence is not None and detail.get("occurrence") != occurrence:
            return None
        return (detail_type, action_id, detail.get("generation"), detail.get("occurrence"))

    return choose


class BusRefusals:
    def __init__(
        self,
        choose: Callable[[dict[str, Any]], Hashable],
        times: int = PUT_ATTEMPTS,
        on_first_refusal: Callable[[Any], None] | None = None,
    ) -> None:
        self._choose = choose
        self._times = times
        self._on_first_refusal = on_first_refusal
        self._lock = threading.Lock()
        self.refused: Counter[Hashable] = Counter()
        self.accepted: Counter[Hashable] = Counter()
        self._original: Callable[..., list[dict[str, Any]]] | None = None

    def install(self) -> BusRefusals:
        original = EventsBackend.put_events
        self._original = original
        refusals = self

        def put_events(backend: EventsBackend, events: list[dict[str, Any]]) -> Any:
            refused = [refusals._refuses(event) for event in events]
            passed = [event for event, no in zip(events, refused, strict=True) if not no]
            answers = iter(original(backend, passed) if passed else [])
            return [
                {"ErrorCode": "ThrottlingException", "ErrorMessage": "Rate exceeded"}
                if no
                else next(answers)
                for no in refused
            ]

        EventsBackend.put_events = put_events  # type: ignore[method-assign]
        return self

    def uninstall(self) -> None:
        if self._original is not None:
            EventsBackend.put_events = self._original  # type: ignore[method-assign]
            self._original = None

    def _refuses(self, event: dict[str, Any]) -> bool:
        key = self._choose(event)
        if key is None:
            return False
        with self._lock:
            refused = self.refused[key] < self._times
            if refused:
                self.refused[key] += 1
            else:
                self.accepted[key] += 1
            first = refused and self.refused[key] == 1
        if first and self._on_first_refusal is not None:
            self._on_first_refusal(key)
        return refused
