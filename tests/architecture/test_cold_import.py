"""A cold start stays within its budget: each function's import, as a multiple of a bare interpreter
start measured in the same test (a ratio, so a slower machine moves both). The budgets are today's
ratios plus 50 %: a change that loads something heavy at import (the X-Ray SDK, a client built at
import, the chat's modules in the share function) fails here. bench/cold_import.py prints the figures."""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

import pytest

RUNS = 5
# Measured on the 2-core machine: pass ≈ 24 ms; chat ≈ 470 ms, share ≈ 200 ms (ratios ≈ 20 and 8.5).
BUDGETS = {"chat_function.main": 30.0, "share_function.handler": 13.0}


def _median_seconds(code: str) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@pytest.mark.parametrize("module", sorted(BUDGETS))
def test_a_cold_import_stays_within_its_budget(module):
    bare = _median_seconds("pass")
    ratio = _median_seconds(f"import {module}") / bare
    assert ratio <= BUDGETS[module], f"{module}: {ratio:.1f}× a bare start (budget {BUDGETS[module]}×)"


def test_the_share_function_does_not_load_the_chat_or_the_xray_sdk():
    code = ("import sys, share_function.handler; "
            "print(sorted(m for m in sys.modules if m.startswith(('chat_function', 'aws_xray_sdk', 'groundchat.chat.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "[]"


def test_the_chat_function_loads_at_import_only_what_building_the_app_needs():
    """boto3 (with botocore's config), PyJWT and cryptography, the answer use case and the run list's
    shapes load with the first request that uses them (docs/engineering/cold-import.md)."""
    code = ("import sys, chat_function.main; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 's3transfer', 'jwt', 'cryptography') "
            "or m in ('botocore.config', 'groundchat.chat.answer', 'groundchat.web.run_pages')))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == "[]"
