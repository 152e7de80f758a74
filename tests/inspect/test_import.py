"""``import stopwise`` (and the CLI) must not import inspect_ai: it is an optional extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def test_importing_stopwise_does_not_import_inspect_ai() -> None:
    code = "import sys, stopwise, stopwise.cli.main, stopwise.ledger; print('inspect_ai' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
