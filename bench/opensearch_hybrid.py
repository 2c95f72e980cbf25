"""Our fusion against OpenSearch's own hybrid search, on the question sets no tuning has read.

    python bench/opensearch_hybrid.py           the table
    python bench/opensearch_hybrid.py --json F  also every figure as JSON in F
    python bench/opensearch_hybrid.py --limit 5 the first 5 questions of each set only

A local node with the neural-search plugin (infra/opensearch/node/neural.pom.xml unpacks it beside
the node's jars; the node loads it as one more classpath plugin) gets the real corpus through the
ingest's own code, then each question is searched by:

- served: SearchService as served on the OpenSearch backend: both legs, the question bank's rows,
  the criterion leg, the prior, the exact and named-text paths;
- ours 2 legs: our fusion (search/fusion.py) of the BM25 and vector legs alone, nothing after it;
- OpenSearch's `hybrid` query of the same two legs (the same query bodies, from msearch_body),
  combined by a search pipeline: the normalization processor (min_max or l2, arithmetic_mean,
  BM25/vector weights) or the score-ranker processor (reciprocal rank fusion, rank constant 60).

The two-leg rows are the fair comparison: the same candidates (30 a leg), the same expanded
question and vector, only the combination differs. Figures: hit@5 and MRR per source, through
retrieval_eval.evaluate, so a hit means what it means in `groundchat eval retrieval`.

Where Java, Maven, the corpus, the plugin or the node is missing it says so in one line and exits
0 (`make bench` runs every bench script).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
NEURAL_POM = REPO / "infra" / "opensearch" / "node" / "neural.pom.xml"
NEURAL_PLUGIN = "org.opensearch.neuralsearch.plugin.NeuralSearch"
SETS = ["users_words_report", "users_words_second_report", "users_words_fifth", "users_words_sixth",
        "users_words_seventh", "users_words_eighth", "users_words_ninth"]
# name → the pipeline's processor. Weights are in the hybrid query's order: BM25, then vector.
PIPELINES: dict[str, dict[str, Any]] = {
    **{f"os {norm} {w_bm25}/{w_vec}": {"normalization-processor": {
        "normalization": {"technique": norm},
        "combination": {"technique": "arithmetic_mean", "parameters": {"weights": [w_bm25, w_vec]}}}}
       for norm in ("min_max", "l2") for w_bm25, w_vec in ((0.3, 0.7), (0.5, 0.5), (0.7, 0.3))},
    "os rrf 60": {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 60}}},
}


def say(line: str) -> None:
    print(f"bench/opensearch_hybrid.py: {line}", flush=True)


class Skip(Exception):
    """This machine cannot run the measurement; the message is the one line to print."""


def build_neural(target: Path) -> Path:
    """The plugin's jars in the node's cache, unpacked once per version of the pom."""
    folder = target / "neural"
    stamp = target / "neural-built"
    digest = hashlib.sha256(NEURAL_POM.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text() == digest and any(folder.glob("opensearch-neural-search-*.jar")):
        return folder
    say(f"unpacking the neural-search plugin into {folder} (once)")
    done = subprocess.run(["mvn", "-q", "-B", "-f", str(NEURAL_POM), f"-Dnode.cache={target}", "package"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise Skip("fetching the neural-search plugin failed: " + " | ".join(tail))
    stamp.write_text(digest)
    return folder


def start_node(tmp: Path):
    from groundchat_cli.stack_address import free_port
    from groundchat_cli.opensearch_node import LocalOpenSearch, NodeUnavailable, build

    try:
        target = build(say)
    except NodeUnavailable as exc:
        raise Skip(str(exc)) from None
    neural = build_neural(target)
    node = LocalOpenSearch(tmp / "opensearch", free_port(), extra_classpath=(str(neural / "*"),),
                           extra_plugins=(NEURAL_PLUGIN,))
    try:
        return node.start(say=say)
    except NodeUnavailable as exc:
        raise Skip(f"the node with the neural-search plugin did not start: {exc}") from None


@dataclass
class Hit:
    source: str
    section: str


@dataclass
class Ranked:
    passages: list[Hit]


class Ranking:
    """Stands in for SearchService in retrieval_eval.evaluate: a question → its first k hits."""

    def __init__(self, rank: Callable[[str, int], list[Hit]]) -> None:
        self.rank = rank

    def search(self, query: str, *, k: int, leg: str) -> Ranked:
        return Ranked(self.rank(query, k))


class Recorder:
    """A method as retrieval_eval.evaluate calls it, keeping the passages it returned for each
    question, so each question's rank can be compared method against method."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.kept: dict[str, list[tuple[str, str]]] = {}

    def search(self, query: str, *, k: int, leg: str) -> Any:
        result = self.inner.search(query, k=k, leg=leg)
        self.kept[query] = [(p.source, p.section) for p in result.passages]
        return result


