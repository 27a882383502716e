"""GIVEN a moto release other than the one the emulator patches were written for WHEN
`tickwork local` (or the demo) starts THEN it refuses before binding a port, naming both
versions and the fix; on the pinned release it is the one installed."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from tickwork_cli.main import cli
from tickwork_local import moto_version
from tickwork_local.moto_version import SUPPORTED_MOTO, UnsupportedMoto, require_supported_moto
from tickwork_local.server import free_port


def test_the_installed_moto_is_the_supported_one() -> None:
    assert moto_version.installed_moto() == SUPPORTED_MOTO
    require_supported_moto()


@pytest.mark.parametrize("other", ["5.2.4", "5.3.0", "6.0.0", "none"])
def test_another_release_is_refused_with_the_fix(other: str) -> None:
    with pytest.raises(UnsupportedMoto) as refused:
        require_supported_moto(other)
    message = str(refused.value)
    assert f"moto {other} is installed" in message and SUPPORTED_MOTO in message
    assert f"=={SUPPORTED_MOTO}" in message  # the command that fixes it


@pytest.mark.parametrize("command", [["local"], ["demo"]])
def test_the_commands_refuse_to_start_on_another_release(
    command: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setattr(moto_version, "installed_moto", lambda: "5.3.0")
    port = free_port()

    args = ["--state-dir", str(tmp_path), *command]
    if command == ["local"]:
        args += ["--port", str(port)]
    result = CliRunner().invoke(cli, args)

    assert result.exit_code == 1, result.output
    assert "moto 5.3.0 is installed" in result.output and SUPPORTED_MOTO in result.output
    with socket.socket() as probe:  # nothing was left listening
        probe.bind(("127.0.0.1", port))
