"""GIVEN `tickwork local` running and a shell on a machine with no AWS set up (no credentials,
no region, no profile) WHEN the README's shell block runs as it stands THEN every command in it
succeeds: `tickwork env` gives the endpoint, the dummy credentials, the names, the API URL and
its token, and `aws` and `curl` reach the stack with them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tickwork_local.process import LocalProcess

README = Path(__file__).resolve().parents[2] / "README.md"


def _block() -> str:
    found = re.search(
        r"<!-- local-shell -->\n```bash\n(.*?)```\n<!-- /local-shell -->", README.read_text(), re.S
    )
    assert found, "the README's local shell block is missing its markers"
    return found.group(1)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    process = LocalProcess(Path(tmp_path_factory.mktemp("readme-shell")) / "state")
    process.start()
    yield process
    process.stop()


def test_the_readme_shell_block_runs_as_written_with_no_aws_set_up(
    local: LocalProcess, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TICKWORK_"))}
    env |= {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        "HOME": str(tmp_path),  # no ~/.aws
        "AWS_EC2_METADATA_DISABLED": "true",
        "TICKWORK_STATE_DIR": str(local.state_dir),  # where `tickwork local` keeps its state
    }
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", _block()],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Unable to locate credentials" not in ran.stderr
    assert '"FailedEntryCount": 0' in ran.stdout  # the Start was put on the bus
    assert '"executions"' in ran.stdout and '"Items"' in ran.stdout
    page = json.loads(ran.stdout.strip().splitlines()[-1])  # the API answered, authorised
    assert "items" in page
    # and the Start the block put is applied by the stack
    deadline = time.monotonic() + 30
    while local.cli("show", "hi", check=False).returncode != 0:
        assert time.monotonic() < deadline, "the README's Start never became an action"
        time.sleep(0.2)