def rank_of(passages: list[tuple[str, str]], source: str, gold: list[str]) -> int:
    """The gold passage's rank as retrieval_eval.evaluate counts it; 0 when not in the first k."""
    from groundchat_cli.gold_match import matches_gold

    return next((i + 1 for i, (s, section) in enumerate(passages) if s == source and matches_gold(section, gold)), 0)


def paired(ranks: dict[str, list[int]], base: str, rounds: int = 2000) -> dict[str, dict[str, Any]]:
    """Each method against `base` on the same questions: the difference in MRR and hit@5 with a
    95% interval from resampling the questions (paired, so the questions' own difficulty cancels)."""
    import numpy as np

    rng = np.random.default_rng(31)
    base_ranks = np.array(ranks[base])
    picks = rng.integers(0, len(base_ranks), size=(rounds, len(base_ranks)))
    rr = lambda r: np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0)
    hit = lambda r: ((r > 0) & (r <= 5)).astype(float)
    out = {}
    for method, values in ranks.items():
        mine = np.array(values)
        row = {}
        for name, per_question in (("mrr", rr), ("hit@5", hit)):
            diff = per_question(mine) - per_question(base_ranks)
            means = diff[picks].mean(axis=1)
            row[name] = {"diff": round(float(diff.mean()), 3),
                         "low": round(float(np.percentile(means, 2.5)), 3),
                         "high": round(float(np.percentile(means, 97.5)), 3)}
        out[method] = row
    return out


