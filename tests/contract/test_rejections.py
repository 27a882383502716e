"""GIVEN the stack's last rejections kept in memory (the fake) or in the actions table (the
DynamoDB ring of slots) WHEN rejections are kept, more than the stack keeps THEN the newest
come back first, numbered as kept, only the last ``keep`` of them, each as it was refused —
and nothing lands under an id an action could have."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tests.contract.conftest import NOW, REPO, emulated_aws_env
from tests.unit.fakes import FakeRejections
from tickwork.adapters.dynamodb_rejections import DynamoDBRejections
from tickwork.domain.identifiers import ID_PATTERN
from tickwork.domain.times import iso
from tickwork.ports import RejectionLog
from tickwork_local.template import Template

Made = Callable[[int], RejectionLog]


@pytest.fixture(params=["fake", "dynamodb"])
def make_log(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Made]:
    if request.param == "fake":
        yield FakeRejections
        return
    emulated_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb")
        template = Template(REPO / "template.yaml")

        def new(keep: int) -> RejectionLog:
            for old in client.list_tables()["TableNames"]:  # a fresh table for each log
                client.delete_table(TableName=old)
            return DynamoDBRejections(template.create_table(client, "ActionsTable"), keep)

        yield new


def _rejection(n: int) -> dict[str, object]:
    return {
        "detailType": "Schedule Rejected",
        "id": f"order:{n}",
        "request": "Schedule Start",
        "eventId": f"e-{n}",
        "reason": "InvalidStartRequest",
        "message": f"refused {n}",
        "problems": [{"field": "data.amount", "problem": "is required", "fix": "add it"}],
    }


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(keep=st.integers(1, 6), kept=st.integers(0, 14), limit=st.integers(1, 20))
def test_the_newest_come_first_and_only_the_last_keep_of_them(
    make_log: Made, keep: int, kept: int, limit: int
) -> None:
    log = make_log(keep)
    for n in range(1, kept + 1):
        log.keep(_rejection(n), NOW + timedelta(seconds=n))
    latest = log.latest(limit)
    expected = list(range(kept, max(0, kept - keep), -1))[:limit]
    assert [r["number"] for r in latest] == expected
    for entry in latest:
        n = entry["number"]
        assert entry["id"] == f"order:{n}" and entry["message"] == f"refused {n}"
        assert entry["at"] == iso(NOW + timedelta(seconds=n))
        assert entry["problems"][0]["field"] == "data.amount"


def test_keeping_none_keeps_nothing(make_log: Made) -> None:
    log = make_log(0)
    log.keep(_rejection(1), NOW)
    assert log.latest(10) == []


def test_a_long_refusal_is_cut_to_fit_one_item(make_log: Made) -> None:
    log = make_log(3)
    long = {
        **_rejection(1),
        "message": "x" * 50_000,
        "problems": [{"field": "f", "problem": "p", "fix": "x"}] * 500,
    }
    log.keep(long, NOW)
    (entry,) = log.latest(1)
    assert len(entry["message"]) == 2000 and len(entry["problems"]) == 20


def test_its_items_are_never_under_an_action_id() -> None:
    from tickwork.adapters.dynamodb_rejections import COUNTER_ID, SLOT_PREFIX

    assert not ID_PATTERN.fullmatch(COUNTER_ID) and not ID_PATTERN.fullmatch(f"{SLOT_PREFIX}0")
