"""`eval "$(tickwork env)"` fails where tickwork env cannot run, instead of succeeding on
nothing and leaving the shell on whatever AWS it had."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tickwork_cli.main import cli


def test_env_without_a_stack_exits_1_and_prints_false_for_the_eval(tmp_path) -> None:
    try:  # click 8.1 mixes stderr in unless told; 8.2 on keeps it apart always
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(cli, ["--state-dir", str(tmp_path / "none"), "env"])

    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith("false")
    assert "no local stack found" in result.stderr


def test_the_eval_of_a_failed_env_fails_and_stops_what_follows(tmp_path) -> None:
    tickwork = Path(sys.executable).parent / "tickwork"  # the venv's console script
    command = f"{tickwork} --state-dir {tmp_path / 'none'} env"
    shell = f'eval "$({command} 2>/dev/null)" && echo reached'
    run = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "reached" not in run.stdout
