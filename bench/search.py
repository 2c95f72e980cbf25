"""Search latency (p50/p95) and the full corpus's ingest time, on the embedded default and, with
`--backend opensearch`, on a local OpenSearch node beside it in the same run.

    python bench/search.py                       the embedded index
    python bench/search.py --backend opensearch  the node and the embedded index, measured in turn

The two backends are measured alternately, round by round, so the machine's noise falls on both.
Both ingests embed every chunk (the node has no vector cache), so their times compare. Reads the
corpus from GROUNDCHAT_CORPUS_DIR (default ../shared/corpus); prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from groundchat.config import get_settings
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore
from groundchat.search.embeddings import LocalOnnxEmbedder
from groundchat.search.ingest import manifest, run_ingest
from groundchat.search.service import SearchService

# Questions in users' own words (the report split): what the search meets in use.
QUERIES = Path(__file__).resolve().parent.parent / "tests" / "eval" / "users_words_report.jsonl"
ROUNDS = 3
# Hybrid twice: with the graph leg forced on and off (search/graph_leg.py), measured in turn.
RUNS = (("hybrid", True), ("hybrid", False), ("bm25", None), ("vector", None))


def run_name(leg: str, graph: bool | None) -> str:
    return leg if graph is None else f"{leg} graph {'on' if graph else 'off'}"


def percentiles(times: list[float]) -> str:
    times = sorted(times)
    p95 = times[max(int(len(times) * 0.95) - 1, 0)]
    return f"p50 {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  (n={len(times)})"


def timed_ingest(specs, store, embedder) -> tuple[object, float, float]:
    started = time.perf_counter()
    summary = run_ingest(specs, store, embedder, use_vector_cache=False)
    full = time.perf_counter() - started
    started = time.perf_counter()
    noop = run_ingest(specs, store, embedder)
    assert not noop.changed, "a second ingest of unchanged sources must be a no-op"
    return summary, full, time.perf_counter() - started


def start_node(tmp: Path):
    """The local node, or None after one line saying why it cannot run here."""
    from groundchat_cli.stack_address import free_port
    from groundchat_cli.opensearch_node import LocalOpenSearch, NodeUnavailable

    node = LocalOpenSearch(tmp / "opensearch", free_port())
    try:
        return node.start(say=lambda line: print(f"bench/search.py: {line}"))
    except NodeUnavailable as exc:
        print(f"bench/search.py: the OpenSearch node cannot run here ({exc}); measured the embedded index only")
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["embedded", "opensearch"], default="embedded")
    args = parser.parse_args(argv)
    settings = get_settings()
    corpus = Path(settings.corpus_dir)
    if not (corpus / "wcag22").is_dir():
        print(f"bench/search.py: no corpus at {corpus}; skipped")
        return 0
    questions = [json.loads(line)["q"] for line in QUERIES.read_text().splitlines() if line.strip()]
    embedder = LocalOnnxEmbedder()
    embedder.embed(["warm up"])  # model load is not ingest work
    specs = manifest(corpus, Path(settings.docs_dir))
    with tempfile.TemporaryDirectory() as tmp:
        services: dict[str, SearchService] = {}
        path = Path(tmp) / "index.sqlite"
        summary, full_s, noop_s = timed_ingest(specs, EmbeddedStore(path), embedder)
        print(f"ingest embedded  : full corpus ({summary.total_chunks} chunks) {full_s:.1f} s; "
              f"re-ingest, nothing changed: {noop_s * 1000:.0f} ms")
        services["embedded"] = SearchService(EmbeddedIndex(path), embedder)
        node = start_node(Path(tmp)) if args.backend == "opensearch" else None
        try:
            if node is not None:
                from opensearchpy import OpenSearch

                from groundchat.search.opensearch import OpenSearchIndex, OpenSearchStore

                client = OpenSearch(hosts=[node.endpoint], timeout=30, max_retries=0)
                alias = settings.opensearch_index_alias
                summary, full_s, noop_s = timed_ingest(specs, OpenSearchStore(client, alias), embedder)
                print(f"ingest opensearch: full corpus ({summary.total_chunks} chunks) {full_s:.1f} s; "
                      f"re-ingest, nothing changed: {noop_s * 1000:.0f} ms")
                services["opensearch"] = SearchService(OpenSearchIndex(client, alias), embedder)
            times = {(name, run): [] for name in services for run in RUNS}
            for service in services.values():
                service.search("warm up")
            for _ in range(ROUNDS):
                for leg, graph in RUNS:
                    for name, service in services.items():
                        for q in questions:
                            started = time.perf_counter()
                            service.search(q, leg=leg, include_graph=graph)  # type: ignore[arg-type]
                            times[(name, (leg, graph))].append((time.perf_counter() - started) * 1000)
            for run in RUNS:
                for name in services:
                    print(f"search {run_name(*run):16} {name:10}: {percentiles(times[(name, run)])}")
        finally:
            if node is not None:
                node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
