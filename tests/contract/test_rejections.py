"""GIVEN the stack's last rejections kept in memory (the fake) or in the actions table (the
DynamoDB ring of slots) WHEN rejections are kept, more than the stack keeps THEN the newest
come back first, numbered as kept, only the last ``keep`` of them, each as it was refused —
and nothing lands under an id an action could have."""

from __future__ import annotations

import json
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
        "problems": [{"field": "f" * 120_000, "problem": "p", "fix": "x"}] * 500,
    }
    log.keep(long, NOW)
    (entry,) = log.latest(1)
    assert len(entry["message"]) == 800 and entry["message"].endswith("… [cut]")
    assert len(entry["problems"]) == 9 and entry["problems"][-1]["problem"] == (
        "492 more problems left out"
    )
    assert len(entry["problems"][0]["field"]) == 100
    assert len(json.dumps(entry)) < 6_000


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(max_size=3_000),
    times=st.integers(1, 40),
    problems=st.integers(0, 60),
)
def test_any_refusal_is_kept_in_a_few_kb_whatever_was_sent(
    make_log: Made, text: str, times: int, problems: int
) -> None:
    log = make_log(2)
    sent = {
        "detailType": "Schedule Rejected",
        "id": text * times,
        "request": text,
        "reason": text,
        "message": text * times,
        "eventId": text * times,
        "source": "team.a",
        "problems": [{"field": text * times, "problem": text, "fix": text}] * problems,
    }
    log.keep(sent, NOW)
    (entry,) = log.latest(1)
    assert len(json.dumps(entry, ensure_ascii=False)) < 6_000
    assert len(entry.get("problems", [])) <= 9


def test_one_sender_never_pushes_out_another_senders_refusals(make_log: Made) -> None:
    log = make_log(10)
    log.keep({**_rejection(1), "source": "team.a"}, NOW)
    for n in range(2, 40):
        log.keep({**_rejection(n), "source": "team.b"}, NOW + timedelta(seconds=n))

    a = log.latest(20, "team.a")
    assert [e["id"] for e in a] == ["order:1"] and a[0]["source"] == "team.a"
    assert len(log.latest(20, "team.b")) == 10
    everyone = log.latest(100)
    assert "order:1" in {e["id"] for e in everyone} and len(everyone) == 11
    assert log.latest(5, "team.c") == []


def test_its_items_are_never_under_an_action_id() -> None:
    from tickwork.adapters.dynamodb_rejections import COUNTER_ID, SLOT_PREFIX

    assert not ID_PATTERN.fullmatch(COUNTER_ID) and not ID_PATTERN.fullmatch(f"{SLOT_PREFIX}0")


def test_a_flood_of_senders_never_erases_a_senders_entries_from_its_own_view(
    make_log: Made,
) -> None:
    """One publisher forging 40 sources, then flooding one of them: an earlier sender's refusal
    is still there under its own source (the unfiltered view shows the senders refused last)."""
    log = make_log(10)
    for n in range(40):
        log.keep({**_rejection(n), "source": f"flood.{n}"}, NOW + timedelta(seconds=n))
    log.keep({**_rejection(100), "source": "team.late"}, NOW + timedelta(seconds=50))
    for n in range(12):
        log.keep({**_rejection(200 + n), "source": "flood.39"}, NOW + timedelta(seconds=60 + n))

    late = log.latest(20, "team.late")
    assert [e["id"] for e in late] == ["order:100"]
    assert "order:100" in {e["id"] for e in log.latest(500)}
    assert [e["id"] for e in log.latest(1, "flood.3")] == ["order:3"]


@pytest.mark.parametrize(("first", "second"), [("col#1", "col"), ("a@b", "a"), ("x#0", "x#")])
def test_sources_whose_names_hold_the_rings_separators_keep_apart(
    make_log: Made, first: str, second: str
) -> None:
    log = make_log(10)
    log.keep({**_rejection(1), "source": first}, NOW)
    log.keep({**_rejection(2), "source": second}, NOW + timedelta(seconds=1))
    log.keep({**_rejection(3), "source": first}, NOW + timedelta(seconds=2))

    assert [e["id"] for e in log.latest(10, first)] == ["order:3", "order:1"]
    assert [e["id"] for e in log.latest(10, second)] == ["order:2"]
    assert len(log.latest(10)) == 3
