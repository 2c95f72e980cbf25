"""The local embedding models side by side in the real search, on the never-read sets.

    python bench/embedding_models.py [--models minilm-int8 bge-small-en-v1.5-q e5-small-v2-q]
                                     [--sets fifth sixth ...] [--legs hybrid vector bm25]

Each model gets its own embedded index of the corpus (built once into the tools' cache under
embedding-model-indexes/, re-ingested as a no-op after), with the pooling and prefixes it needs
(search/embedding_models.json). For every set and leg it prints hit@1, hit@5 and MRR per source,
EAA by article and by paragraph where the set names paragraphs, then each model's query-embedding
and hybrid-search p50/p95. With `--ranker FILE`, hybrid also runs with that learned ranking step
("ranked"), beside the fusion alone. Prints figures, asserts nothing.
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
from groundchat.search.embedding_models import cache_dir, local_model
from groundchat.search.embeddings import LocalOnnxEmbedder
from groundchat.search.ingest import manifest, run_ingest
from groundchat.search.learned_rank import LearnedRanker
from groundchat.search.service import SearchService
from groundchat_cli.retrieval_eval import evaluate, load_questions

EVAL = Path(__file__).resolve().parent.parent / "tests" / "eval"
# The retrieval sets whose misses were never read (tests/eval/README.md).
NEVER_READ = ("report", "second_report", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh")

# Run in a fresh interpreter per model, so the figure is that model's session and nothing else's:
# the process's RSS before the model loads, after, and after embedding every query of the sets.
_SESSION_RSS = """
import json, sys
from groundchat.search.embeddings import LocalOnnxEmbedder
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
queries = json.loads(sys.stdin.read())
before = rss()
embedder = LocalOnnxEmbedder(model=sys.argv[1])
embedder.load()
loaded = rss()
for q in queries:
    embedder.embed_query(q)
print(json.dumps({"before": before, "loaded": loaded, "after_queries": rss()}))
"""


def index_for(key: str, specs) -> tuple[Path, LocalOnnxEmbedder]:
    embedder = LocalOnnxEmbedder(model=key)
    path = cache_dir(local_model(key)).parent.parent / "embedding-model-indexes" / key / "index.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    summary = run_ingest(specs, EmbeddedStore(path), embedder)
    print(f"{key}: index {path} ({summary.total_chunks} chunks, {time.perf_counter() - started:.0f} s)", flush=True)
    return path, embedder


def session_rss(key: str, queries: list[str]) -> dict[str, float]:
    """MiB: the process before the model loads, once loaded, and after embedding `queries`."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _SESSION_RSS, key], input=json.dumps(queries), text=True,
                          capture_output=True, check=True)
    return json.loads(done.stdout)


def add(total: dict, name: str, f: dict) -> None:
    """Pools a set's figures into `total` (weighted by its n), for the figures over every set."""
    t = total.setdefault(name, {"n": 0, "hit@1": 0.0, "hit@5": 0.0, "mrr": 0.0})
    t["n"] += f["n"]
    for key in ("hit@1", "hit@5", "mrr"):
        t[key] += f[key] * f["n"]


def pooled(t: dict) -> dict:
    return {"n": t["n"], **{key: t[key] / max(t["n"], 1) for key in ("hit@1", "hit@5", "mrr")}}


def row(name: str, f: dict) -> str:
    return f"{name:28} n={f['n']:3}  hit@1 {f['hit@1']:.3f}  hit@5 {f['hit@5']:.3f}  MRR {f['mrr']:.3f}"


def p95(times: list[float]) -> float:
    times = sorted(times)
    return times[max(int(len(times) * 0.95) - 1, 0)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["minilm-int8", "bge-small-en-v1.5-q", "e5-small-v2-q"])
    parser.add_argument("--sets", nargs="+", default=list(NEVER_READ))
    parser.add_argument("--legs", nargs="+", default=["hybrid", "vector", "bm25"])
    parser.add_argument("--ranker", type=Path, default=None,
                        help="a ranker file (groundchat eval ranker --out): hybrid is also run with it, as 'ranked'")
    args = parser.parse_args(argv)
    settings = get_settings()
    corpus = Path(settings.corpus_dir)
    if not (corpus / "wcag22").is_dir():
        print(f"bench/embedding_models.py: no corpus at {corpus}; skipped")
        return 0
    with tempfile.TemporaryDirectory() as no_docs:
        specs = manifest(corpus, Path(no_docs))  # the corpus alone, as the test index
        for key in args.models:
            path, embedder = index_for(key, specs)
            service = SearchService(EmbeddedIndex(path), embedder, ranker=None)
            services = {"hybrid": service, "vector": service, "bm25": service}
            if args.ranker is not None:
                model = json.loads(args.ranker.read_text(encoding="utf-8"))
                services["ranked"] = SearchService(EmbeddedIndex(path), embedder, ranker=LearnedRanker(model))
            totals: dict[str, dict] = {}
            for name in args.sets:
                questions = load_questions(EVAL / f"users_words_{name}.jsonl")
                for leg in [*args.legs, *(["ranked"] if args.ranker else [])]:
                    report = evaluate(services[leg], questions, leg="hybrid" if leg == "ranked" else leg)
                    print(f"\n{key} · {name} · {leg}")
                    total = totals.setdefault(leg, {})
                    for source, f in report["per_source"].items():
                        print("  " + row(source, f))
                        add(total, source, f)
                    for source, both in report.get("paragraph", {}).items():
                        print("  " + row(f"{source} by article", both["article"]))
                        print("  " + row(f"{source} by paragraph", both["paragraph"]))
                        add(total, f"{source} by article", both["article"])
                        add(total, f"{source} by paragraph", both["paragraph"])
                    sys.stdout.flush()
            for leg, total in totals.items():
                print(f"\n{key} · every set ({', '.join(args.sets)}) · {leg}")
                for name, t in total.items():
                    print("  " + row(name, pooled(t)))
            queries = [q.q for n in args.sets for q in load_questions(EVAL / f"users_words_{n}.jsonl")]
            embed_ms: list[float] = []
            search_ms: dict[str, list[float]] = {name: [] for name in services if name in ("hybrid", "ranked")}
            for q in queries:
                started = time.perf_counter()
                embedder.embed_query(q)
                embed_ms.append((time.perf_counter() - started) * 1000)
                for name, times in search_ms.items():
                    started = time.perf_counter()
                    services[name].search(q)
                    times.append((time.perf_counter() - started) * 1000)
            searches = "; ".join(f"{name} search p50 {statistics.median(t):.1f} ms p95 {p95(t):.1f} ms"
                                 for name, t in search_ms.items())
            print(f"\n{key}: query embedding p50 {statistics.median(embed_ms):.1f} ms p95 {p95(embed_ms):.1f} ms; "
                  f"{searches} (n={len(queries)})", flush=True)
            rss = session_rss(key, queries)
            print(f"{key}: process RSS {rss['before']:.0f} MiB before the model, {rss['loaded']:.0f} MiB loaded "
                  f"(session {rss['loaded'] - rss['before']:.0f} MiB), {rss['after_queries']:.0f} MiB after "
                  f"{len(queries)} queries", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
