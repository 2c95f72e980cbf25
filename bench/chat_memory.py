"""What the chat process holds in memory: `groundchat serve` started as `make run` starts it, then
questions asked over HTTP as the page asks them (the offline answerer: its topic gate, the search,
the citation-support check and the recall all embed with the local model). Prints the server's
resident memory (VmRSS) when it is ready, after its first answer and after every tenth, and how
many threads it runs (each copy of the model brings a pool of its own). Asserts nothing.

    .venv/bin/python bench/chat_memory.py [--answers 50] [--port 8931] [--every 10] [--function]

`make run` keeps its DynamoDB stand-in (moto) inside the chat's own process, so the figure counts
every conversation, usage row and trace the answers stored, which in AWS live in DynamoDB. With
`--function` the measured process is the chat function's app as its run.sh starts it (uvicorn on
`chat_function.main:app`, the template's environment for the chat function, its init's warm-up),
and `groundchat serve` on the next port is only its store and index, as DynamoDB is in AWS.

The questions are those of the retrieval sets in users' words (tests/eval/users_words_*.jsonl, over
1,400, each asked once before any is asked again), so the answers search, look rules up and query
the runs as people's questions do, and no cache is flattered by repeats. The server starts as `make
run` starts it (MALLOC_ARENA_MAX=2 unless set; the function, with the template's environment).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
QUESTIONS = sorted((ROOT / "tests" / "eval").glob("users_words_*.jsonl"))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def threads(pid: int) -> int:
    """Each onnxruntime session starts its own pool of threads (one per core): a second copy of the
    model shows here as well as in the memory."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return -1


def server_pid(port: int) -> int:
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    marker = "pid="
    return int(out[out.index(marker) + len(marker):].split(",")[0])


def ask(client: httpx.Client, token: str, question: str) -> str:
    with client.stream("POST", "/api/chat", json={"stream": True, "message": question[:2000]},
                       headers={"authorization": f"Bearer {token}"}) as response:
        body = "".join(response.iter_text())
    done = [block for block in body.split("\n\n") if block.startswith("event: done")]
    return json.loads(done[-1].split("data: ", 1)[1])["reason"] if done else f"no done ({response.status_code})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument("--every", type=int, default=10, help="print the memory after every this many answers")
    parser.add_argument("--function", action="store_true", help="measure the chat function's app, the store apart")
    args = parser.parse_args()
    questions = list(dict.fromkeys(json.loads(line)["q"] for path in QUESTIONS
                                   for line in path.read_text().splitlines() if line.strip()))
    env = {"MALLOC_ARENA_MAX": "2", **os.environ, "PORT": str(args.port), "GROUNDCHAT_MODEL": "offline"}
    store = None
    if args.function:
        store = subprocess.Popen([str(BIN / "groundchat"), "serve", "--port", str(args.port + 1)], cwd=ROOT,
                                 env={**env, "PORT": str(args.port + 1)}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    try:
        if store is not None:
            wait_ready(store, args.port + 1)
            env = function_env(env, args.port + 1)
        server = subprocess.Popen(app_command(args.function, args.port), cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except BaseException:
        stop(store)
        raise
    try:
        url = f"http://127.0.0.1:{args.port}"
        started = time.monotonic()
        wait_ready(server, args.port)
        with httpx.Client(base_url=url, timeout=120) as client:
            pid = server_pid(args.port)
            print(f"ready after {time.monotonic() - started:.0f} s: RSS {rss_mib(pid):.0f} MiB", flush=True)
            token = subprocess.run([str(BIN / "groundchat"), "token", "dev"], cwd=ROOT, env=env, capture_output=True,
                                   text=True, check=True).stdout.strip()
            reasons: dict[str, int] = {}
            for n in range(args.answers):
                reason = ask(client, token, questions[n % len(questions)])
                reasons[reason] = reasons.get(reason, 0) + 1
                if n == 0 or (n + 1) % args.every == 0:
                    print(f"after {n + 1:>3} answer(s): RSS {rss_mib(pid):.0f} MiB", flush=True)
            print(f"answers by how they ended: {reasons}")
            print(f"threads in the chat process: {threads(pid)}")
    finally:
        stop(server)
        stop(store)


def wait_ready(process: subprocess.Popen, port: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
        while True:
            if process.poll() is not None:
                sys.exit(f"bench/chat_memory.py: {process.args[0]} exited ({process.returncode})")
            try:
                if client.get("/healthz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)


def app_command(function: bool, port: int) -> list[str]:
    if not function:
        return [str(BIN / "groundchat"), "serve", "--port", str(port)]
    # As functions/chat/run.sh starts it, from this venv instead of the layer.
    return [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port), "--no-access-log",
            "--app-dir", str(ROOT / "functions" / "chat"), "chat_function.main:app"]


def function_env(env: dict[str, str], store_port: int) -> dict[str, str]:
    """The chat function's environment in the template (its plain values), then the local stack's
    store, index and dev sign-in, as `make run-lambda` hands them to the packaged function."""
    sys.path.insert(0, str(ROOT / "cli"))
    from groundchat_cli.local_lambda import function_config, load_template

    stack = json.loads((ROOT / ".groundchat" / f"stack-{store_port}.json").read_text())
    local = {"GROUNDCHAT_HOME": str(ROOT / ".groundchat"), "GROUNDCHAT_DYNAMODB_ENDPOINT": stack["dynamodb_endpoint"],
             "GROUNDCHAT_TABLE_PREFIX": stack["table_prefix"], "GROUNDCHAT_AUTH_MODE": "dev",
             "GROUNDCHAT_MODEL": "offline", "GROUNDCHAT_MODE": "private", "GROUNDCHAT_SEARCH_BACKEND": "embedded",
             "GROUNDCHAT_IMAGES_ENDPOINT": stack["dynamodb_endpoint"],
             "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1"}
    template = function_config(load_template(ROOT / "template.yaml"), "ChatFunction").resolved_environment(local)
    template.pop("AWS_LAMBDA_EXEC_WRAPPER", None)  # the adapter's, not the app's
    return {**env, **template, "PORT": env["PORT"]}


def stop(process: subprocess.Popen | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(timeout=60)


if __name__ == "__main__":
    main()
