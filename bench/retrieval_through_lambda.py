"""The retrieval figures of the never-read sets, both ways: in this process (`groundchat eval
retrieval --leg hybrid`) and through the packaged chat function under the real Lambda Web Adapter
and runtime interface emulator, behind the API Gateway REST stand-in, asked as a client asks
(`groundchat eval retrieval --url`: the MCP door's search_docs).

    python bench/retrieval_through_lambda.py [--sets fifth sixth ...]

Both search the same corpus index (`make run`'s, else the tests' shared one) with the embedding
model the settings select. Per set it prints hit@1, hit@5 and MRR per source (EAA by article and by
paragraph where the set names paragraphs) each way and whether they are equal to the third
decimal, then the wall time of each way. Prints figures (never the misses: the sets are never
read), asserts nothing; where the tools are not built, or not root, it says so in one line.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVAL = REPO / "tests" / "eval"
# The retrieval sets whose misses were never read (tests/eval/README.md).
NEVER_READ = ("report", "second_report", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh")
DEV_SECRET = "bench-secret-for-hs256-signing-0123456789"
GRANTS = {"docs.read"}


def rows(report: dict) -> list[tuple[str, dict]]:
    out = [*report["per_source"].items(), ("all", report["overall"])]
    for source, both in report.get("paragraph", {}).items():
        out += [(f"{source} {level[:4]}", both[level]) for level in ("article", "paragraph")]
    return out


def line(name: str, f: dict) -> str:
    return f"{name:10} n={f['n']:3}  hit@1 {f['hit@1']:.3f}  hit@5 {f['hit@5']:.3f}  MRR {f['mrr']:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(NEVER_READ))
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "infra"))
    sys.path.insert(0, str(REPO / "bench"))
    from groundchat_cli.local_lambda import LambdaToolsMissing, require_tools

    try:
        tools = require_tools()
    except LambdaToolsMissing as missing:
        print(f"bench/retrieval_through_lambda.py: {missing}; skipped")
        return 0
    from lambda_shape import corpus_index

    index = corpus_index()
    if index is None:
        print("bench/retrieval_through_lambda.py: no corpus index (run `make run` once and ingest); skipped")
        return 0

    import package
    from groundchat_cli.moto_store import LocalDynamo

    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import Settings
    from groundchat.search import open_default_search
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import USERS
    from groundchat_cli.apigw_rest import RestApiStandIn
    from groundchat_cli.local_lambda import LocalLambda, free_port, function_config, load_template
    from groundchat_cli.mcp_search import McpSearch
    from groundchat_cli.retrieval_eval import evaluate, load_questions

    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"), ("AWS_DEFAULT_REGION", "eu-west-1")):
        os.environ.setdefault(name, value)
    print(f"corpus index: {index}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    template = load_template()
    db = LocalDynamo().start()
    chat = api = None
    try:
        dynamo = Dynamo(Settings(dynamodb_endpoint=db.endpoint))
        create_tables(dynamo)
        dynamo.table(USERS).put_item(Item={"user_id": "alice", "grants": GRANTS})
        with tempfile.TemporaryDirectory(prefix="groundchat-bench-retrieval-") as tmp:
            root = Path(tmp)
            build = root / "build"
            functions = package.build_functions(build)
            layer = package.build_layer("x86_64", build, with_dependencies=False)
            model = package.build_model_layer("x86_64", build, with_dependencies=False)
            package.compile_bytecode(tools.python, [layer, model, *functions.values()])
            home = root / "home"
            home.mkdir()
            shutil.copy(index, home / "index.sqlite")
            env = {"GROUNDCHAT_DYNAMODB_ENDPOINT": db.endpoint, "GROUNDCHAT_HOME": str(home),
                   "GROUNDCHAT_DEV_SECRET": DEV_SECRET, "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_MODEL": "offline",
                   "GROUNDCHAT_SEARCH_BACKEND": "embedded", "GROUNDCHAT_MODE": "private", "PORT": str(free_port())}
            for name, value in os.environ.items():  # an embedding model chosen here is the function's too
                if name.startswith("GROUNDCHAT_") and name not in env:
                    env[name] = value
            (root / "chat").mkdir()
            chat = LocalLambda(function_config(template, "ChatFunction"), build, root / "chat", env).start()
            api = RestApiStandIn(template, {"ChatFunction": chat}).start()
            here = open_default_search(Settings(home=str(home), search_backend="embedded"))
            token = issue_dev_token(Settings(dev_secret=DEV_SECRET), "alice")
            unequal = []
            with McpSearch(api.stage_url, token) as there:
                for name in args.sets:
                    questions = load_questions(EVAL / f"users_words_{name}.jsonl")
                    started = time.perf_counter()
                    embedded = evaluate(here, questions, leg="hybrid")
                    t_here = time.perf_counter() - started
                    started = time.perf_counter()
                    packaged = evaluate(there, questions, leg="hybrid")
                    t_there = time.perf_counter() - started
                    same = rows(embedded) == rows(packaged)
                    if not same:
                        unequal.append(name)
                    print(f"\n{name} ({len(questions)} questions): {'equal' if same else 'NOT EQUAL'}; "
                          f"in-process {t_here:.0f} s, through the function {t_there:.0f} s")
                    for (label, a), (_, b) in zip(rows(embedded), rows(packaged)):
                        print(f"  in-process {line(label, a)}\n  packaged   {line(label, b)}")
            print(f"\n{len(args.sets) - len(unequal)} of {len(args.sets)} sets equal to the third decimal"
                  + (f"; not: {', '.join(unequal)}" if unequal else ""))
    finally:
        if api is not None:
            api.stop()
        if chat is not None:
            chat.stop()
        db.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
