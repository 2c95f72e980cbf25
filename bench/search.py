"""Search latency (p50/p95) on the embedded default, and the ingest time of the full corpus.

Reads the corpus from GROUNDCHAT_CORPUS_DIR (default ../shared/corpus); prints figures, asserts nothing.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from groundchat.config import get_settings
from groundchat.search.embeddings import LocalOnnxEmbedder
from groundchat.search.ingest import manifest, run_ingest
from groundchat.search.embedded import EmbeddedIndex, EmbeddedStore
from groundchat.search.service import SearchService

# Questions in users' own words (the report split): what the search meets in use.
QUERIES = Path(__file__).resolve().parent.parent / "tests" / "eval" / "users_words_report.jsonl"


def main() -> int:
    settings = get_settings()
    corpus = Path(settings.corpus_dir)
    if not (corpus / "wcag22").is_dir():
        print(f"bench/search.py: no corpus at {corpus}; skipped")
        return 0
    import json

    questions = [json.loads(line)["q"] for line in QUERIES.read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = LocalOnnxEmbedder()
        embedder.embed(["warm up"])  # model load is not ingest work
        specs = manifest(corpus, Path(settings.docs_dir))
        started = time.perf_counter()
        summary = run_ingest(specs, EmbeddedStore(Path(tmp) / "index.sqlite"), embedder)
        ingest_s = time.perf_counter() - started
        started = time.perf_counter()
        noop = run_ingest(specs, EmbeddedStore(Path(tmp) / "index.sqlite"), embedder)
        noop_s = time.perf_counter() - started
        service = SearchService(EmbeddedIndex(Path(tmp) / "index.sqlite"), embedder)
        service.search("warm up")
        for leg in ("hybrid", "bm25", "vector"):
            times = []
            for _ in range(3):
                for q in questions:
                    t = time.perf_counter()
                    service.search(q, leg=leg)  # type: ignore[arg-type]
                    times.append((time.perf_counter() - t) * 1000)
            times.sort()
            p95 = times[int(len(times) * 0.95) - 1]
            print(f"search {leg:6}: p50 {statistics.median(times):6.2f} ms  p95 {p95:6.2f} ms  (n={len(times)})")
    print(f"ingest (full corpus, {summary.total_chunks} chunks, embedded + local model): {ingest_s:.1f} s")
    print(f"re-ingest, nothing changed: {noop_s * 1000:.0f} ms (changed={noop.changed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
