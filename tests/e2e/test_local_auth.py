"""GIVEN `tickwork local` guarded as a deployed stack is (Starts that must be signed, an API that
takes only SigV4) WHEN driven with the CLI, the AWS CLI and `tickwork dashboard` THEN the CLI's
calls are taken, raw or unsigned ones refused."""

from __future__ import annotations

import time
from pathlib import Path

from tickwork_local.process import LocalProcess


def test_a_stack_that_requires_signed_starts_takes_the_clis_and_refuses_raw_ones(
    tmp_path: Path,
) -> None:
    # GIVEN tickwork local requiring signed Starts
    process = LocalProcess(
        tmp_path / "state", parameters={"RequireSignedStarts": "true"}, cli_in_process=True
    )
    process.start()
    state = process.state
    try:
        assert "StartSigningKeyArn" in state["outputs"]
        assert (tmp_path / "state" / "local.json").stat().st_mode & 0o077 == 0
        # WHEN the CLI schedules (it signs with the stack's key) and a raw event is published
        scheduled = process.cli_json("schedule", "--id", "cli:signed", "--in", "10m")
        process.aws(
            "events", "put-events", "--entries",
            '[{"EventBusName":"tickwork-local","Source":"me","DetailType":"Schedule Start",'
            '"Detail":"{\\"id\\": \\"raw:unsigned\\", \\"duration\\": \\"10m\\"}"}]',
        )  # fmt: skip
        time.sleep(2)
        # THEN the CLI's is scheduled and the unsigned one is not
        assert scheduled["scheduled"] == "cli:signed"
        assert process.cli("show", "raw:unsigned", check=False).returncode != 0
    finally:
        process.stop()


def test_tickwork_dashboard_signs_for_a_stack_whose_api_takes_only_sigv4(tmp_path: Path) -> None:
    """`tickwork local --api-auth sigv4` serves the API as AWS does; `tickwork dashboard` serves
    the page on loopback and signs its calls with the user's credentials."""
    import subprocess

    import requests

    from tickwork_local.process import BIN
    from tickwork_local.server import free_port

    state = tmp_path / "state"
    program = [str(BIN / "tickwork"), "--state-dir", str(state), "local", "--api-auth", "sigv4"]
    process = LocalProcess(state, program=program)
    process.start()
    port = free_port()
    proxy = subprocess.Popen(
        [str(BIN / "tickwork"), "--state-dir", str(state), "dashboard", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        process.cli_json("schedule", "--id", "dash:cli", "--in", "1h")
        link = ""
        while "#token=" not in link:
            line = proxy.stdout.readline() if proxy.stdout else ""
            assert line, "tickwork dashboard printed no link"
            link = line if "#token=" in line else link
        token = link.split("#token=", 1)[1].strip()

        direct = requests.get(f"{process.api_url}/actions", timeout=10)
        through = requests.get(
            f"http://127.0.0.1:{port}/actions",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )

        assert direct.status_code == 403  # the API itself takes only SigV4
        assert through.status_code == 200
        assert [a["id"] for a in through.json()["items"]] == ["dash:cli"]
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        process.stop()
