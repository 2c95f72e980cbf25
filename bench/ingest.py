"""Ingest time and peak memory: the local model's settings on the whole corpus, then the ingest end to end.

Every figure comes from a fresh interpreter, so its peak resident memory (ru_maxrss) is its own.
1. The model alone on every chunk text of the corpus, per setting: seconds, texts, real tokens,
   padded tokens (what the model computes), model calls, peak MiB. The model is loaded first and
   not counted; converting the sources is not counted either.
2. `run_ingest` into a new folder: from nothing (no index, no vector cache), nothing changed,
   forced (index and cache present), and the index deleted with its vector cache kept.

Reads the corpus from GROUNDCHAT_CORPUS_DIR (default ../shared/corpus) and our docs; prints
figures, asserts nothing. `--settings` or `--ingest` runs one part; `--repeat N` each setting N times.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# (key, label, options): batching and onnxruntime session settings tried on the local model.
SETTINGS: list[tuple[str, str, dict]] = [
    ("before", "before: 8 texts a call, sorted per source by characters", {"before": True}),
    ("512", "tokens per batch 512", {"tokens": 512}),
    ("1024", "tokens per batch 1024 (default)", {"tokens": 1024}),
    ("2048", "tokens per batch 2048", {"tokens": 2048}),
    ("4096", "tokens per batch 4096", {"tokens": 4096}),
    ("8192", "tokens per batch 8192", {"tokens": 8192}),
    ("1-thread", "1024, 1 thread", {"tokens": 1024, "threads": 1}),
    ("spin", "1024, threads spinning (onnxruntime's default)", {"tokens": 1024, "spin": True}),
    ("2-calls", "1024, 2 calls at once, 1 thread each", {"tokens": 1024, "threads": 1, "calls_at_once": 2}),
    ("basic", "1024, graph optimisation basic", {"tokens": 1024, "opt": "basic"}),
    ("extended", "1024, graph optimisation extended", {"tokens": 1024, "opt": "extended"}),
    ("no-arena", "1024, no memory arena", {"tokens": 1024, "arena": False}),
]
SCENARIOS = [
    ("from nothing (no index, no cache)", "fresh"),
    ("nothing changed", "noop"),
    ("forced (index and vector cache present)", "force"),
    ("index deleted, vector cache kept", "cache-only"),
]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _corpus_texts() -> list[list[str]]:
    from groundchat.config import get_settings
    from groundchat.corpus.index_text import embedding_text
    from groundchat.search.ingest import manifest

    settings = get_settings()
    out = []
    for spec in manifest(Path(settings.corpus_dir), Path(settings.docs_dir)):
        if spec.path.exists():
            seen: dict[str, str] = {}
            for c in spec.convert(spec.path):
                seen.setdefault(c.id, embedding_text(c))
            out.append(list(seen.values()))
    return out


def child_setting(options: dict) -> dict:
    import onnxruntime as ort

    from groundchat.search import embeddings
    from groundchat.search.embeddings import LocalOnnxEmbedder, token_batches

    base = embeddings.session_options

    def options_for_this_run(module):
        o = base(module)
        if "threads" in options:
            o.intra_op_num_threads = options["threads"]
        if options.get("spin"):
            o.add_session_config_entry("session.intra_op.allow_spinning", "1")
        if "opt" in options:
            o.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                          "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED}[options["opt"]]
        if options.get("arena") is False:
            o.enable_cpu_mem_arena = False
        return o

    embeddings.session_options = options_for_this_run
    per_source = _corpus_texts()
    texts = [t for source in per_source for t in source]
    embedder = LocalOnnxEmbedder(tokens_per_batch=options.get("tokens", embeddings.TOKENS_PER_BATCH))
    embedder.embed(["warm up"])  # loading the model is not embedding
    lengths = [len(e.ids) for e in embedder._tokenizer.encode_batch(texts)]
    cpu0, started = sum(os.times()[:2]), time.perf_counter()
    if options.get("before"):
        # The ingest before: each source sorted by characters, 8 texts a call, padded to the longest.
        calls, padded = 0, 0
        for source in per_source:
            ordered = sorted(source, key=len)
            for i in range(0, len(ordered), 8):
                group = ordered[i:i + 8]
                embedder.embed(group)
                widths = [len(e.ids) for e in embedder._tokenizer.encode_batch(group)]
                calls, padded = calls + 1, padded + max(widths) * len(widths)
    else:
        batches = token_batches(lengths, embedder._tokens_per_batch)
        if options.get("calls_at_once"):
            # Batches side by side, each on one thread (the session allows concurrent calls).
            from concurrent.futures import ThreadPoolExecutor

            encodings = embedder._tokenizer.encode_batch(texts)
            with ThreadPoolExecutor(options["calls_at_once"]) as pool:
                list(pool.map(lambda rows: embedder._encode([encodings[i] for i in rows]), batches))
        else:
            embedder.embed(texts)
        calls, padded = len(batches), sum(max(lengths[i] for i in b) * len(b) for b in batches)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "cpu": sum(os.times()[:2]) - cpu0, "texts": len(texts), "tokens": sum(lengths),
            "padded": padded, "calls": calls, "peak_mib": _peak_mib()}


def child_ingest(scenario: str, folder: str) -> dict:
    from groundchat.config import get_settings
    from groundchat.search.embedded import EmbeddedStore
    from groundchat.search.embeddings import LocalOnnxEmbedder
    from groundchat.search.ingest import manifest, run_ingest

    settings = get_settings()
    index = Path(folder) / "index.sqlite"
    if scenario == "cache-only":
        index.unlink()
    specs = [s for s in manifest(Path(settings.corpus_dir), Path(settings.docs_dir)) if s.path.exists()]
    embeds: list[int] = []
    started = time.perf_counter()
    # Model load included: this is what `groundchat ingest` takes from start to end.
    summary = run_ingest(specs, EmbeddedStore(index), LocalOnnxEmbedder(), force=scenario == "force",
                         progress=lambda stage, done, total: embeds.append(done) if stage == "embed" else None)
    return {"seconds": time.perf_counter() - started, "chunks": summary.total_chunks,
            "embedded": sum(s.embedded for s in summary.sources), "cached": sum(s.cached for s in summary.sources),
            "progress_events": len(embeds), "peak_mib": _peak_mib()}


def _run_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], cwd=REPO, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", action="store_true", help="only the model's settings")
    parser.add_argument("--ingest", action="store_true", help="only the ingest end to end")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", help="settings by key, comma-separated: " + ",".join(k for k, _, _ in SETTINGS))
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, value, *rest = args.child
        result = child_setting(json.loads(value)) if kind == "setting" else child_ingest(value, rest[0])
        print(json.dumps(result))
        return 0
    from groundchat.config import get_settings

    if not (Path(get_settings().corpus_dir) / "wcag22").is_dir():
        print(f"bench/ingest.py: no corpus at {get_settings().corpus_dir}; skipped")
        return 0
    both = not (args.settings or args.ingest)
    print(f"{os.cpu_count()} cores, {_load()}")
    if args.settings or both:
        print(f"{'setting':<58}{'s':>7}{'cpu s':>7}{'texts':>7}{'tokens':>8}{'padded':>8}{'calls':>6}{'peak MiB':>9}")
        chosen = [s for s in SETTINGS if not args.only or s[0] in args.only.split(",")]
        for _ in range(args.repeat):  # in turns, so a machine that gets busier slows every setting alike
            for _key, label, options in chosen:
                r = _run_child("setting", json.dumps(options))
                print(f"{label:<58}{r['seconds']:>7.1f}{r['cpu']:>7.1f}{r['texts']:>7}{r['tokens']:>8}{r['padded']:>8}"
                      f"{r['calls']:>6}{r['peak_mib']:>9.0f}", flush=True)
    if args.ingest or both:
        print(f"{'ingest, end to end':<58}{'s':>7}{'chunks':>7}{'embedded':>9}{'cached':>7}{'bars':>6}{'peak MiB':>9}")
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="groundchat-bench-ingest-") as folder:
                for label, scenario in SCENARIOS:
                    r = _run_child("ingest", scenario, folder)
                    print(f"{label:<58}{r['seconds']:>7.2f}{r['chunks']:>7}{r['embedded']:>9}{r['cached']:>7}"
                          f"{r['progress_events']:>6}{r['peak_mib']:>9.0f}", flush=True)
    print(_load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
