"""Cold start per function: a fresh interpreter imports the handler module, builds its
dependencies (``bootstrap.from_environment()``) and its first AWS client (the DynamoDB table
every function reads first), beside a bare ``import boto3`` plus one client, in the same run,
alternating, in subprocesses of a venv shaped like the runtime (lambda_venv.py). The X-Ray
SDK, which a traced function loads at its first invocation (tickwork/tracing.py), is timed on
its own. ``python -X importtime`` names the heaviest imports of each function.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchkit.lambda_venv import lambda_python
from benchkit.stats import median
from tickwork_local.template import FunctionSpec, Template

__all__ = ["ColdStart", "measure_cold_starts"]

REPO = Path(__file__).resolve().parents[2]
BARE = "import boto3; boto3.client('dynamodb')"
_TIMED = """
import sys, time
began = time.perf_counter()
{body}
print(time.perf_counter() - began)
"""
_FUNCTION = """
import os, sys
sys.path.insert(0, {code_dir!r})
import app
from tickwork import bootstrap
bootstrap.from_environment()
import boto3
boto3.resource("dynamodb").Table(os.environ["TABLE_NAME"])
"""
# What an invocation adds when X-Ray tracing is on (tickwork.tracing makes the Tracer then).
XRAY = "from aws_lambda_powertools import Tracer; Tracer()"
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


@dataclass
class ColdStart:
    function: str
    seconds: list[float] = field(default_factory=list)
    heaviest: list[tuple[str, float]] = field(default_factory=list)  # package, ms of its own

    @property
    def median(self) -> float:
        return median(self.seconds)


def measure_cold_starts(
    runs: int, progress: Callable[[str], None]
) -> tuple[ColdStart, list[ColdStart], ColdStart]:
    """(bare boto3 + client, each function, the X-Ray SDK a traced first invocation adds)"""
    python = lambda_python(progress)
    template = Template(REPO / "template.yaml", stack_name="tickwork", parameters={})
    functions = template.functions()
    bare = ColdStart("bare: import boto3 + one client")
    xray = ColdStart("X-Ray SDK + Tracer (first traced invocation)")
    measured = {spec.logical_id: ColdStart(spec.logical_id) for spec in functions}
    for run in range(runs):
        progress(f"cold starts: run {run + 1}/{runs}")
        bare.seconds.append(_timed(python, BARE, _environment(None)))
        lambda_like = {**_environment(None), "AWS_LAMBDA_FUNCTION_NAME": "bench"}
        xray.seconds.append(_timed(python, XRAY, lambda_like))
        for spec in functions:
            body = _FUNCTION.format(code_dir=str(spec.code_dir))
            measured[spec.logical_id].seconds.append(_timed(python, body, _environment(spec)))
    for spec in functions:
        measured[spec.logical_id].heaviest = _heaviest_imports(python, spec)
    return bare, list(measured.values()), xray


def _environment(spec: FunctionSpec | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    env.update(
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        PYTHONPATH=str(REPO / "src"),
        PYTHONDONTWRITEBYTECODE="",
    )
    if spec is not None:
        env.update(spec.environment)
    return env


def _timed(python: Path, body: str, env: dict[str, str]) -> float:
    out = subprocess.run(
        [str(python), "-c", _TIMED.format(body=body)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return float(out.stdout.strip().splitlines()[-1])


def _heaviest_imports(python: Path, spec: FunctionSpec, top: int = 5) -> list[tuple[str, float]]:
    """Packages by the import time spent in their own modules (ms), under ``-X importtime``."""
    body = _FUNCTION.format(code_dir=str(spec.code_dir))
    out = subprocess.run(
        [str(python), "-X", "importtime", "-c", body],
        env=_environment(spec),
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    by_package: dict[str, float] = {}
    for line in out.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            package = match.group(4).split(".")[0]
            by_package[package] = by_package.get(package, 0.0) + int(match.group(1)) / 1000
    return sorted(by_package.items(), key=lambda item: -item[1])[:top]
