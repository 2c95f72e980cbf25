"""Cold import time of each Lambda function's entry module: what a cold start pays before the handler.

For each entry module, runs `python -c "import <module>"` in a fresh interpreter N times and takes
the median wall time, then subtracts the median of `python -c pass` (the interpreter's own start).
The figure is the import cost of the function's package plus the core layer and the dependencies it
pulls in. `groundchat_cli.main` (the command and the local stack, never deployed) and `fastapi`
alone are shown for reference. The chat's init is shown too: its import and then its startup's
warm-up (the embedding model, `chat_function.main.warm_up_at_start`), what a cold start pays before
the Web Adapter's readiness check passes. With `--against DIR` (another checkout, e.g. one made
with `git worktree add`), every line is measured for that tree too, in the same turns, so the two
are compared under the same load. The runs take turns (one of each, N times over), so a machine
that gets busier part way slows every line alike; its load average is printed before and after.
Prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
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
# The chat's init: its import, then the warm-up its startup runs (a tree that warms up at import
# has no such hook, and its import is then the whole of it).
CHAT_INIT = ("import asyncio, chat_function.main as m; w = getattr(m, 'warm_up_at_start', None); "
             "w and asyncio.run(w())")
PACKAGE_ROOTS = ("layers/core", "functions/chat", "functions/share", "functions/ingest", "functions/sweep", "cli")


def tree_env(tree: Path | None) -> dict[str, str]:
    """The environment that imports the packages from `tree` (None: this checkout, as installed)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(tree / root) for root in PACKAGE_ROOTS)
    return env


def run_ms(code: str, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env or dict(os.environ), cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def modules_after(code: str, env: dict[str, str] | None = None) -> int:
    out = subprocess.run([sys.executable, "-c", f"import sys; {code}; print(len(sys.modules))"], env=env or dict(os.environ),
                         cwd=REPO, check=True, capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1])


def medians_ms(codes: list[str], runs: int = RUNS, envs: dict[str, dict[str, str]] | None = None) -> dict[tuple[str, str], float]:
    """The median time of each code under each environment (name → env), all taking turns."""
    envs = envs or {"": dict(os.environ)}
    times: dict[tuple[str, str], list[float]] = {(name, code): [] for name in envs for code in codes}
    for _ in range(runs):
        for name, env in envs.items():
            for code in codes:
                times[(name, code)].append(run_ms(code, env))
    return {key: statistics.median(t) for key, t in times.items()}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same turns")
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    envs = {"this tree": tree_env(None)}
    if args.against is not None:
        envs = {"against": tree_env(args.against.resolve()), **envs}
    lines = {**{label: f"import {m}" for label, m in {**FUNCTIONS, **REFERENCE}.items()}, "chat init (import + warm-up)": CHAT_INIT}
    print(f"load average before: {load()}")
    medians = medians_ms(["pass", *lines.values()], args.runs, envs)
    print(f"cold import, median of {args.runs} fresh interpreters, minus `python -c pass`")
    print(f"{'':<30}" + "".join(f"{name + ' ms':>14}{'modules':>9}" for name in envs))
    for label, code in lines.items():
        cells = "".join(f"{medians[(name, code)] - medians[(name, 'pass')]:>14.0f}{modules_after(code, env):>9}"
                        for name, env in envs.items())
        print(f"{label:<30}{cells}")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
