"""The deployed shape's latency, here: the packaged chat function under the real Lambda Web Adapter
and the runtime interface emulator, behind the API Gateway REST stand-in (make lambda-tools).

- Cold start: the emulator's init phase (`INIT REPORT`) of COLD fresh starts, and the first
  request's wall time after each (init, then the request).
- Warm: N questions to /api/chat through the stand-in, the time to the first frame and to the last,
  p50 and p95; the same questions straight to the app's uvicorn inside the function (the adapter's
  own target on the loopback), which shows what the stand-in, the emulator and the adapter add.
- Sizes: each layer as the function mounts it (the core layer, the model layer with the embedding
  model's files) and the chat function with its layers, against Lambda's 250 MB unzipped.
- Beside `make run`: the same app under uvicorn in this venv, from start to its first answer; and
  the resident memory of each app process (one model session each) after the first and the last
  answer.

The model is the offline answerer (no key, no cost) and DynamoDB is moto's server. Prints figures,
asserts nothing; where the tools are not built, or not root, it says so in one line and exits 0.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUESTION = {"message": "What does the axe rule color-contrast check?"}
DEV_SECRET = "bench-secret-for-hs256-signing-0123456789"
GRANTS = {"chat.use", "runs.read", "docs.read", "views.show", "traces.read"}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ask(client, url: str, headers: dict[str, str], question: dict[str, str] = QUESTION) -> tuple[float, float]:
    """(ms to the first SSE frame, ms to the end of the answer)."""
    start = time.perf_counter()
    first = None
    with client.stream("POST", url, json=question, headers={**headers, "accept": "text/event-stream"}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"{url} answered {response.status_code}: {response.read()[:200]!r}")
        for line in response.iter_lines():
            if first is None and line.startswith("event: "):
                first = time.perf_counter()
    end = time.perf_counter()
    return ((first or end) - start) * 1000, (end - start) * 1000


def summary(label: str, times: list[tuple[float, float]]) -> str:
    firsts, fulls = [t[0] for t in times], [t[1] for t in times]
    return (f"{label:<34}{percentile(firsts, 50):>9.0f}{percentile(firsts, 95):>9.0f}"
            f"{percentile(fulls, 50):>9.0f}{percentile(fulls, 95):>9.0f}")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def listener_pid(port: int) -> int:
    """The process listening on the loopback port (the app's uvicorn, inside the function or not)."""
    import subprocess

    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    return int(out[out.index("pid=") + 4:].split(",")[0])


def sizes(package, tools, build: Path) -> list[str]:
    """The layers as the local function mounts them: the dependencies from the tools cache (pruned as
    `make package` prunes them) with our code and the model's files from the build."""
    mb = package.MB
    core = package.tree_size(tools.layer_deps) + package.tree_size(build / "layer")
    model = package.tree_size(tools.model_deps) + package.tree_size(build / "model")
    chat = package.tree_size(build / "functions" / "chat")
    total = core + model + chat + package.WEB_ADAPTER_ALLOWANCE
    return [f"core layer {core / mb:.1f} MB, model layer {model / mb:.1f} MB "
            f"(the model's files {package.tree_size(build / 'model') / mb:.1f} MB), chat function {chat / mb:.2f} MB",
            f"chat function with its layers and the adapter's allowance: {total / mb:.1f} MB of "
            f"{package.UNZIPPED_LIMIT // mb} MB unzipped"]


# Questions in users' words (a retrieval set), so the answers search, look rules up and query runs
# as people's questions do, and every query length comes up.
VARIED = REPO / "tests" / "eval" / "users_words_report.jsonl"


def memory_run(client, url: str, headers: dict[str, str], pid: int, answers: int) -> None:
    """The function's app process (one model session) over many answers: its RSS every 50."""
    import json

    questions = [json.loads(line)["q"][:2000] for line in VARIED.read_text(encoding="utf-8").splitlines() if line.strip()]
    line = [f"start {rss_mib(pid):.0f}"]
    for n in range(answers):
        ask(client, url, headers, {"message": questions[n % len(questions)]})
        if (n + 1) % 50 == 0:
            line.append(f"{n + 1}: {rss_mib(pid):.0f}")
    print(f"the function's app process RSS (MiB) over {answers} varied answers: {', '.join(line)}")


def corpus_index() -> Path | None:
    """A built index of the corpus to answer from: `make run`'s, else the tests' shared one."""
    from groundchat.config import get_settings
    from groundchat.search.embedding_models import configured_local_key
    from groundchat_cli.opensearch_node import tools_cache

    for candidate in (Path(get_settings().home) / "index.sqlite", tools_cache() / f"test-corpus-index-{configured_local_key()}" / "index.sqlite"):
        if candidate.is_file():
            return candidate
    return None


def make_run_side(client, env: dict[str, str], headers: dict[str, str]) -> tuple[float, float, float, float]:
    """The chat app as `make run` serves it (uvicorn in this venv, same state): ms from start to
    ready (the init: the app and the model), ms of the first answer, RSS after it (MiB), its pid."""
    import subprocess

    from groundchat_cli.local_lambda import free_port

    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                               "--no-access-log", "chat_function.main:app"], cwd=REPO,
                              env={**os.environ, **env, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"uvicorn exited {server.returncode}")
            try:
                if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except Exception:  # noqa: BLE001 (not listening yet)
                pass
            time.sleep(0.05)
        ready = (time.perf_counter() - started) * 1000
        first = ask(client, f"http://127.0.0.1:{port}/api/chat", headers)[1]
        return ready, first, rss_mib(listener_pid(port)), float(server.pid)
    finally:
        server.terminate()
        server.wait(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20, help="warm questions per path (default 20)")
    parser.add_argument("--cold", type=int, default=3, help="fresh starts of the function (default 3)")
    parser.add_argument("--memory-answers", type=int, default=0,
                        help="then ask this many varied questions through the function and print the app's RSS "
                             "every 50 (default 0: skip)")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "infra"))
    from groundchat_cli.local_lambda import LambdaToolsMissing, require_tools

    try:
        tools = require_tools()
    except LambdaToolsMissing as missing:
        print(f"bench/lambda_shape.py: {missing}; skipped")
        return 0

    import httpx
    import package
    from groundchat_cli.moto_store import LocalDynamo

    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import Settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import USERS
    from groundchat_cli.apigw_rest import RestApiStandIn
    from groundchat_cli.local_lambda import LocalLambda, free_port, function_config, load_template

    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"), ("AWS_DEFAULT_REGION", "eu-west-1")):
        os.environ.setdefault(name, value)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    template = load_template()
    db = LocalDynamo().start()
    try:
        dynamo = Dynamo(Settings(dynamodb_endpoint=db.endpoint))
        create_tables(dynamo)
        dynamo.table(USERS).put_item(Item={"user_id": "alice", "grants": GRANTS})
        headers = {"authorization": f"Bearer {issue_dev_token(Settings(dev_secret=DEV_SECRET), 'alice')}"}
        with tempfile.TemporaryDirectory(prefix="groundchat-bench-lambda-") as tmp:
            root = Path(tmp)
            build = root / "build"
            started = time.perf_counter()
            functions = package.build_functions(build)
            layer = package.build_layer("x86_64", build, with_dependencies=False)
            model = package.build_model_layer("x86_64", build, with_dependencies=False)
            package.compile_bytecode(tools.python, [layer, model, *functions.values()])
            print(f"package (code only, bytecode for Lambda's Python): {time.perf_counter() - started:.1f} s")
            print("\n".join(sizes(package, tools, build)))
            index = corpus_index()
            (root / "home").mkdir()
            if index:
                shutil.copy(index, root / "home" / "index.sqlite")
            print(f"corpus index: {index or 'none found (run make run once): document questions answer unavailable'}")

            start_env = {"GROUNDCHAT_DYNAMODB_ENDPOINT": db.endpoint, "GROUNDCHAT_HOME": str(root / "home"),
                         "GROUNDCHAT_DEV_SECRET": DEV_SECRET, "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_MODEL": "offline",
                         "GROUNDCHAT_SEARCH_BACKEND": "embedded", "GROUNDCHAT_MODE": "private"}

            def start_chat(n: int) -> LocalLambda:
                (root / f"chat-{n}").mkdir()
                return LocalLambda(function_config(template, "ChatFunction"), build, root / f"chat-{n}",
                                   {**start_env, "PORT": str(free_port())}).start()

            inits, firsts = [], []
            chat = None
            with httpx.Client(timeout=120) as client:
                for n in range(max(1, args.cold)):
                    if chat is not None:
                        chat.stop()
                    chat = start_chat(n)
                    api = RestApiStandIn(template, {"ChatFunction": chat}).start()
                    try:
                        # The emulator starts the runtime (and so the adapter and uvicorn) on the first invoke.
                        started = time.perf_counter()
                        response = client.get(api.stage_url + "/healthz")
                        firsts.append((time.perf_counter() - started) * 1000)
                        if response.status_code != 200:
                            print(f"bench/lambda_shape.py: the chat function answered {response.status_code}:\n{chat.log()}")
                            return 1
                        inits += [float(m.group(1)) for line in chat.output
                                  if (m := re.search(r"INIT REPORT\(durationMs: ([\d.]+)\)", line))]
                    finally:
                        if n < max(1, args.cold) - 1:
                            api.stop()
                print(f"cold start over {len(firsts)} fresh starts (ms): emulator init phase "
                      f"{' '.join(f'{x:.0f}' for x in inits)}; first request (init + /healthz) "
                      f"{' '.join(f'{x:.0f}' for x in firsts)}")

                first_answer = ask(client, api.stage_url + "/api/chat", headers)[1]
                app_pid = listener_pid(int(chat.local_env["PORT"]))
                rss_first = rss_mib(app_pid)
                direct_url = f"http://127.0.0.1:{chat.local_env['PORT']}/api/chat"
                through, direct = [], []
                for _ in range(args.requests):  # in turns, so a busier machine slows both alike
                    through.append(ask(client, api.stage_url + "/api/chat", headers))
                    direct.append(ask(client, direct_url, headers))
                rss_last = rss_mib(app_pid)
                if args.memory_answers:
                    memory_run(client, api.stage_url + "/api/chat", headers, app_pid, args.memory_answers)
                api.stop()
                chat.stop()
                print(f"run-lambda: first answer after the cold start {first_answer:.0f} ms; the app's RSS "
                      f"{rss_first:.0f} MiB after it, {rss_last:.0f} MiB after {2 * args.requests} more")
                ready, first_local, rss_local, _ = make_run_side(client, start_env, headers)
                print(f"make run (uvicorn in this venv): ready (init, model loaded) {ready:.0f} ms, first answer "
                      f"{first_local:.0f} ms, RSS {rss_local:.0f} MiB")
            print(f"warm answers, {args.requests} each (ms){'':<5}{'first p50':>9}{'p95':>9}{'full p50':>9}{'p95':>9}")
            print(summary("stand-in + emulator + adapter", through))
            print(summary("uvicorn in the function, direct", direct))
            gap = [full - first for first, full in through]
            print(f"through the stand-in, the last frame came {statistics.median(gap):.0f} ms (median) after the first "
                  "(the emulator hands a streamed answer over whole)")
    finally:
        db.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
