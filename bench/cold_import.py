"""Cold import time of each Lambda function's entry module: what a cold start pays before the handler.

For each entry module, runs `python -c "import <module>"` in a fresh interpreter N times and takes
the median wall time, then subtracts the median of `python -c pass` (the interpreter's own start).
The figure is the import cost of the function's package plus the core layer and the dependencies it
pulls in. `groundchat_cli.main` (the command and the local stack, never deployed) is shown for
reference. Prints figures, asserts nothing.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 15
REPO = Path(__file__).resolve().parent.parent
FUNCTIONS = {
    "chat": "chat_function.main",
    "share": "share_function.handler",
    "ingest": "ingest_function.handler",
    "sweep": "sweep_function.handler",
}
REFERENCE = {"cli (not deployed)": "groundchat_cli.main"}


def median_ms(code: str, runs: int = RUNS) -> float:
    env = dict(os.environ)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    baseline = median_ms("pass")
    print(f"cold import, median of {RUNS} fresh interpreters, minus `python -c pass` ({baseline:.0f} ms)")
    print(f"{'function':<22}{'module':<26}{'import ms':>10}")
    for label, module in {**FUNCTIONS, **REFERENCE}.items():
        print(f"{label:<22}{module:<26}{median_ms(f'import {module}') - baseline:>10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
