"""GIVEN each function's module in a fresh interpreter WHEN it is imported and its
dependencies built, as at a cold start THEN no AWS client exists yet, the X-Ray SDK is not
loaded, and the functions that validate no action's data do not load pydantic (what arrives is
read by declared models, built where the first value is read); the tracer is made at the first
event, and only when tracing is on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tickwork_local.template import Template

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = {f.logical_id: f for f in Template(REPO / "template.yaml", stack_name="t").functions()}
WITHOUT_PYDANTIC = {"TickFunction", "ControlFunction", "ReconcilerFunction", "PumpFunction"}
_PROBE = """
import json, sys
sys.path.insert(0, {code_dir!r})
import app
from tickwork import bootstrap
bootstrap.from_environment()
import boto3
print(json.dumps({{
    "xray": "aws_xray_sdk" in sys.modules,
    "pydantic": "pydantic" in sys.modules,
    "clients": boto3.DEFAULT_SESSION is not None,
}}))
"""


def _run(code: str, env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    clean.update(AWS_DEFAULT_REGION="us-east-1", PYTHONPATH=str(REPO / "src"), **env)
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
def test_a_cold_start_makes_no_client_and_loads_no_tracer(logical_id: str) -> None:
    spec = FUNCTIONS[logical_id]
    loaded = json.loads(_run(_PROBE.format(code_dir=str(spec.code_dir)), spec.environment))
    assert loaded["xray"] is False
    assert loaded["clients"] is False
    if logical_id in WITHOUT_PYDANTIC:
        assert loaded["pydantic"] is False


_FIRST_EVENT = """
import sys
from tickwork.tracing import LazyTracer
tracer = LazyTracer()

@tracer.capture_lambda_handler
def handler(event, context):
    return event["n"] + 1

before = "aws_xray_sdk" in sys.modules
print(before, handler({"n": 1}, None), "aws_xray_sdk" in sys.modules)
"""


def test_the_tracer_is_made_at_the_first_event_and_only_with_tracing_on() -> None:
    on = _run(_FIRST_EVENT, {"AWS_LAMBDA_FUNCTION_NAME": "f"})
    off = _run(_FIRST_EVENT, {"AWS_LAMBDA_FUNCTION_NAME": "f", "POWERTOOLS_TRACE_DISABLED": "true"})
    assert on == "False 2 True"
    assert off == "False 2 False"
