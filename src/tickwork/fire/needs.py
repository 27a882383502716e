"""What the fire protocol's use cases ask of the ports, from least to most (``tickwork.needs``
has each capability). A function's signature names the one it uses:

- ``Keys`` — the stack's keys (seals, proofs): ``sealing``, ``proofs``;
- ``Names`` — the machines, and the keys their executions are named and their orders proved
  under: ``orders``, ``planning``, ``grouping``;
- ``Launches`` — a record read and written, and its fire's execution started: ``launch``, the
  backfill step, a fire moving its own occurrence;
- ``Pumps`` — and the parked fires: ``pump``;
- ``Watches`` — the queries, to find the fires missed: ``watchdog``;
- ``Records`` — a fire recorded, with what waited for it (a deferred update is a Start: the
  action types and calendars) and what it refuses: ``record``, ``deferred``, ``start_record``;
- ``Fires`` — a fire run: its slots and a batch's tabs: ``fulfill``, ``follow_on``;
- ``Repairs`` — all of it, and the queries: ``reconcile``.
"""

from __future__ import annotations

from typing import Protocol

from tickwork.needs import (
    Announces,
    Configured,
    KeepsRejections,
    ReachesTargets,
    ReadsCalendars,
    ReadsTypes,
    Starts,
    TakesSlots,
    TellsTime,
    UsesParked,
    UsesQueries,
    UsesRecords,
    UsesTabs,
)

__all__ = [
    "Admits",
    "Fires",
    "Keys",
    "Launches",
    "Names",
    "Pumps",
    "Records",
    "Refuses",
    "Repairs",
    "Seals",
    "Watches",
]


class Keys(Configured, Protocol): ...


class Seals(Keys, ReadsCalendars, Protocol):
    """The keys, and the calendars a record is sealed with."""


class Names(Keys, Starts, Announces, Protocol): ...


class Launches(Names, UsesRecords, TellsTime, Protocol): ...


class Pumps(Launches, UsesParked, Protocol): ...


class Watches(Keys, UsesRecords, UsesQueries, Announces, Protocol): ...


class Refuses(Announces, KeepsRejections, TellsTime, Protocol):
    """A refusal made known: the event, and the rejections kept."""


class Admits(Names, ReadsCalendars, ReadsTypes, TellsTime, Protocol):
    """What a Start becomes: checked against the action types and the calendars."""


class Records(Launches, Admits, Refuses, ReachesTargets, Protocol):
    """And a failed fire's dead-letter queue reached."""


class Fires(Records, TakesSlots, UsesTabs, Protocol): ...


class Repairs(Fires, UsesQueries, UsesParked, Protocol):
    """All of it: the queries to find what needs repair, the parked fires the pump missed."""
