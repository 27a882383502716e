"""Settings read once per cold start from the function's environment (set in template.yaml)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    table_name: str
    event_bus_name: str
    state_machine_arn: str
    event_source: str = "tickwork"
    lock: timedelta = timedelta(minutes=2)
    leg: timedelta = timedelta(days=300)
    early_tolerance: timedelta = timedelta(seconds=5)
    past_grace: timedelta = timedelta(seconds=60)
    history_limit: int = 20
    finished_ttl: timedelta = timedelta(days=30)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def seconds(name: str, default: timedelta) -> timedelta:
            return timedelta(seconds=float(env[name])) if env.get(name) else default

        return cls(
            table_name=env["TABLE_NAME"],
            event_bus_name=env["EVENT_BUS_NAME"],
            state_machine_arn=env["STATE_MACHINE_ARN"],
            event_source=env.get("EVENT_SOURCE", "tickwork"),
            lock=seconds("LOCK_SECONDS", cls.lock),
            leg=seconds("LEG_SECONDS", cls.leg),
            early_tolerance=seconds("EARLY_TOLERANCE_SECONDS", cls.early_tolerance),
            past_grace=seconds("PAST_GRACE_SECONDS", cls.past_grace),
            history_limit=int(env.get("HISTORY_LIMIT", cls.history_limit)),
            finished_ttl=timedelta(days=float(env.get("FINISHED_TTL_DAYS", 30))),
        )
