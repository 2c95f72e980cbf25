"""`groundchat ingest`, `groundchat search` and `groundchat eval retrieval`, registered by the main CLI."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from groundchat.config import get_settings


def _add_backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend", choices=["embedded", "opensearch"], default=None,
        help="which index: the embedded file, or OpenSearch (GROUNDCHAT_OPENSEARCH_ENDPOINT, else the node of "
             "the local stack on PORT, or the one running); default: GROUNDCHAT_SEARCH_BACKEND, else what the "
             "running stack serves")


def _search_settings(args: argparse.Namespace):
    """The settings of the backend this command searches, or None after saying in one line why not."""
    from groundchat_cli.stack_address import StackError, use_stack_search

    try:
        return use_stack_search(args.backend)
    except StackError as exc:
        print(exc, file=sys.stderr)
        return None


def _backend_name(settings) -> str:
    from groundchat.search import backend_kind

    kind = backend_kind(settings)
    return f"opensearch {settings.opensearch_endpoint}" if kind == "opensearch" else "embedded"


def add_corpus_commands(sub: Any) -> None:
    ingest = sub.add_parser("ingest", help="convert the sources, embed and index them (alias swapped when complete)")
    ingest.add_argument("--force", action="store_true", help="rebuild even if no source changed")
    _add_backend_option(ingest)
    ingest.set_defaults(func=cmd_ingest)

    search = sub.add_parser("search", help="search the corpus; QUERY '-' reads one query per line from stdin")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--json", action="store_true", help="print JSON (always, for '-')")
    search.add_argument("-k", type=int, default=5)
    search.add_argument("--leg", choices=["hybrid", "bm25", "vector"], default="hybrid")
    search.add_argument("--source", choices=["wcag22", "eaa", "docs"], default=None)
    _add_backend_option(search)
    search.set_defaults(func=cmd_search)

    evaluate = sub.add_parser("eval", help="evaluations")
    kinds = evaluate.add_subparsers(dest="eval_kind", required=True)
    retrieval = kinds.add_parser("retrieval", help="hit@1, hit@5 and MRR per source for a JSONL of {q, source, gold}")
    retrieval.add_argument("file", type=Path)
    retrieval.add_argument("--leg", choices=["hybrid", "bm25", "vector", "all"], default="all")
    retrieval.add_argument("--json", action="store_true")
    retrieval.add_argument("--graph", choices=["on", "off", "compare"], default="on",
                           help="the graph leg in hybrid searches; compare adds a hybrid row without it")
    retrieval.add_argument("--through-router", action="store_true",
                           help="ask as the offline answerer does: its router's plan, then the search it plans "
                                "(the sample's names stand for the data's)")
    retrieval.add_argument("--url", nargs="?", const="", default=None, metavar="URL",
                           help="search through a running app instead of in this process, as a client does "
                                "(its MCP door's search_docs): the functions `make run-lambda` or a deployment "
                                "serve; without URL the local stack on PORT, or the one running. Hybrid only")
    retrieval.add_argument("--as", dest="as_user", default=None, help="with --url: the user signed in as (dev token)")
    _add_backend_option(retrieval)
    retrieval.set_defaults(func=cmd_eval_retrieval)
    from groundchat_cli.eval_answers import add_eval_answers_command
    from groundchat_cli.eval_support import add_eval_support_command

    from groundchat_cli.ranker_train import add_eval_ranker_command

    add_eval_answers_command(kinds)
    add_eval_support_command(kinds)
    add_eval_ranker_command(kinds)


def cmd_ingest(args: argparse.Namespace) -> int:
    from groundchat.search import open_index_store
    from groundchat.search.embeddings import make_embedder
    from groundchat.search.ingest import run_ingest, specs_for
    from groundchat_cli.progress import IngestBars

    settings = _search_settings(args)
    if settings is None:
        return 2
    bars = IngestBars()
    try:
        summary = run_ingest(specs_for(settings), open_index_store(settings),
                             make_embedder(settings.embedding_model, region=settings.aws_region),
                             progress=bars, force=args.force)
    except Exception as exc:
        bars.close()
        print(f"ingest failed, the serving index is unchanged: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    bars.close()
    print("\n".join(summary.lines()))
    return 0


def _result_json(result: Any) -> dict[str, Any]:
    return {
        "query": result.query, "outcome": result.outcome, "reason": result.reason,
        "hits": [{"ref": p.ref, "source": p.source, "section": p.section, "title": p.title, "url": p.url,
                  "score": p.score} for p in result.passages],
        "freshness": result.freshness.model_dump(), "dropped": result.dropped,
        "debug": result.debug.record() if result.debug else None,
    }


def cmd_search(args: argparse.Namespace) -> int:
    from groundchat.search import open_default_search

    settings = _search_settings(args)
    if settings is None:
        return 2
    service = open_default_search(settings)  # loaded once, also for many queries on stdin
    sources = [args.source] if args.source else None
    if args.query == "-":
        for line in sys.stdin:
            if line.strip():
                result = service.search(line.strip(), k=args.k, leg=args.leg, sources=sources)
                print(json.dumps(_result_json(result), ensure_ascii=False), flush=True)
        return 0
    result = service.search(args.query, k=args.k, leg=args.leg, sources=sources)
    if args.json:
        print(json.dumps(_result_json(result), ensure_ascii=False, indent=2))
    else:
        if result.outcome == "unavailable":
            print(f"unavailable: {result.reason}")
        elif result.outcome == "empty":
            print("no passage matched")
        for n, p in enumerate(result.passages, start=1):
            print(f"{n}. [{p.ref}] {p.source} {p.section} — {p.title}  ({p.score:.4f})\n   {p.url}")
        if result.debug is not None:
            d = result.debug
            legs = ", ".join(f"{name}: {found.hits}" for name, found in d.legs.items())
            print(f"-- {_backend_name(settings)} {d.fusion} k={d.rrf_k} score share={d.score_share} rerank={d.rerank} "
                  f"legs({legs}) {d.timings_ms.get('total')} ms")
    return 0 if result.outcome != "unavailable" else 2


def _runs(legs: list[str], graph: str) -> list[tuple[str, bool]]:
    """Each (leg, graph leg on) the evaluation runs; `compare` adds hybrid without the graph."""
    runs = [(leg, graph != "off") for leg in legs]
    if graph == "compare" and "hybrid" in legs:
        runs.insert(runs.index(("hybrid", True)), ("hybrid", False))
    return runs


def cmd_eval_retrieval(args: argparse.Namespace) -> int:
    from groundchat_cli.retrieval_eval import evaluate, load_questions
    from groundchat.search import open_default_search

    if args.url is not None:
        return _eval_through_app(args)
    settings = _search_settings(args)
    if settings is None:
        return 2
    service = open_default_search(settings)
    questions = load_questions(args.file)
    if args.through_router:
        return _print_through_router(service, questions, args.json, get_settings().embedding_model)
    legs = ["bm25", "vector", "hybrid"] if args.leg == "all" else [args.leg]
    reports = [evaluate(service, questions, leg=leg, include_graph=graph) for leg, graph in _runs(legs, args.graph)]
    return _print_reports(reports, f"backend: {_backend_name(settings)}", args.json)


def _eval_through_app(args: argparse.Namespace) -> int:
    """The hybrid search of a running app, asked over its MCP door one question at a time."""
    from groundchat_cli.client import _token
    from groundchat_cli.mcp_search import McpSearch, RemoteSearchFailed
    from groundchat_cli.retrieval_eval import evaluate, load_questions
    from groundchat_cli.stack_address import app_url

    refused = ("--through-router" if args.through_router else "--backend" if args.backend
               else f"--leg {args.leg}" if args.leg not in ("all", "hybrid") else None)
    if refused:
        print(f"eval retrieval --url measures the app's own search (hybrid, its index): {refused} is for the "
              "search in this process", file=sys.stderr)
        return 2
    url = app_url(args.url or None)
    questions = load_questions(args.file)
    try:
        with McpSearch(url, _token(args.as_user)[1]) as service:
            reports = [evaluate(service, questions, leg="hybrid", include_graph=graph)
                       for _, graph in _runs(["hybrid"], args.graph)]
    except RemoteSearchFailed as exc:
        print(f"eval retrieval --url {url}: {exc}", file=sys.stderr)
        return 1
    return _print_reports(reports, f"through: {url}/mcp (search_docs)", args.json)


def _print_reports(reports: list[dict[str, Any]], heading: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(reports, indent=2))
        return 0
    print(heading)
    print(f"{'leg':14} {'source':8} {'n':>4} {'hit@1':>6} {'hit@5':>6} {'MRR':>6}")
    for report in reports:
        name = report["leg"] + ("" if report["leg"] != "hybrid" or report["graph"] else " no-graph")
        for source, f in [*report["per_source"].items(), ("all", report["overall"])]:
            print(f"{name:14} {source:8} {f['n']:>4} {f['hit@1']:>6.3f} {f['hit@5']:>6.3f} {f['mrr']:>6.3f}")
        # Questions with one right paragraph, counted at article and at paragraph level.
        for source, both in report.get("paragraph", {}).items():
            for level in ("article", "paragraph"):
                f = both[level]
                print(f"{name:14} {source + ' ' + level[:4]:8} {f['n']:>4} {f['hit@1']:>6.3f} {f['hit@5']:>6.3f} {f['mrr']:>6.3f}")
    for report in reports:
        # Every miss, with what came first instead: where the next improvement has to look.
        for miss in report["misses"]:
            print(f"miss {report['leg']:6} {miss['source']:6} wanted {', '.join(miss['gold'])}: {miss['q']}\n"
                  f"     got {'; '.join(miss['first']) or 'nothing'}")
    return 0


def _print_through_router(service, questions, as_json: bool, embedding_model: str) -> int:
    """The offline answerer's share of questions found in the first five: a question it refuses or
    sends to the runs' data counts as not found. Its gate weighs the likeness to the questions it
    answers, as the answerer does, where the embedding model is the local one."""
    from groundchat.benchmark.axe_rules import rule_ids
    from groundchat.offline.topic_neighbours import local_topic_neighbours
    from groundchat_cli.sample import sample_names
    from groundchat_cli.router_eval import answered_from_the_texts

    topic = local_topic_neighbours(embedding_model)
    report = answered_from_the_texts(service, questions, sample_names(), set(rule_ids()),
                                     topic=topic.margin if topic is not None else None)
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"through the router: {report['n']} questions, {report['searched']:.3f} searched, "
          f"{report['found@5']:.3f} found in the first five")
    for source, share in report["per_source"].items():
        print(f"  {source:8} {share:.3f}")
    return 0
