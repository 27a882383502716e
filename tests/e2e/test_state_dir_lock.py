"""GIVEN `tickwork local` running on a state dir WHEN a second `tickwork local` starts on the
same dir (on other ports, on virtual time) THEN it exits 1 at once naming the running stack's
process and ports, and touches nothing of the first's: its local.json, its clock and its records
are as they were, and the first goes on answering. A lock left by a stack killed with kill -9 is
stale: the next start takes it."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from tickwork_local.process import LocalProcess
from tickwork_local.server import free_port

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


def _second(state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(str(BIN / "tickwork"), "--state-dir", str(state), "local", "--virtual-time"),
            *("--port", str(free_port()), "--api-port", str(free_port())),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_second_stack_on_a_state_dir_in_use_is_refused_and_touches_nothing(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    first = LocalProcess(state, cli_in_process=True)
    first.start()
    try:
        first.cli_json("schedule", "--id", "lock:1", "--in", "1h")
        before = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}

        refused = _second(state)

        assert refused.returncode == 1, refused.stderr
        assert f"process {first.process.pid}" in refused.stderr  # type: ignore[union-attr]
        assert (
            f"port {first.port}" in refused.stderr
            and f"API port {first.api_port}" in refused.stderr
        )
        assert "Traceback" not in refused.stderr
        after = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
        # no clock.json, local.json unchanged, nothing rewritten; the first's own journal only
        # grew (it goes on running)
        assert set(after) == set(before)
        assert all(after[n] == before[n] for n in before if n != "journal.jsonl")
        assert after["journal.jsonl"].startswith(before["journal.jsonl"])
        assert json.loads((state / "local.json").read_text())["pid"] == first.process.pid  # type: ignore[union-attr]
        assert [a["id"] for a in first.cli_json("list", "--prefix", "lock:")] == ["lock:1"]
    finally:
        first.stop()


def test_a_lock_left_by_a_stack_killed_with_kill_9_is_stale(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = LocalProcess(state, cli_in_process=True)
    first.start()
    first.cli_json("schedule", "--id", "lock:2", "--in", "1h")
    first.kill(signal.SIGKILL)
    assert (state / "local.lock").exists()

    again = LocalProcess(state, cli_in_process=True)
    again.start()
    try:
        assert [a["id"] for a in again.cli_json("list", "--prefix", "lock:")] == ["lock:2"]
    finally:
        again.stop()
