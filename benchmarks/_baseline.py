"""Measure the same call on the current code and on a baseline commit, side by side in one run.

A speed target is stated against "the current code" of the day an issue was filed. To print both figures in
one run on one machine, a benchmark runs its measurement twice: in its own process on the working tree, and in
a subprocess whose ``stopwise`` is the ``src/`` of a baseline commit (extracted once with ``git archive`` into
a cache folder). The measured function must use only names that exist in both versions.

Usage inside a benchmark module::

    from benchmarks._baseline import BASELINE_REF, measure_side_by_side

    def measure(args) -> dict[str, float]: ...          # runs on whichever stopwise is importable

    figures = measure_side_by_side("benchmarks.decide_betting", measure, args, argv)

The module's ``main`` must hand ``argv`` back to :func:`measure_side_by_side` in the subprocess: when the
hidden option ``--measure-json`` is present, :func:`measure_side_by_side` prints ``measure(args)`` as one JSON
line and the subprocess exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

BASELINE_REF = "e974111"
"""``main`` before the 0.2 restructure (issue 31): the "current code" of issues 31-37."""

MEASURE_FLAG = "--measure-json"


def baseline_src(ref: str = BASELINE_REF) -> Path:
    """The ``src`` folder of commit ``ref``, extracted once into the temporary folder (cached by commit)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{ref}^{{commit}}"], capture_output=True, text=True
    )
    if sha.returncode != 0:
        sys.exit(f"baseline commit {ref!r} not found in {ROOT} (a git checkout of stopwise with its history is needed)")
    folder = Path(tempfile.gettempdir()) / f"stopwise-baseline-{sha.stdout.strip()[:12]}"
    if not (folder / "src" / "stopwise" / "__init__.py").exists():
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha.stdout.strip(), "src"], capture_output=True, check=True)
        staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            tar.extractall(staging, filter="data")
        try:
            staging.rename(folder)
        except OSError:  # another run extracted it first
            pass
    return folder / "src"


def run_measure(module: str, argv: Sequence[str], src: Path) -> dict[str, Any]:
    """``python -m module --measure-json argv`` with ``src`` first on the path; its JSON line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", module, MEASURE_FLAG, *argv], capture_output=True, text=True, env=env, cwd=ROOT
    )
    if done.returncode != 0:
        sys.exit(f"the baseline measurement failed ({module} on {src}):\n{done.stderr[-4000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure_side_by_side(
    module: str,
    measure: Callable[[Any], dict[str, Any]],
    args: Any,
    argv: Sequence[str],
    *,
    ref: str = BASELINE_REF,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(current, baseline)`` figures of ``measure(args)``; in the baseline subprocess, print them and exit."""
    if MEASURE_FLAG in argv:
        print(json.dumps(measure(args)))
        sys.exit(0)
    current = measure(args)
    baseline = run_measure(module, [a for a in argv if a != MEASURE_FLAG], baseline_src(ref))
    return current, baseline


def paper_policy(**fields: Any) -> Any:
    """The paper's primary policy on the code measured: ``Policy.paper`` where it exists (issue 35), else ``Policy``,
    whose default it was (the baseline commit's)."""
    from stopwise import Policy

    maker = getattr(Policy, "paper", None)
    return maker(**fields) if maker is not None else Policy.model_validate(fields)


def strip_measure_flag(argv: Sequence[str]) -> list[str]:
    """``argv`` without the hidden subprocess flag (for the module's own argument parser)."""
    return [a for a in argv if a != MEASURE_FLAG]
