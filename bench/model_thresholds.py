"""Each local embedding model's cosine thresholds, tuned on the tune sets only (search/embedding_models.json).

    python bench/model_thresholds.py [--models minilm-int8 bge-small-en-v1.5-q e5-small-v2-q]

Every threshold that sits on an embedding model's cosine scale, re-derived for each model by one
rule per threshold, the same for every model (on MiniLM the rules give the values it shipped with,
but for the open margin: 0.07 where 0.06, one step more lenient, was chosen before):

- near_the_corpus: the 0.01 step at or under the lowest nearness (search/service.py `nearness`)
  of the read retrieval sets' questions (tune and validate, 266): no question on the texts declined;
- topic_close_margin / topic_open_margin: the 0.01 step under the lowest likeness margin
  (offline/topic_neighbours.py) of the decision sets' on-topic questions the word lists let in, and
  of those they do not: every on-topic question kept, as many off-topic probes declined as that
  allows; the decision sets are the read retrieval sets (tune, validate, second tune)
  and the router's tune and validate rows that name a tool, less those it takes up whatever their
  likeness (a run, a model or a rule named);
- support_*: `groundchat eval support --tune`'s grid search on citation_support_tune.jsonl alone.

It prints what the rules choose beside the row in use, and how many of the gate's off-topic probes
(topic_gate_tune.jsonl and the router's tune rows with no tool) each gate declines. Prints figures,
asserts nothing; the chosen values are written into embedding_models.json by hand.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

from embedding_models import index_for  # bench/embedding_models.py: one index per model, cached

from groundchat.config import get_settings
from groundchat.grounding.citation_support import SupportScorer, support_params
from groundchat.offline.router_gate import on_topic_words
from groundchat.offline.router_topics import speaks_of_the_texts
from groundchat.offline.topic_neighbours import TopicNeighbours
from groundchat.search.embedded import EmbeddedIndex
from groundchat.search.embedding_models import local_model
from groundchat.search.ingest import manifest
from groundchat.search.service import SearchService
from groundchat.search.vocabulary import in_american_spelling
from groundchat_cli import support_eval

EVAL = Path(__file__).resolve().parent.parent / "tests" / "eval"
NEAR_SETS = ("users_words_tune", "users_words_validate")
RETRIEVAL_READ = ("users_words_tune", "users_words_validate", "users_words_second_tune")
ROUTER_READ = {"offline_router": {"tune"}, "offline_router_validate": {"validate"},
               "offline_router_second": {"tune"}, "offline_router_third": {"tune"}, "offline_router_seventh": {"tune"}}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def decision_questions() -> tuple[list[str], list[str]]:
    """(on-topic, off-topic) questions of the sets the gate is decided on. An on-topic question the
    router takes up whatever its likeness (it names a run, a model or a rule) decides no margin."""
    from groundchat.benchmark.axe_rules import rule_ids
    from groundchat.offline.router import route
    from groundchat_cli import sample
    from groundchat_cli.router_eval import TOOLS

    facets, rules = sample.sample_names(), set(rule_ids())
    on = [r["q"] for name in RETRIEVAL_READ for r in rows(name)]
    off = [r["q"] for r in rows("topic_gate_tune")]
    for name, splits in ROUTER_READ.items():
        for r in rows(name):
            if r.get("split") in splits:
                (off if r["tool"] == "none" else on).append(r["q"])
    return [q for q in on if not route(q, TOOLS, facets, rules, topic=lambda _: -1.0).calls], off


def step_under(value: float, step: float = 0.01) -> float:
    """The grid step strictly under `value` (a gate lets in what is above it)."""
    return round((math.ceil(round(value / step, 6)) - 1) * step, 2)


def step_at_or_under(value: float, step: float = 0.01) -> float:
    return round(math.floor(round(value / step, 6)) * step, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["minilm-int8", "bge-small-en-v1.5-q", "e5-small-v2-q"])
    args = parser.parse_args(argv)
    settings = get_settings()
    corpus = Path(settings.corpus_dir)
    if not (corpus / "wcag22").is_dir():
        print(f"bench/model_thresholds.py: no corpus at {corpus}; skipped")
        return 0
    on, off = decision_questions()
    wordy = [bool(on_topic_words(in_american_spelling(q)) or speaks_of_the_texts(in_american_spelling(q))) for q in on]
    off_wordy = [bool(on_topic_words(in_american_spelling(q)) or speaks_of_the_texts(in_american_spelling(q))) for q in off]
    near_questions = [r["q"] for name in NEAR_SETS for r in rows(name)]
    print(f"decision sets: {len(on)} on-topic ({sum(wordy)} with the word lists' words), {len(off)} off-topic; "
          f"nearness on {len(near_questions)} read retrieval questions", flush=True)
    with tempfile.TemporaryDirectory() as no_docs:
        specs = manifest(corpus, Path(no_docs))
        for key in args.models:
            path, embedder = index_for(key, specs)
            model = local_model(key)
            search = SearchService(EmbeddedIndex(path), embedder, ranker=None)
            nearest = sorted(search.nearness(q) for q in near_questions)
            off_near = sorted(search.nearness(q) for q in off)
            judge = TopicNeighbours(lambda: embedder)
            margins = [judge.margin(q) for q in on]
            off_margins = [judge.margin(q) for q in off]
            close = step_under(min(m for m, w in zip(margins, wordy) if w))
            opened = step_under(min(m for m, w in zip(margins, wordy) if not w))
            near = step_at_or_under(nearest[0])
            declined = sum(not (m > (close if w else opened)) for m, w in zip(off_margins, off_wordy))
            declined_near = sum(not (m > (close if w else opened)) and n < near
                                for m, w, n in zip(off_margins, off_wordy, off_near))
            pairs = support_eval.load_pairs(support_eval_file())
            index = EmbeddedIndex(path)
            passages = support_eval.resolve_passages(pairs, index.get_section, settings.search_max_excerpt_chars)
            features = support_eval.pair_features(pairs, passages, SupportScorer(embedder))
            tuned, metrics = support_eval.tune(pairs, features)
            shipped = model.thresholds
            held_out = {}  # the report parts, scored with what the tune part chose: never tuned on
            for part in ("citation_support_report", "citation_support_second_report"):
                part_pairs = support_eval.load_pairs(EVAL / f"{part}.jsonl")
                part_passages = support_eval.resolve_passages(part_pairs, index.get_section, settings.search_max_excerpt_chars)
                held_out[part] = support_eval.weak_metrics(
                    part_pairs, support_eval.pair_features(part_pairs, part_passages, SupportScorer(embedder)), tuned)
            print(f"\n{key}")
            print(f"  nearness of the read retrieval questions, lowest five {[round(n, 3) for n in nearest[:5]]}; "
                  f"off-topic probes median {off_near[len(off_near) // 2]:.3f}")
            print(f"  likeness margin, on-topic lowest with words {min(m for m, w in zip(margins, wordy) if w):.3f}, "
                  f"without {min(m for m, w in zip(margins, wordy) if not w):.3f}")
            print(f"  chosen: near_the_corpus {near}, topic_open_margin {opened}, topic_close_margin {close}; "
                  f"off-topic probes declined {declined}/{len(off)} by the margins, {declined_near}/{len(off)} "
                  f"with the corpus's nearness")
            print(f"  chosen support: cosine_weight {tuned.cosine_weight}, absent_factor {tuned.absent_factor}, "
                  f"threshold {tuned.threshold}; tune part precision {metrics['precision']:.3f} recall "
                  f"{metrics['recall']:.3f} F1 {metrics.get('f1', 0):.3f}")
            for part, m in held_out.items():
                print(f"  {part}: precision {m['precision']:.3f} recall {m['recall']:.3f} F1 {m['f1']:.3f}")
            print(f"  in use: {vars(shipped) if shipped else None}; support {vars(support_params(model)) if shipped else None}",
                  flush=True)
    return 0


def support_eval_file() -> Path:
    return EVAL / "citation_support_tune.jsonl"


if __name__ == "__main__":
    sys.exit(main())
