"""A Schedule Start detail built from command-line flags."""

from __future__ import annotations

import json
from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.json_text import loads_strict

__all__ = ["start_detail"]


def start_detail(
    *,
    action_id: str | None,
    at: str | None,
    in_: str | None,
    cron: str | None,
    rate: str | None,
    every: str | None,
    first: str | None,
    timezone: str | None,
    times: int | None,
    action: str | None,
    catch_up: str | None = None,
    catch_up_window: str | None = None,
    misfire_threshold: str | None = None,
    data: str | None,
    metadata: str | None,
    expression: str | None = None,
    group: str | None = None,
    on_failure: str | None = None,
    on_unknown_outcome: str | None = None,
    role_arn: str | None = None,
) -> dict[str, Any]:
    whens = {
        "--at": at,
        "--in": in_,
        "--cron": cron,
        "--rate": rate,
        "--every": every,
        "--expression": expression,
    }
    given = [flag for flag, value in whens.items() if value is not None]
    if len(given) != 1:
        raise ValidationFailed.of(
            "when",
            f"{'no' if not given else ' and '.join(given)} when given",
            "give exactly one of --at TIME, --in DURATION, --cron EXPR, --rate EXPR, "
            "--every PRESET, --expression EXPR",
        )
    detail: dict[str, Any] = {}
    if action_id:
        detail["id"] = action_id
    if at is not None:
        detail["at"] = at
    if in_ is not None:
        detail["delay"] = in_
    if cron is not None:
        detail["cron"] = cron
    if rate is not None:
        detail["rate"] = rate
    if expression is not None:
        detail["scheduleExpression"] = expression
    if every is not None:
        detail["frequency"] = every.upper()
        if first:
            detail["at"] = first
    if timezone:
        detail["timezone"] = timezone
    if times is not None:
        detail["executionRemainder"] = times
    if action:
        detail["action"] = action
    for key, value in (
        ("catchUp", catch_up and catch_up.upper()),
        ("catchUpWindow", catch_up_window),
        ("misfireThreshold", misfire_threshold),
        ("group", group),
        ("onFailure", on_failure and on_failure.upper()),
        ("onUnknownOutcome", on_unknown_outcome and on_unknown_outcome.upper()),
        ("roleArn", role_arn),
    ):
        if value is not None:
            detail[key] = value
    for flag, text, key in (("--data", data, "data"), ("--metadata", metadata, "metadata")):
        if text is not None:
            detail[key] = _json_object(flag, text)
    return detail


def _json_object(flag: str, text: str) -> dict[str, Any]:
    try:
        value = loads_strict(text, field=flag)
    except json.JSONDecodeError as error:
        raise ValidationFailed.of(
            flag, f"is not JSON ({error.msg})", f"quote it: {flag} '{{\"k\": 1}}'"
        ) from error
    if not isinstance(value, dict):
        raise ValidationFailed.of(flag, "must be a JSON object", f"e.g. {flag} '{{\"k\": 1}}'")
    return value
