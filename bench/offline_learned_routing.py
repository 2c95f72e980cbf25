"""Whether a learned reader would route the offline answerer's questions better than its word rules.

The reader: a softmax regression (numpy, L2) over the local embedding model's vector of a question,
with the data's names masked ("birch-pro" read as "the model", a run id as "a run") and seven
features saying which names it gives (model, context, task, label, run id, rule id, a number). Its
labels are the tools of the router sets' read lines (the `tune` and `validate` lines of
tests/eval/offline_router*.jsonl), a search with its source or `any`. Five folds give each question
a label from a reader that never saw it.

Prints, on those questions: the reader alone, the word rules alone (offline/router.py, with the
likeness margin), and the rules overruled by the reader wherever its probability reaches each
threshold, all as the tool each picks (a search by its source). The report halves and the sets that
are never read are not read here. Prints figures, asserts nothing.

    .venv/bin/python bench/offline_learned_routing.py
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from groundchat.benchmark.axe_rules import rule_ids
from groundchat.offline.name_matching import find_names
from groundchat.offline.router import known_names, route
from groundchat.offline.router_arguments import RUN_ID
from groundchat.offline.topic_neighbours import local_topic_neighbours
from groundchat.offline.typed_names import corrected
from groundchat.search.embeddings import make_embedder
from groundchat_cli import sample
from groundchat_cli.router_eval import TOOLS, RouterCase, load_cases

EVAL = Path(__file__).resolve().parent.parent / "tests" / "eval"
MODEL = "local:minilm-int8"
FOLDS, L2, STEPS, RATE, NAME_SCALE = 5, 1e-4, 1500, 5.0, 0.6
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def masked(q: str, facets: dict[str, list[str]], rules: set[str]) -> str:
    q = RUN_ID.sub("a run", q)
    for facet, names in facets.items():
        for name in sorted(names, key=len, reverse=True):
            for form in {name, name.replace("-", " "), name.replace("-", "")}:
                q = re.sub(rf"\b{re.escape(form)}\b", f"the {facet}", q, flags=re.I)
    for rule in sorted((r for r in rules if "-" in r), key=len, reverse=True):
        q = re.sub(rf"\b{re.escape(rule)}\b", "the rule", q, flags=re.I)
    return q


def names_given(q: str, facets: dict[str, list[str]], rules: set[str]) -> list[float]:
    low = q.lower()
    given = [bool(find_names(low, facets.get(f, []))) for f in ("model", "context", "task", "label")]
    given += [bool(RUN_ID.search(q)), any(re.search(rf"\b{re.escape(r)}\b", low) for r in rules if "-" in r),
              bool(re.search(r"\d", RUN_ID.sub("", low)))]
    return [NAME_SCALE * float(g) for g in given]


def label(tool: str, args: dict) -> str:
    return f"search_docs:{args.get('source', 'any')}" if tool == "search_docs" else tool


def fit(x: np.ndarray, labels: list[str], classes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    y = np.zeros((len(labels), len(classes)))
    y[np.arange(len(labels)), [classes.index(t) for t in labels]] = 1
    w, b = np.zeros((x.shape[1], len(classes))), np.zeros(len(classes))
    for _ in range(STEPS):
        z = x @ w + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        w -= RATE * (x.T @ ((p - y) / len(labels)) + L2 * w)
        b -= RATE * ((p - y) / len(labels)).sum(0)
    return w, b


def main() -> None:
    facets, rules = sample.sample_names(), set(rule_ids())
    cases: list[RouterCase] = [c for path in sorted(EVAL.glob("offline_router*.jsonl"))
                               for c in load_cases(path) if c.split in ("tune", "validate")]
    typed = [corrected(c.q, known_names(facets, rules)) for c in cases]
    embedder = make_embedder(MODEL)
    x = np.hstack([embedder.embed([masked(q, facets, rules) for q in typed]),
                   np.array([names_given(q, facets, rules) for q in typed])])
    truth = [label(c.tool, c.args) for c in cases]
    classes = sorted(set(truth))
    held = np.zeros((len(cases), len(classes)))
    fold = np.arange(len(cases)) % FOLDS
    for f in range(FOLDS):
        w, b = fit(x[fold != f], [t for t, k in zip(truth, fold) if k != f], classes)
        z = x[fold == f] @ w + b
        p = np.exp(z - z.max(1, keepdims=True))
        held[fold == f] = p / p.sum(1, keepdims=True)
    topic = local_topic_neighbours(MODEL)
    rules_said = []
    for case in cases:
        plan = route(case.q, TOOLS, facets, rules, topic=topic.margin if topic else None)
        rules_said.append("none" if plan.refusal is not None or not plan.calls else label(*plan.calls[0]))
    reader = [classes[int(p.argmax())] for p in held]
    n = len(cases)
    print(f"{n} read router questions, tool chosen right (a search by its source), five folds:")
    print(f"  learned reader alone: {sum(r == t for r, t in zip(reader, truth))}/{n}")
    print(f"  word rules alone:     {sum(r == t for r, t in zip(rules_said, truth))}/{n}")
    for threshold in THRESHOLDS:
        both = [r if p.max() >= threshold and r != "none" else s for r, s, p in zip(reader, rules_said, held)]
        print(f"  rules, overruled where the reader is at least {threshold:.2f} sure: "
              f"{sum(b == t for b, t in zip(both, truth))}/{n}")


if __name__ == "__main__":
    main()
