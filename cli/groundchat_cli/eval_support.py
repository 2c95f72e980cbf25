"""`groundchat eval support`: precision and recall of the "weak support" verdict on the labelled
sentence–passage pairs, the tune part and the held-out report part apart, with the threshold in use,
the pairs it gets wrong and what the check adds to an answer's time. `--tune` runs the grid search
on the tune part (never on the report part) and prints the parameters it would choose.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

EVAL_DIR = Path(__file__).resolve().parents[2] / "tests" / "eval"
TUNE_FILE = EVAL_DIR / "citation_support_tune.jsonl"
REPORT_FILE = EVAL_DIR / "citation_support_report.jsonl"
# Written later, before the calibration by F0.5, and never tuned on.
SECOND_REPORT_FILE = EVAL_DIR / "citation_support_second_report.jsonl"
PARTS = (("tune", TUNE_FILE), ("report", REPORT_FILE), ("second_report", SECOND_REPORT_FILE))


def add_eval_support_command(kinds: Any) -> None:
    support = kinds.add_parser("support", help="precision and recall of 'weak support' on the labelled pairs, and the threshold")
    support.add_argument("--tune", action="store_true", help="grid-search the parameters on the tune part and print them")
    support.add_argument("--failures", action="store_true", help="list the pairs the verdict gets wrong")
    support.add_argument("--json", action="store_true")
    support.set_defaults(func=cmd_eval_support)


def cmd_eval_support(args: argparse.Namespace) -> int:
    from groundchat.config import get_settings
    from groundchat.grounding.citation_support import SupportScorer, support_params
    from groundchat_cli.support_eval import PairsError, load_pairs, pair_features, resolve_passages, tune, weak_metrics
    from groundchat.search import embedded_index_path
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.types import BackendUnavailable

    settings = get_settings()
    index_path = embedded_index_path(settings)
    if not index_path.is_file():
        print(f"error: no search index at {index_path}: run `groundchat ingest` (or `make run`) first", file=sys.stderr)
        return 2
    index = EmbeddedIndex(index_path)
    scorer = SupportScorer()
    parts: dict[str, Any] = {}
    try:
        for name, path in PARTS[: 1 if args.tune else len(PARTS)]:
            pairs = load_pairs(path)
            passages = resolve_passages(pairs, index.get_section, settings.search_max_excerpt_chars)
            parts[name] = (pairs, pair_features(pairs, passages, scorer))
    except (PairsError, BackendUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    params = support_params(scorer.embedder.model)  # the configured model's, from its row
    out: dict[str, Any] = {"model": scorer.embedder.model.key, "params": vars(params)}
    if args.tune:
        params, _ = tune(*parts["tune"])  # the report part is never looked at here
        out["tuned"] = vars(params)
    # While tuning, only the tune part is scored: the report part is for the final figures.
    for name, (pairs, features) in parts.items() if not args.tune else [("tune", parts["tune"])]:
        out[name] = weak_metrics(pairs, features, params)
        if args.failures:
            from groundchat_cli.support_eval import misjudged

            out[name]["failures"] = misjudged(pairs, features, params)
    out["timing"] = _timing(parts["tune" if args.tune else "report"][0], index, settings.search_max_excerpt_chars)
    print(json.dumps(out, indent=2, ensure_ascii=False) if args.json else _text(out))
    return 0


def _timing(pairs: list[Any], index: Any, max_chars: int) -> dict[str, Any]:
    """What the check adds to an answer: answers of six cited sentences, each citing its own
    passage, timed through `check_support` as the chat runs it: cold (passages never cited before,
    the usual case) and warm (the same passages cited again: their windows come from the cache).
    The model's load is timed apart, on a fresh instance: a server pays it once."""
    from groundchat.grounding.citation_support import check_support, clear_window_cache
    from groundchat_cli.support_eval import resolve_passages
    from groundchat.search.embeddings import LocalOnnxEmbedder

    started = time.perf_counter()
    LocalOnnxEmbedder().embed(["warm up"])
    load_ms = (time.perf_counter() - started) * 1000
    grounded = [p for p in pairs if p.section]
    passages = resolve_passages(grounded, index.get_section, max_chars)
    cold, warm = [], []
    for start in range(0, len(grounded) - 5, 6):
        chunk = list(zip(grounded[start:start + 6], passages[start:start + 6]))
        refs = {passage.key: f"{n:08x}" for n, (_, passage) in enumerate(chunk)}
        answer = " ".join(f"{p.sentence.rstrip('.')} [{refs[passage.key]}]." for p, passage in chunk)
        results = {refs[passage.key]: {"title": passage.title, "text": passage.text} for _, passage in chunk}
        clear_window_cache()
        for times in (cold, warm):
            started = time.perf_counter()
            check_support(answer, results)
            times.append((time.perf_counter() - started) * 1000)
    return {"model_load_ms": round(load_ms), "answers": len(cold),
            "cold_median_ms": _median(cold), "cold_max_ms": round(max(cold), 1) if cold else None,
            "warm_median_ms": _median(warm)}


def _median(times: list[float]) -> float | None:
    return round(statistics.median(times), 1) if times else None


def _text(out: dict[str, Any]) -> str:
    params = out.get("tuned") or out["params"]
    lines = [f"threshold {params['threshold']} (cosine weight {params['cosine_weight']}, absent-figure factor "
             f"{params['absent_factor']}){'  [tuned on the tune part, not yet in use]' if 'tuned' in out else ''}"]
    for name, _ in PARTS:
        if name not in out:
            continue
        m = out[name]
        lines.append(f"{name:13} {m['pairs']:>3} pairs, {m['should_be_weak']:>3} should be weak, {m['flagged_weak']:>3} "
                     f"flagged: precision {m['precision']:.3f}, recall {m['recall']:.3f}, F1 {m['f1']:.3f}")
        lines.append("       weak by label: " + ", ".join(f"{k} {v['weak']}/{v['n']}" for k, v in m["by_label"].items()))
        for f in m.get("failures", []):
            lines.append(f"  wrong {f['id']} {f['label']:24} score {f['score']:.3f} (cos {f['cosine']}, overlap "
                         f"{f['overlap']}, figures {f['figures']}) {f['passage']}: {f['sentence']}")
    t = out["timing"]
    lines.append(f"check per answer (6 cited sentences, 6 passages) over {t['answers']} answers: median "
                 f"{t['cold_median_ms']} ms (max {t['cold_max_ms']} ms) for passages never cited before, "
                 f"{t['warm_median_ms']} ms cited again; model load {t['model_load_ms']} ms once per process")
    return "\n".join(lines)
