"""AWS list prices, in one place: us-east-1, on-demand, x86 Lambda, as published in 2026-11.

Change a price here and every figure in bench/RESULTS.md follows on the next ``make bench``.
"""

from __future__ import annotations

STEP_FUNCTIONS_STANDARD_PER_TRANSITION = 0.025 / 1_000
LAMBDA_PER_REQUEST = 0.20 / 1_000_000
LAMBDA_PER_GB_SECOND = 0.0000166667
DYNAMODB_PER_WRITE_REQUEST_UNIT = 0.625 / 1_000_000  # on-demand, per 1 KB written
DYNAMODB_PER_READ_REQUEST_UNIT = 0.125 / 1_000_000  # on-demand, per 4 KB strongly read
EVENTBRIDGE_PER_CUSTOM_EVENT = 1.00 / 1_000_000  # PutEvents, per 64 KB entry
EVENTBRIDGE_SCHEDULER_PER_INVOCATION = 1.00 / 1_000_000  # 14 M free a month not counted

MILLION = 1_000_000


def per_million(
    units: float,
    *,
    transitions: float,
    requests: float,
    gb_seconds: float,
    read_units: float,
    write_units: float,
    events: float,
) -> dict[str, float]:
    """What ``units`` fires (or actions) used, in dollars per million of them, by service."""
    scale = MILLION / units
    return {
        "Step Functions": transitions * STEP_FUNCTIONS_STANDARD_PER_TRANSITION * scale,
        "Lambda": (requests * LAMBDA_PER_REQUEST + gb_seconds * LAMBDA_PER_GB_SECOND) * scale,
        "DynamoDB": (
            read_units * DYNAMODB_PER_READ_REQUEST_UNIT
            + write_units * DYNAMODB_PER_WRITE_REQUEST_UNIT
        )
        * scale,
        "EventBridge": events * EVENTBRIDGE_PER_CUSTOM_EVENT * scale,
    }
