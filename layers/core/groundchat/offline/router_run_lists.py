"""How a question asks for runs by how they ended or by their violations, for the offline router.

Kept apart from the router's plan (offline/router.py), which calls these when a question asks
for a list of runs.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject
    from groundchat.offline.earlier_turns import Call

# Runs ranked by their own violation count ("which run had the most violations", "worst runs for
# birch-pro", "cleanest runs under guidelines-axe", "top 5 runs by violations"): a run list in that
# order. A model or context ranked so ("which model has the most violations") is a mean per model ×
# context (compare_contexts); the rules broken most are top_rules.
MOST_VIOLATIONS = re.compile(
    r"\bworst\s+(?:\d+\s+)?runs?\b|\bdirtiest\s+(?:[\w-]+\s+){0,4}runs?\b"
    r"|\bruns?\b[^.?!]{0,40}?\b(?:the )?(?:most|highest number of|largest number of) (?:axe )?violations\b"
    r"|\bruns?\s+(?:ranked |sorted |ordered )?by (?:(?:the )?most )?(?:axe )?violations\b", re.I)
FEWEST_VIOLATIONS = re.compile(
    r"\bbest\s+(?:\d+\s+)?runs?\b|\bcleanest\s+(?:[\w-]+\s+){0,4}runs?\b"
    r"|\bruns?\b[^.?!]{0,40}?\b(?:the )?(?:fewest|least|lowest number of) (?:axe )?violations\b"
    r"|\bruns?\s+(?:ranked |sorted |ordered )?by (?:the )?(?:fewest|least) (?:axe )?violations\b", re.I)
# One run asked for: "which run", "the worst run".
ONE_RUN = re.compile(r"\b(?:which|what) (?:single )?run\b(?!s)|\bthe (?:worst|dirtiest|cleanest|best) run\b(?!s)", re.I)
# How runs ended, in users' words: a list of runs may be narrowed to one outcome (or two: one call
# each). "Failed" after a rule ("runs that failed colour contrast") is the rule's, not the run's.
_OUTCOME_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("completed", re.compile(r"\bcompleted\b|\bfinished\b|\bsuccessful\b|\bsucceeded\b", re.I)),
    ("failed", re.compile(r"\bfail(?:ed|s)?\b|\bcrash(?:ed|es)?\b", re.I)),
    ("timeout", re.compile(r"\btime[ -]?outs?\b|\btimed[ -]?out\b|\btim(?:es|ing) out\b|\b(?:ran|run|runs|running) out of time\b",
                           re.I)),
)
# Runs that did not complete, however said: those that failed and those that timed out (one call each).
_INCOMPLETE = re.compile(r"\bincomplete\b|\bunfinished\b|\bdnf\b|\b(?:never|not|didn't|did not|don't|couldn't|could not|"
                         r"failed to) (?:finish|complete)(?:d|s)?\b|\bnot completed\b", re.I)
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever|\bwithout)\s+(?:\w+\s+)?$", re.I)
# Asked how many ended so, or how often: a figure compare_contexts gives per model × context.
ASKS_A_COUNT = re.compile(r"how many|how often|\brates?\b|percent|%|\bshare\b|proportion|number of|\bcount", re.I)

def outcomes_named(q: str, rule_named: bool) -> list[str]:
    """The outcomes the question names for its runs, in the order it names them; none when it
    names all three (that is every run) or only negates them ("runs that did not time out").
    Runs that did not complete ("incomplete", "never finished") are those that failed or timed out;
    axe's own "incomplete" results are not an outcome."""
    if not rule_named and (m := _INCOMPLETE.search(q)) and not re.search(r"\bincomplete (?:results?|checks?|items?)\b", q):
        return ["failed", "timeout"]
    found = []
    for outcome, words in _OUTCOME_WORDS:
        if outcome == "failed" and rule_named:
            continue
        m = words.search(q)
        if m and not _NEGATED.search(q[:m.start()]):
            found.append((m.start(), outcome))
    named = [outcome for _, outcome in sorted(found)]
    return named if len(named) < len(_OUTCOME_WORDS) else []


def lists_by_outcome(args: JsonObject, outcomes: list[str]) -> list[Call]:
    """A run list, one call per outcome named (a call takes one)."""
    if not outcomes:
        return [("list_runs", args)]
    return [("list_runs", {**args, "outcome": outcome}) for outcome in outcomes]


__all__ = ["ASKS_A_COUNT", "FEWEST_VIOLATIONS", "MOST_VIOLATIONS", "ONE_RUN", "lists_by_outcome", "outcomes_named"]
