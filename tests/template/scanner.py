"""checkov in its own virtual environment, and template.yaml expanded the way SAM deploys it.

checkov pins boto3, networkx and packaging exactly, below the versions the project's .venv
needs, so it lives in ``.venv/checkov`` (removed with .venv by ``make clean``), installed from
``checkov-requirements.txt`` and reinstalled when that file changes. ``make venv`` installs it
(``python tests/template/scanner.py``); the test installs it too when run on a fresh clone
without make, which takes about a minute once.
"""

from __future__ import annotations

import copy
import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["CHECKOV_VENV", "checkov", "sam_expanded"]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REQUIREMENTS = HERE / "checkov-requirements.txt"
CHECKOV_VENV = REPO / ".venv" / "checkov"


def checkov() -> Path:
    """The checkov executable, installed first if missing or installed from other pins."""
    executable = CHECKOV_VENV / "bin" / "checkov"
    stamp = CHECKOV_VENV / ".installed"
    wanted = REQUIREMENTS.read_text()
    CHECKOV_VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(CHECKOV_VENV.parent / ".checkov.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install it once
        if executable.exists() and stamp.exists() and stamp.read_text() == wanted:
            return executable
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(CHECKOV_VENV)], check=True)
        pip = [str(CHECKOV_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "-r", str(REQUIREMENTS)], check=True)
        stamp.write_text(wanted)
    return executable


def sam_expanded(template: dict[str, Any], region: str = "us-east-1") -> dict[str, Any]:
    """The CloudFormation SAM deploys: generated roles with their policy templates expanded.

    Local code paths become placeholder S3 URIs, as ``sam validate`` does; nothing is fetched.
    """
    from samtranslator.translator.transform import transform

    document = copy.deepcopy(template)
    for resource in document["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://tickwork-scan/{properties[key].strip('/')}"

    class _NoManagedPolicyLookups:
        def load(self) -> dict[str, str]:
            return {}

    previous = os.environ.get("AWS_DEFAULT_REGION")
    os.environ["AWS_DEFAULT_REGION"] = region  # the translator reads it for ${AWS::Region}
    try:
        return transform(document, {}, _NoManagedPolicyLookups())
    finally:
        if previous is None:
            os.environ.pop("AWS_DEFAULT_REGION", None)
        else:
            os.environ["AWS_DEFAULT_REGION"] = previous


if __name__ == "__main__":
    print(checkov())
