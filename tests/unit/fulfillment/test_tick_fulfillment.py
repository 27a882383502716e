"""TICK: any JSON object is accepted; the tick event is the delivery."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.unit.fulfillment.registry_support import builtin_registry
from tickwork.fulfillment import FulfillmentRequest, TickData, TickFulfillment


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({}, id="empty"),
        pytest.param({"anything": {"nested": [1, 2, None]}, "n": 1.5}, id="nested"),
    ],
)
def test_tick_accepts_any_json_object_and_keeps_it(data: dict) -> None:
    # GIVEN the default registry WHEN TICK data is validated
    parsed = builtin_registry().validate("TICK", data)
    # THEN it is accepted unchanged
    assert isinstance(parsed, TickData)
    assert parsed.model_dump() == data


def test_tick_fulfill_reports_delivery_by_the_tick_event() -> None:
    # GIVEN a TICK request
    request = FulfillmentRequest(
        "test:schedule", "TICK", 1, datetime(2025, 1, 15, tzinfo=UTC), TickData(), "key-1"
    )
    # WHEN it is fulfilled THEN the result says the tick event delivers it
    assert TickFulfillment().fulfill(request) == {"delivered": "tick-event"}
