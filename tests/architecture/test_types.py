"""The layer's types are checked: basedpyright, configured in pyproject.toml ([tool.basedpyright]),
finds no error in the layer (standard mode on the whole of it, strict on the packages it lists).
It runs against this interpreter's packages, so third-party types are the ones installed."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


def _checker() -> str:
    beside = Path(sys.executable).with_name("basedpyright")
    found = str(beside) if beside.exists() else shutil.which("basedpyright")
    if found is None:
        pytest.fail("basedpyright is not installed: `make install` installs the test dependencies")
    return found


def test_the_type_checker_finds_no_error_in_the_layer():
    run = subprocess.run([_checker(), "--outputjson", "--pythonpath", sys.executable, "--project", str(REPO_ROOT)],
                         cwd=REPO_ROOT, capture_output=True, text=True)
    report = json.loads(run.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    shown = "\n".join(f"{Path(d['file']).relative_to(REPO_ROOT)}:{d['range']['start']['line'] + 1}: "
                      f"{d['message']} ({d.get('rule', '')})" for d in errors)
    assert report["summary"]["filesAnalyzed"] > 50, run.stderr  # the configuration still finds the layer
    assert errors == [], f"{len(errors)} type errors:\n{shown}"
