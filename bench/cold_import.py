"""Cold import time of each Lambda function's entry module: what a cold start pays before the handler.

For each entry module, runs `python -c "import <module>"` in a fresh interpreter N times and takes
the median wall time, then subtracts the median of `python -c pass` (the interpreter's own start).
The figure is the import cost of the function's package plus the core layer and the dependencies it
pulls in. `groundchat_cli.main` (the command and the local stack, never deployed) and `fastapi`
alone are shown for reference. The runs take turns (one of each, N times over), so a machine that
gets busier part way slows every line alike; its load average is printed before and after.
Prints figures, asserts nothing.
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
REFERENCE = {"cli (not deployed)": "groundchat_cli.main", "fastapi alone": "fastapi"}


def run_ms(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=dict(os.environ), cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def medians_ms(codes: list[str], runs: int = RUNS) -> dict[str, float]:
    times: dict[str, list[float]] = {code: [] for code in codes}
    for _ in range(runs):
        for code in codes:
            times[code].append(run_ms(code))
    return {code: statistics.median(t) for code, t in times.items()}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    modules = {**FUNCTIONS, **REFERENCE}
    print(f"load average before: {load()}")
    medians = medians_ms(["pass", *(f"import {m}" for m in modules.values())])
    baseline = medians["pass"]
    print(f"cold import, median of {RUNS} fresh interpreters, minus `python -c pass` ({baseline:.0f} ms)")
    print(f"{'function':<22}{'module':<26}{'import ms':>10}")
    for label, module in modules.items():
        print(f"{label:<22}{module:<26}{medians[f'import {module}'] - baseline:>10.0f}")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
