"""GIVEN `tickwork local` running as its own process, waiting on real fire times WHEN it is
killed with SIGKILL mid-wait and started again on the same state THEN every waiting action fires
the occurrences it still owed, once, never early. (Real seconds are what it tests: its own file,
so the suite's workers share its waiting out.)"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tickwork.domain.times import iso, parse_iso
from tickwork_local.process import LocalProcess


@pytest.mark.timeout(420)  # two starts of the stack and real waits: minutes on a busy machine
def test_kill_9_mid_wait_then_restart_fires_everything_once(tmp_path: Path) -> None:
    # GIVEN a local stack with a 3-fire recurrence (every 15 s) that fired once, and two
    # one-offs scheduled after that first fire, 30 s away: all three waiting. (Each time is
    # counted from the state it follows, so a busy machine's slow CLI calls do not let any of
    # them fire or finish before the kill: k:rec owes 30 s of fires after its first.)
    process = LocalProcess(tmp_path / "state", cli_in_process=True)  # (its code, in this process)
    process.start()
    try:
        process.cli_json("schedule", "--id", "k:rec", "--rate", "rate(15 seconds)", "--times", "3")
        deadline = time.monotonic() + 60  # a state to wait for, not a margin: a busy machine
        while process.cli_json("show", "k:rec")["occurrence"] < 2:
            assert time.monotonic() < deadline, "k:rec never fired its first occurrence"
            time.sleep(0.2)  # k:rec has fired once; the rest wait
        t1 = datetime.now(UTC)
        for action_id, seconds in (("k:one", 30), ("k:two", 31)):
            process.cli_json(
                "schedule", "--id", action_id, "--at", iso(t1 + timedelta(seconds=seconds))
            )
        waiting_at_kill = sorted(
            a["id"] for a in process.cli_json("list") if a["status"] in ("PENDING", "IN_PROGRESS")
        )

        # WHEN the process is killed with SIGKILL and started again on the same state
        process.kill()
        # the endpoint file it left names a dead process: the CLI refuses it, never a dead
        # endpoint answered as live
        stale = process.cli("outputs", check=False)
        assert stale.returncode == 1 and "which is not running" in stale.stderr, stale
        process.start()
        queue = process.subscribe(["Schedule Tick"])
        # the restart counts the action records it restored, not the stack's own items
        # (counters, tabs, the pump's watermark)
        restored = process.restored_counts()
        assert restored is not None and restored[0] == 3, restored

        # THEN every waiting action fires exactly the occurrences it still owed, once, never
        # early. (An occurrence that came due during the restart may fire before this queue
        # existed, so the records' history is the full account; the queue sees no repeats.)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and any(
            a["status"] != "COMPLETED" for a in process.cli_json("list")
        ):
            time.sleep(0.5)
        assert waiting_at_kill == ["k:one", "k:rec", "k:two"]
        for action_id, occurrences in (("k:one", [1]), ("k:two", [1]), ("k:rec", [1, 2, 3])):
            shown = process.cli_json("show", action_id)
            assert shown["status"] == "COMPLETED"
            assert [h["occurrence"] for h in shown["history"]] == occurrences
            assert all(h["actualTime"] >= h["scheduledTime"] for h in shown["history"])
        ticks = process.receive(queue, count=4, timeout=3)
        fired = [(t["id"], t["occurrence"]) for t in ticks]
        assert len(fired) == len(set(fired))
        assert set(fired) <= {("k:one", 1), ("k:two", 1), ("k:rec", 2), ("k:rec", 3)}
        assert all(parse_iso(t["actualTime"]) >= parse_iso(t["scheduledTime"]) for t in ticks)
    finally:
        process.stop()
