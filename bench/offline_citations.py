"""Which passages the offline answerer cites when it answers from the document search, and whether a
reader would accept them for the question.

For each question of a retrieval set (tests/eval/users_words_*.jsonl) the offline answerer's router
picks its tools; when it searches, the search_docs tool runs on the real corpus's index and the
answer's text is composed by the offline templates exactly as in the chat. The refs the text cites
are read back from it and each cited passage is judged against the question's gold sections (the
passages that answer it, `gold_match.matches_gold`): accepted if it is one of them.

Figures per set: answers, passages cited per answer, the share of cited passages that are accepted,
the share of answers whose first citation is accepted and the share that cite at least one accepted
passage (what a floor must not lose).

    python bench/offline_citations.py                 every set, tune and report apart
    python bench/offline_citations.py --sweep         the floors tried on the tune sets only

The index is the one the tests build from the real corpus (in the tools' cache); run the grounding
tests once to build it. Prints figures, asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT / "tests" / "eval"
# The floor and the extra passages are decided on these (read, tuning data).
TUNE_SETS = ("users_words_tune", "users_words_validate", "users_words_second_tune")
# Never read: the figures reported before and after.
REPORT_SETS = ("users_words_report", "users_words_second_report", "users_words_fifth", "users_words_sixth",
               "users_words_seventh", "users_words_eighth", "users_words_ninth")
CITED = re.compile(r"\[([0-9a-f]{8})\]")


def service() -> Any:
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.embeddings import LocalOnnxEmbedder
    from groundchat.search.service import SearchService
    from groundchat.search.embedding_models import configured_local_key
    from groundchat_cli.opensearch_node import tools_cache

    path = tools_cache() / f"test-corpus-index-{configured_local_key()}" / "index.sqlite"
    if not path.is_file():
        sys.exit(f"bench/offline_citations.py: no index at {path}: run the grounding tests once to build it")
    return SearchService(EmbeddedIndex(path), LocalOnnxEmbedder())


def search_results(docs: Any, question: str) -> tuple[dict[str, Any], bool] | None:
    """The search_docs result the offline answerer gets for this question, and whether its router
    chose the search (a question it routes elsewhere is searched with its own words, as the
    router's fallback does, and counted apart)."""
    from groundchat.offline.router import route
    from groundchat.tools.base import ToolContext
    from groundchat.auth.callers import Caller
    from groundchat.tools.docs_tools import SearchDocsInput, search_docs

    plan = route(question, {"search_docs", "explain_rule"}, {}, set())
    args = next((a for name, a in plan.calls if name == "search_docs"), None)
    routed = args is not None
    args = args or {"query": question[:500]}
    ctx = ToolContext(caller=Caller(id="bench"), docs=docs)
    value = asyncio.run(search_docs.handler(ctx, SearchDocsInput(**args)))
    return value, routed


def judged(question: dict[str, Any], value: dict[str, Any], text: str) -> dict[str, Any]:
    from groundchat_cli.gold_match import matches_gold

    by_ref = {e["ref"]: e for e in value.get("excerpts", [])}
    cited = [by_ref[r] for r in dict.fromkeys(CITED.findall(text)) if r in by_ref]
    ok = [e["source"] == question["source"] and matches_gold(e["section"], question["gold"]) for e in cited]
    gold_served = any(e["source"] == question["source"] and matches_gold(e["section"], question["gold"])
                      for e in by_ref.values())
    return {"cited": len(cited), "accepted": sum(ok), "first_ok": bool(ok and ok[0]), "any_ok": any(ok),
            "gold_served": gold_served, "sections": [f"{e['source']} {e['section']}" for e in cited]}


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    cited = sum(r["cited"] for r in rows)
    return {"answers": len(rows), "cited_per_answer": round(cited / n, 2),
            "accepted_share": round(sum(r["accepted"] for r in rows) / (cited or 1), 3),
            "first_accepted": round(sum(r["first_ok"] for r in rows) / n, 3),
            "any_accepted": round(sum(r["any_ok"] for r in rows) / n, 3),
            "gold_served": round(sum(r["gold_served"] for r in rows) / n, 3),
            "net_per_answer": round((2 * sum(r["accepted"] for r in rows) - cited) / n, 3),
            "routed_to_search": sum(r["routed"] for r in rows)}


def collect(docs: Any, names: tuple[str, ...]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any], bool]]]:
    out = {}
    for name in names:
        questions = [json.loads(line) for line in (EVAL / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
                     if line.strip()]
        out[name] = [(q, *search_results(docs, q["q"])) for q in questions]
    return out


def measure(searched: dict[str, list[tuple[dict[str, Any], dict[str, Any], bool]]], compose: Any) -> dict[str, Any]:
    per, every = {}, []
    for name, items in searched.items():
        rows = []
        for question, value, routed in items:
            text = compose(question["q"], [("search_docs", value, False)])
            rows.append({**judged(question, value, text), "routed": routed})
        per[name] = figures(rows)
        every += rows
    per["all"] = figures(every)
    return per


def _line(name: str, f: dict[str, Any]) -> str:
    return (f"{name:28} {f['answers']:>4} answers ({f['routed_to_search']:>3} routed to the search): "
            f"{f['cited_per_answer']:.2f} cited per answer, {f['accepted_share']:.3f} of them accepted; "
            f"first accepted {f['first_accepted']:.3f}, any accepted {f['any_accepted']:.3f} "
            f"(a gold passage served {f['gold_served']:.3f}); net {f['net_per_answer']:+.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", action="store_true", help="try the floors on the tune sets only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from groundchat.offline.templates import compose

    docs = service()
    if args.sweep:
        return sweep(collect(docs, TUNE_SETS))
    out = {"tune": measure(collect(docs, TUNE_SETS), compose), "report": measure(collect(docs, REPORT_SETS), compose)}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for part, per in out.items():
        print(f"{part} sets:")
        for name, f in per.items():
            print("  " + _line(name, f))
    return 0


def sweep(searched: dict[str, list[tuple[dict[str, Any], dict[str, Any], bool]]]) -> int:
    """The floors on the tune sets: each relative floor with each number of passages at most. The one
    in use is the one with the most accepted citations net of the rejected ones per answer."""
    from groundchat.offline import search_answers, templates

    held = search_answers.SEARCH_FLOOR
    try:
        for relative in (0.0, 0.5, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0, 1.01):
            for most in (2, 3, 4):
                search_answers.SEARCH_FLOOR = search_answers.SearchFloor(relative=relative, most=most)
                f = measure(searched, templates.compose)["all"]
                print(_line(f"relative {relative:.2f}, at most {most}", f))
    finally:
        search_answers.SEARCH_FLOOR = held
    return 0


if __name__ == "__main__":
    sys.exit(main())
