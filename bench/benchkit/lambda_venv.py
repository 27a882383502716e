"""A venv shaped like a function's runtime: Python 3.12, the layer's requirements
(src/requirements.txt) and boto3, and nothing of the dev tools.

The dev venv also holds awscrt and pyOpenSSL (pulled in by the local tooling), which botocore
imports when present; the Lambda runtime has neither, so cold starts are timed here. Made once
under .venv/lambda and remade when the requirements change.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

__all__ = ["lambda_python"]

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv" / "lambda"
BOTO3 = "boto3>=1.40,<2"  # the runtime ships boto3; the same range as pyproject.toml


def lambda_python(progress: object = print) -> Path:
    requirements = REPO / "src" / "requirements.txt"
    wanted = hashlib.sha256(requirements.read_bytes() + BOTO3.encode()).hexdigest()
    stamp = VENV / ".requirements"
    python = VENV / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    progress(f"cold starts: building {VENV.relative_to(REPO)} (the layer's requirements only)")  # type: ignore[operator]
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", str(requirements), BOTO3],
        check=True,
    )
    stamp.write_text(wanted)
    return python