class TwoLegs:
    """The served service's query as its legs see it (expanded, embedded), computed once a question
    and shared by every two-leg combination."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self._seen: dict[str, tuple[str, Any]] = {}

    def prepared(self, query: str) -> tuple[str, Any]:
        from groundchat.search.vocabulary import with_texts_words

        if query not in self._seen:
            expanded = with_texts_words(query) if self.service.expand else query
            self._seen[query] = (expanded, self.service.embedder.embed_query(expanded))
        return self._seen[query]


def hybrid_body(expanded: str, vector: Any, depth: int) -> dict[str, Any]:
    """OpenSearch's hybrid query over exactly our two legs' queries."""
    from groundchat.corpus.chunk import SOURCES
    from groundchat.search.opensearch import msearch_body

    lines = msearch_body(expanded, vector, depth, list(SOURCES), {"bm25", "vector"})
    bm25, knn = lines[1]["query"], lines[3]["query"]
    return {"size": depth, "_source": ["source", "section"], "query": {"hybrid": {"queries": [bm25, knn]}}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every figure here too")
    parser.add_argument("--limit", type=int, help="only the first N questions of each set (a quick look)")
    args = parser.parse_args(argv)
    from groundchat.config import get_settings

    settings = get_settings()
    if not (Path(settings.corpus_dir) / "wcag22").is_dir():
        say(f"no corpus at {settings.corpus_dir}; skipped")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        try:
            node = start_node(Path(tmp))
        except Skip as exc:
            say(f"{exc}; skipped")
            return 0
        try:
            return measure(settings, node, args.json, args.limit)
        finally:
            node.stop()


def measure(settings: Any, node: Any, json_path: Path | None, limit: int | None) -> int:
    from groundchat.search import open_default_search, open_index_store
    from groundchat.search.embeddings import make_embedder
    from groundchat.search.fusion import fuse
    from groundchat.search.ingest import run_ingest, specs_for
    from groundchat_cli.retrieval_eval import evaluate, load_questions
    from groundchat.search.pipeline import CANDIDATES_PER_LEG

    settings = settings.model_copy(update={"search_backend": "opensearch", "opensearch_endpoint": node.endpoint})
    started = time.perf_counter()
    summary = run_ingest(specs_for(settings), open_index_store(settings),
                         make_embedder(settings.embedding_model, region=settings.aws_region))
    say(f"ingested {summary.total_chunks} chunks in {time.perf_counter() - started:.0f} s")
    served = open_default_search(settings)
    client, alias = served.backend.client, served.backend.alias
    available = []
    for name, processor in PIPELINES.items():
        try:
            client.transport.perform_request("PUT", f"/_search/pipeline/{pipeline_id(name)}",
                                             body={"phase_results_processors": [processor]})
            available.append(name)
        except Exception as exc:  # a processor this release lacks: its row is left out, said once
            say(f"{name}: the pipeline was refused ({str(exc)[:200]}); left out")
    shared = TwoLegs(served)

    def ours(query: str, k: int) -> list[Hit]:
        expanded, vector = shared.prepared(query)
        legs = served.backend.legs(expanded, vector, CANDIDATES_PER_LEG, None, {"bm25", "vector"})
        fused = fuse(legs, weights={"bm25": 1.0, "vector": 1.0})
        return [Hit(h.chunk.source, h.chunk.section) for h in fused[:k]]

    def opensearch(name: str) -> Callable[[str, int], list[Hit]]:
        def rank(query: str, k: int) -> list[Hit]:
            expanded, vector = shared.prepared(query)
            response = client.search(index=alias, body=hybrid_body(expanded, vector, CANDIDATES_PER_LEG),
                                     params={"search_pipeline": pipeline_id(name)})
            return [Hit(h["_source"]["source"], h["_source"]["section"]) for h in response["hits"]["hits"][:k]]
        return rank

    methods: dict[str, Recorder] = {name: Recorder(m) for name, m in {
        "served": served, "ours 2 legs": Ranking(ours), **{n: Ranking(opensearch(n)) for n in available}}.items()}
    ranks: dict[str, list[int]] = {m: [] for m in methods}
    figures: dict[str, dict[str, Any]] = {}
    pooled: dict[str, list[Any]] = {m: [] for m in methods}
    for set_name in SETS:
        questions = load_questions(REPO / "tests" / "eval" / f"{set_name}.jsonl")[:limit]
        t = time.perf_counter()
        figures[set_name] = {}
        for method, service in methods.items():
            figures[set_name][method] = evaluate(service, questions, k=5)
            pooled[method].append(figures[set_name][method])
            ranks[method] += [rank_of(service.kept[q.q], q.source, q.gold) for q in questions]
        say(f"{set_name}: {len(questions)} questions, {len(methods)} methods, {time.perf_counter() - t:.0f} s")
        print_table(set_name, figures[set_name])
    figures["all sets"] = {m: pool(results) for m, results in pooled.items()}
    print_table("all sets (pooled)", figures["all sets"])
    # The fair comparison: every two-leg combination against our fusion of the same two legs.
    against = paired({m: r for m, r in ranks.items() if m != "served"}, "ours 2 legs")
    print(f"\nall sets, paired against ours 2 legs ({len(ranks['served'])} questions): difference [95% interval]")
    for method, row in against.items():
        if method != "ours 2 legs":
            print(f"{method:18}" + "".join(f"  {name} {c['diff']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]"
                                           for name, c in row.items()))
    if json_path:
        out = {s: {m: {k: v for k, v in r.items() if k != "misses"} for m, r in f.items()} for s, f in figures.items()}
        json_path.write_text(json.dumps({**out, "paired against ours 2 legs": against}, indent=1))
    return 0


def pipeline_id(name: str) -> str:
    return "bench-" + name.replace(" ", "-").replace("/", "-").replace(".", "")


def pool(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures over the sets' questions together (each set's figures weighted by its size)."""
    def merged(parts: list[dict[str, float]]) -> dict[str, float]:
        n = sum(p["n"] for p in parts) or 1
        return {"n": n, **{key: round(sum(p[key] * p["n"] for p in parts) / n, 3) for key in ("hit@1", "hit@5", "mrr")}}
    sources = sorted({s for r in results for s in r["per_source"]})
    return {"overall": merged([r["overall"] for r in results]),
            "per_source": {s: merged([r["per_source"][s] for r in results if s in r["per_source"]]) for s in sources}}


def print_table(title: str, by_method: dict[str, dict[str, Any]]) -> None:
    sources = sorted({s for r in by_method.values() for s in r["per_source"]})
    columns = [*sources, "overall"]
    n = {c: (by_method["served"]["per_source"].get(c) or by_method["served"]["overall"])["n"] for c in columns}
    print(f"\n{title}   hit@5 / MRR")
    print(f"{'':18}" + "".join(f"{c + ' (' + str(n[c]) + ')':>16}" for c in columns))
    for method, result in by_method.items():
        cells = [result["per_source"].get(c) if c != "overall" else result["overall"] for c in columns]
        print(f"{method:18}" + "".join(f"{c['hit@5']:>9.3f} {c['mrr']:.3f}" if c else f"{'-':>16}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
