"""GIVEN no stack the CLI can reach — a deployed one named without a region or credentials, a
state directory with no local stack, a `local.json` left by a stack killed with `kill -9` —
WHEN a command runs THEN it exits 1 with one line naming what is missing and the fix: never a
traceback, never a dead stack's endpoint."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

TICKWORK = Path(sys.executable).parent / "tickwork"


def _no_aws(tmp_path: Path) -> dict[str, str]:
    """A machine with no AWS set up: no region, no credentials, no profile, no metadata."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {
        **env,
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def _tickwork(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TICKWORK), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


@pytest.mark.parametrize(
    ("extra_env", "said"),
    [
        ({}, "give --region"),
        ({"AWS_REGION": "us-east-1"}, "no AWS credentials"),
    ],
    ids=["no-region", "no-credentials"],
)
def test_a_deployed_stack_named_without_region_or_credentials_says_what_to_set(
    tmp_path: Path, extra_env: dict[str, str], said: str
) -> None:
    ran = _tickwork(
        "--stack", "tickwork-prod", "list", env={**_no_aws(tmp_path), **extra_env}, cwd=tmp_path
    )
    assert ran.returncode == 1, ran
    assert "Traceback" not in ran.stderr
    assert said in ran.stderr and "tickwork-prod" in ran.stderr


def test_outside_the_clone_the_cli_names_state_dir(tmp_path: Path) -> None:
    ran = _tickwork("outputs", env=_no_aws(tmp_path), cwd=tmp_path)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ".tickwork/local.json is missing" in ran.stderr
    assert "--state-dir" in ran.stderr and "tickwork local" in ran.stderr


def test_a_local_json_left_by_a_killed_stack_is_refused_not_answered(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process id that no longer runs, as a kill -9'd stack's
    state_dir = tmp_path / ".tickwork"
    state_dir.mkdir()
    (state_dir / "local.json").write_text(
        json.dumps(
            {
                "endpoint": "http://127.0.0.1:4566",
                "region": "us-east-1",
                "pid": gone.pid,
                "outputs": {"EventBusName": "tickwork-local-bus"},
            }
        )
    )
    ran = _tickwork("outputs", env=_no_aws(tmp_path), cwd=tmp_path)
    assert ran.returncode == 1, ran
    assert f"process {gone.pid}, which is not running" in ran.stderr
    assert "4566" not in ran.stdout


@pytest.mark.parametrize("taken", ["--port", "--api-port"])
def test_local_on_a_port_in_use_refuses_at_once_and_touches_no_state(
    tmp_path: Path, taken: str
) -> None:
    """4566 is LocalStack's default too: a port in use is refused with exit 1, never a hang."""
    from tickwork_local.server import free_port

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    busy = listener.getsockname()[1]
    ports = {"--port": str(free_port()), "--api-port": str(free_port()), taken: str(busy)}
    state = tmp_path / "state"
    state.mkdir()
    (state / "kept").write_text("what a --fresh start would wipe")
    try:
        ran = _tickwork(
            "--state-dir", str(state), "local", "--fresh", *(x for kv in ports.items() for x in kv),
            env=_no_aws(tmp_path), cwd=tmp_path,
        )  # fmt: skip
    finally:
        listener.close()
    assert ran.returncode == 1, ran
    assert f"port {busy}" in ran.stderr and "is in use" in ran.stderr
    assert f"tickwork local {taken} " in ran.stderr
    assert (state / "kept").exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [("[1, 2]", "holds a JSON list, not an object"), ("{oops", "is not a JSON file")],
    ids=["a-list", "not-json"],
)
def test_a_calendar_file_of_the_wrong_shape_is_a_usage_error_not_a_traceback(
    tmp_path: Path, content: str, said: str
) -> None:
    from click.testing import CliRunner

    from tickwork_cli.main import cli

    body = tmp_path / "cal.json"
    body.write_text(content)
    args = ["--state-dir", str(tmp_path), "calendar", "put", "uk", "--file", str(body)]
    run = CliRunner().invoke(cli, [*args, "--date", "2026-12-25"])
    assert run.exit_code == 2 and said in run.output, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit)
