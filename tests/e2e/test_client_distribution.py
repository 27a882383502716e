"""GIVEN the client built on its own (`client/pyproject.toml`: the `tickwork-client` wheel) and
installed in a virtualenv of its own, as a team's service would WHEN the service imports it,
type-checks against it with mypy --strict, and runs the README's client example against a
running `tickwork local` THEN it installs none of the stack's runtime (no Powertools, no moto,
no CLI), its types are visible (py.typed), and the example schedules, steers and reads back
actions through it alone; the local stack is found from its state directory, the outbox read,
and a webhook's signature verified from text."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tickwork_local.process import LocalProcess

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
# The stack's runtime and the local stack's tools: none may come with the client.
NEVER = {"aws-lambda-powertools", "aws-xray-sdk", "moto", "click", "rich", "flask", "tickwork"}

pytestmark = pytest.mark.timeout(600)


def _run(*args: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=480, **options
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def _pip(venv: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """pip (this venv's) working on ``venv``'s Python."""
    return _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", *args)


@pytest.fixture
def service_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A virtualenv holding only the client wheel and what it depends on."""
    work = tmp_path_factory.mktemp("client-dist")
    # Built from a copy of the two folders the wheel reads, so no build/ lands in the clone.
    shutil.copytree(
        REPO / "client",
        work / "client",
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    shutil.copytree(
        REPO / "src" / "tickwork",
        work / "src" / "tickwork",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "-w",
        work / "dist",
        work / "client",
    )
    (wheel,) = (work / "dist").glob("tickwork_client-*.whl")
    venv = work / "venv"
    # No pip of its own (ensurepip is most of a venv's making): this pip installs into it.
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    _pip(venv, "install", "--quiet", "--no-compile", wheel)  # compiled as imported, if ever
    yield venv


def _installed(venv: Path) -> dict[str, str]:
    listed = _pip(venv, "list", "--format", "json").stdout
    return {p["name"].lower(): p["version"] for p in json.loads(listed)}


def _installs_alone_without_the_stacks_runtime(service_env: Path) -> None:
    installed = _installed(service_env)
    assert "tickwork-client" in installed
    assert {"boto3", "pydantic", "croniter"} <= set(installed)
    assert NEVER.isdisjoint(installed), sorted(NEVER & set(installed))
    assert not (service_env / "bin" / "tickwork").exists()  # no command that cannot run
    site = next((service_env / "lib").glob("python3*/site-packages"))
    assert (site / "tickwork_client" / "py.typed").exists()
    # what the stack's functions are made of is not in it
    assert not (site / "tickwork" / "adapters").exists()
    assert not (site / "tickwork" / "steering").exists()
    assert not (site / "tickwork" / "fire").exists()


def _example() -> str:
    found = re.search(
        r"<!-- client-example -->\n```python\n(.*?)```\n<!-- /client-example -->",
        README.read_text(),
        re.S,
    )
    assert found, "the README's client example is missing its markers"
    return found.group(1)


SERVICE = """
from tickwork_client import ActionView, FireView, verify_signature


def overdue(action: ActionView) -> bool:
    fires: list[FireView] = action["history"]
    return action["status"] == "PENDING" and not fires


def checked(secret: str, header: str, body: str) -> bool:
    return verify_signature(secret, header, body)
"""


def _a_service_type_checks_against_it_with_mypy_strict(service_env: Path, tmp_path: Path) -> None:
    (tmp_path / "service.py").write_text(_example())
    (tmp_path / "typed.py").write_text(SERVICE)
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    # a service type-checking boto3 has its stubs, as it would for any boto3 code
    _pip(service_env, "install", "--quiet", "--no-compile", "boto3-stubs[events]")
    mypy = Path(sys.executable).parent / "mypy"
    done = subprocess.run(
        [mypy, "--strict", "--config-file", "mypy.ini", "--no-incremental",
         "--python-executable", service_env / "bin" / "python", "service.py", "typed.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    process = LocalProcess(Path(tmp_path_factory.mktemp("client-local")) / "state")
    process.start()
    yield process
    process.stop()


def _the_readme_example_runs_in_the_service_env_against_the_local_stack(
    service_env: Path, local: LocalProcess, tmp_path: Path
) -> None:
    (tmp_path / "example.py").write_text(_example())
    state = local.state
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "TICKWORK_BUS": state["outputs"]["EventBusName"],
        "TICKWORK_API_URL": state["outputs"]["ApiUrl"],
        "TICKWORK_API_TOKEN": str(state["apiToken"]),
        # boto3 reaches the local stack by its endpoint, with the dummy credentials it takes
        "AWS_ENDPOINT_URL": state["endpoint"],
        "AWS_ACCESS_KEY_ID": "tickwork-local",
        "AWS_SECRET_ACCESS_KEY": "tickwork-local",
        "AWS_DEFAULT_REGION": state["region"],
    }
    done = _run(service_env / "bin" / "python", tmp_path / "example.py", cwd=tmp_path, env=env)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("published ") and "first fires:" in lines[0], done.stdout
    assert lines[1:] == ["fired by hand: RUN_NOW FIRED", "finally: CANCELLED"], done.stdout


FOUND = """
import json, sys, time
from tickwork.integrity.signature import signature_header
from tickwork_client import TickworkClient, find_local_stack, verify_signature

client = TickworkClient.for_local(sys.argv[1])
client.schedule("dist:hook", "rate(1 hour)", action="TICK", times=2)
seen = client.wait("dist:hook", "PENDING")
client.run_now("dist:hook")
fired = client.wait("dist:hook", lambda a: len(a["history"]) == 1)
header = signature_header(b"whsec", int(time.time()), b'{"a": 1}')
print(json.dumps({
    "status": seen["status"],
    "outcome": fired["history"][0]["outcome"],
    "outbox": client.outbox(limit=5),
    "verified_text": verify_signature("whsec", header, '{"a": 1}'),
    "forged": verify_signature("other", header, '{"a": 1}'),
    "pid": find_local_stack(sys.argv[1]).pid,
}))
"""


def _for_local_finds_the_stack_reads_back_and_verifies_text(
    service_env: Path, local: LocalProcess, tmp_path: Path
) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    (tmp_path / "found.py").write_text(FOUND)
    done = _run(service_env / "bin" / "python", tmp_path / "found.py", local.state_dir, env=env)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == "PENDING" and answer["outcome"] == "FIRED"
    assert isinstance(answer["outbox"], list)
    assert answer["verified_text"] is True and answer["forged"] is False
    assert answer["pid"] == local.state["pid"]


def _a_local_json_left_by_a_killed_stack_is_refused_as_stale(
    service_env: Path, tmp_path: Path
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    state = {"endpoint": "http://127.0.0.1:1", "region": "us-east-1", "pid": dead.pid,
             "outputs": {"EventBusName": "b"}}  # fmt: skip
    (tmp_path / "local.json").write_text(json.dumps(state))
    probe = "from tickwork_client import find_local_stack; find_local_stack('.')"
    done = subprocess.run(
        [service_env / "bin" / "python", "-c", probe],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert f"process {dead.pid}, which is not running" in done.stderr
    assert "tickwork local" in done.stderr


def test_the_client_on_its_own_in_a_service_env(
    service_env: Path, local: LocalProcess, tmp_path: Path
) -> None:
    """One test, one virtualenv (building it is most of the time): each step in turn."""
    _installs_alone_without_the_stacks_runtime(service_env)
    for step in ("readme", "found", "stale", "mypy"):
        (tmp_path / step).mkdir()
    _the_readme_example_runs_in_the_service_env_against_the_local_stack(
        service_env, local, tmp_path / "readme"
    )
    _for_local_finds_the_stack_reads_back_and_verifies_text(service_env, local, tmp_path / "found")
    _a_local_json_left_by_a_killed_stack_is_refused_as_stale(service_env, tmp_path / "stale")
    _a_service_type_checks_against_it_with_mypy_strict(service_env, tmp_path / "mypy")
