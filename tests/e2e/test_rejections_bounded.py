"""GIVEN `tickwork local` keeping 10 rejections a sender WHEN one publisher's event is refused,
then another publisher floods the stack with refused events, and an event carries a 120,000
character field THEN the first publisher's refusal is still listed (its own, and among every
sender's), and the huge one is kept cut to a few KB, marked so, as its Schedule Rejected is."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tickwork_local.process import LocalProcess


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    process = LocalProcess(
        Path(tmp_path_factory.mktemp("bounded")) / "state",
        parameters={"KeepRejections": "10"},
        cli_in_process=True,
    )
    process.start()
    yield process
    process.stop()


def _put(local: LocalProcess, source: str, detail_type: str, detail: dict[str, Any]) -> None:
    entries = [
        {
            "EventBusName": local.bus,
            "Source": source,
            "DetailType": detail_type,
            "Detail": json.dumps(detail),
        }
    ]
    answer = local.client("events").put_events(Entries=entries)
    assert answer["FailedEntryCount"] == 0


def _kept(local: LocalProcess, count: int, *args: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 90  # a state to wait for: the refusals being kept
    while True:
        rows: list[dict[str, Any]] = local.cli_json("rejections", "--limit", "100", *args)
        if len(rows) >= count:
            return rows
        assert time.monotonic() < deadline, f"only {len(rows)} of {count} kept: {rows}"
        time.sleep(0.2)


def test_one_publisher_cannot_push_out_anothers_refusals(local: LocalProcess) -> None:
    _put(local, "team.a", "Schedule Stop", {"id": "a:1", "colour": "red"})
    _kept(local, 1, "--source", "team.a")
    for n in range(12):
        _put(local, "team.b", "Schedule Pause", {"id": f"b:{n}", "shade": n})
    _kept(local, 10, "--source", "team.b")

    mine = local.cli_json("rejections", "--source", "team.a")
    assert [(r["id"], r["source"]) for r in mine] == [("a:1", "team.a")]
    every = _kept(local, 11)
    assert "a:1" in {r["id"] for r in every}
    page = local.api.get(
        f"{local.api_url}/rejections", params={"source": "team.a", "limit": 5}, timeout=30
    )
    assert page.status_code == 200 and [r["id"] for r in page.json()["rejections"]] == ["a:1"]


def test_a_huge_refused_event_is_kept_cut_to_a_few_kb(local: LocalProcess) -> None:
    _put(local, "team.c", "Schedule Pause", {"id": "c:1", "x" * 120_000: 1})
    (kept,) = _kept(local, 1, "--source", "team.c")

    assert len(json.dumps(kept)) < 6_000
    (problem,) = kept["problems"]
    assert problem["field"].endswith("… [cut]") and len(problem["field"]) == 100
    assert kept["message"].endswith("… [cut]")
