"""The deployed shape's latency, here: the packaged chat function under the real Lambda Web Adapter
and the runtime interface emulator, behind the API Gateway REST stand-in (make lambda-tools).

- Cold start: the emulator's init phase (`INIT REPORT`) of COLD fresh starts, and the first
  request's wall time after each (init, then the request).
- Warm: N questions to /api/chat through the stand-in, the time to the first frame and to the last,
  p50 and p95; the same questions straight to the app's uvicorn inside the function (the adapter's
  own target on the loopback), which shows what the stand-in, the emulator and the adapter add.

The model is the offline answerer (no key, no cost) and DynamoDB is moto's server. Prints figures,
asserts nothing; where the tools are not built, or not root, it says so in one line and exits 0.
"""
from __future__ import annotations

import argparse
import os
import re
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


def ask(client, url: str, headers: dict[str, str]) -> tuple[float, float]:
    """(ms to the first SSE frame, ms to the end of the answer)."""
    start = time.perf_counter()
    first = None
    with client.stream("POST", url, json=QUESTION, headers={**headers, "accept": "text/event-stream"}) as response:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20, help="warm questions per path (default 20)")
    parser.add_argument("--cold", type=int, default=3, help="fresh starts of the function (default 3)")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "infra"))
    from groundchat_testkit.local_lambda import LambdaToolsMissing, require_tools

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
    from groundchat_testkit.apigw_rest import RestApiStandIn
    from groundchat_testkit.local_lambda import LocalLambda, free_port, function_config, load_template

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
            package.compile_bytecode(tools.python, [layer, *functions.values()])
            print(f"package (code only, bytecode for Lambda's Python): {time.perf_counter() - started:.1f} s")

            def start_chat(n: int) -> LocalLambda:
                env = {"GROUNDCHAT_DYNAMODB_ENDPOINT": db.endpoint, "GROUNDCHAT_HOME": str(root / "home"),
                       "GROUNDCHAT_DEV_SECRET": DEV_SECRET, "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_MODEL": "offline",
                       "GROUNDCHAT_SEARCH_BACKEND": "embedded", "GROUNDCHAT_MODE": "private", "PORT": str(free_port())}
                (root / f"chat-{n}").mkdir()
                return LocalLambda(function_config(template, "ChatFunction"), build, root / f"chat-{n}", env).start()

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

                ask(client, api.stage_url + "/api/chat", headers)  # the first answer loads what answers need
                direct_url = f"http://127.0.0.1:{chat.local_env['PORT']}/api/chat"
                through, direct = [], []
                for _ in range(args.requests):  # in turns, so a busier machine slows both alike
                    through.append(ask(client, api.stage_url + "/api/chat", headers))
                    direct.append(ask(client, direct_url, headers))
                api.stop()
                chat.stop()
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
