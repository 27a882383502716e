"""What steering's use cases ask of the ports (``tickwork.needs`` has each capability):

- ``Manages`` — the stack's calendars, read and removed: ``calendars``;
- ``Steers`` — a record read and written as its user asks, and its fire launched, planned or
  stopped as the protocol does it (what recording a fire needs: a replace is a Start):
  ``start``, ``stop``, ``pause``, ``run_now``, ``retry``, ``occurrences``, ``lock``,
  ``backfill``, and a calendar written (sealed; its schedules checked and planned again);
- ``Sweeps`` — and the pages of a selection: ``bulk``;
- ``Takes`` — and the ledger of signatures: ``intake``, which takes the bus's events.
"""

from __future__ import annotations

from typing import Protocol

from tickwork.fire.needs import Records
from tickwork.needs import Configured, ReadsCalendars, TellsTime, UsesQueries, UsesSignatures

__all__ = ["Manages", "Steers", "Sweeps", "Takes"]


class Manages(ReadsCalendars, TellsTime, Configured, Protocol):
    """The calendars, and the keys their seals are checked with."""


class Steers(Records, Protocol): ...


class Sweeps(Steers, UsesQueries, Protocol): ...


class Takes(Steers, UsesSignatures, Protocol): ...
