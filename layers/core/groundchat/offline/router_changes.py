"""Whether a question asks to change, delete, rename, run or re-grade something, for the offline router.

The chat only reads the benchmark's runs and the texts. A request to act on them ("remove
cedar-mini's failed runs", "rename this label", "regrade round 2", "re-run the modal task") gets one
sentence saying so, before any tool is planned: no data tool is called and nothing is drawn. The
words are data (offline/change_requests.json); what is fixed here is how they are read:

- an order starts a clause, after what may open it ("please", "can you", "i want you to");
- an order to run is one whatever follows it, unless "run" is the benchmark's noun ("run costs");
- an order to change is one only when something the data holds follows: one of its strong words,
  a model or label by name, or a run id; a weak word ("label", "timeouts", "prices") only where the
  clause does not speak of a page or a business ("fix the label on our email field" asks how to fix a
  page);
- a few orders are recognised wherever they are said ("rm -rf", "start a new round");
- in a conversation, what an order acts on is what the answerer reads the question as asking about:
  an order whose object only points back ("drop the checklist one", "nuke all of those", "correct it
  to 3") names nothing of the data itself, but the reading that would answer it (the router's plan or
  the follow-up's, offline/follow_up.py) lands on the runs the earlier turns showed, and it is refused
  (`acts_on_the_data`). Judged by the words alone, such orders were answered as follow-ups.
"""
from __future__ import annotations

import json
import re
from importlib import resources

from groundchat.offline.name_matching import find_names

Facets = dict[str, list[str]]

CHANGE_REFUSAL = ("I can only read the benchmark's runs and the texts, so I cannot change, delete, rename, run or "
                  "re-grade anything.")

_TABLE = json.loads(resources.files("groundchat.offline").joinpath("change_requests.json").read_text(encoding="utf-8"))


def _either(patterns: list[str]) -> str:
    return "|".join(f"(?:{p})" for p in patterns)


_OPENINGS = rf"(?:(?:{_either(_TABLE['openings']['patterns'])})[\s,]+)*"
_ORDER_TO_RUN = re.compile(rf"^{_OPENINGS}(?:{_either(_TABLE['orders_to_run']['patterns'])})(?![\w-])"
                           rf"(?!\s+(?:{_either(_TABLE['run_as_a_noun']['patterns'])}))", re.I)
_ORDER_TO_CHANGE = re.compile(rf"^{_OPENINGS}(?:{_either(_TABLE['changes']['patterns'])})(?![\w-])", re.I)
_PASSIVE = re.compile(_either(_TABLE["passive_changes"]["patterns"]), re.I)
_STRONG = re.compile(_either(_TABLE["what_the_data_holds"]["strong"]), re.I)
_WEAK = re.compile(_either(_TABLE["weak_data_words"]["patterns"]), re.I)
_PAGE = re.compile(_TABLE["page_words"]["pattern"], re.I)
_ANYWHERE = re.compile(_either([entry["pattern"] for entry in _TABLE["anywhere"]]), re.I)
_SPEAKER = re.compile(_TABLE["speaker"]["pattern"], re.I)
_QUESTION = re.compile(_TABLE["questions"]["pattern"], re.I)
# An object that points back: what the question named before it is acted on. "it" and "them" are whole
# objects whatever follows ("mark it as passed"); "that", "this", "those" and "these" only where no noun
# follows them ("fix that heading order on my page" names its own object).
_PRONOUN = re.compile(r"\s*(?:(?:all (?:of )?)?(?:it|them)\b|(?:(?:all (?:of )?)?(?:that|this|those|these)|everything|"
                      r"(?:all )?(?:the |those |these )?(?:[\w-]+ )?ones)\b(?!\s+\w+\s+\w)|the (?:[\w-]+ ){0,2}one\b)", re.I)
# The tools whose results are the benchmark's data: what an order may act on.
DATA_TOOLS = frozenset({"list_runs", "get_run", "top_rules", "compare_contexts"})
_RUN_ID = re.compile(r"\brun[-_][a-z0-9][a-z0-9_-]{3,}\b", re.I)
# Where a clause ends: punctuation, or "and"/"then" before another order ("reset the benchmark and start over").
_CLAUSE_BREAK = re.compile(r"[.;!?:,()\n]+|\s+(?:and then|and also|and|then|also)\s+", re.I)


def _clauses(q: str) -> list[tuple[str, str]]:
    """Each clause with the rest of the question from it: an order's object may run past a comma."""
    starts = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(q)]
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(q)] + [len(q)]
    return [(q[s:e].strip(), q[s:].strip()) for s, e in zip(starts, ends)]


def _names_the_data(text: str, facets: Facets) -> bool:
    """The benchmark's own words, a run id, or a model or label by name. A context's names are left
    out: "guidelines" and "checklist" are the texts' words too."""
    if _STRONG.search(text) or _RUN_ID.search(text):
        return True
    names = [n for facet in ("model", "label") for n in facets.get(facet, [])]
    return bool(names) and bool(find_names(text, names, [n for values in facets.values() for n in values]))


def _holds_data(text: str, clause: str, facets: Facets) -> bool:
    """Whether what an order acts on is the benchmark's data."""
    return _names_the_data(text, facets) or (bool(_WEAK.search(text)) and not _PAGE.search(clause))


def asks_to_change(q: str, facets: Facets) -> bool:
    """True when the question (lower-cased) asks to change, delete, rename, run or re-grade something."""
    if _ANYWHERE.search(q):
        return True
    clauses = _clauses(q)
    if any(_PASSIVE.search(rest) and not _QUESTION.match(clause) for clause, rest in clauses) and _names_the_data(q, facets):
        return True
    for clause, rest in clauses:
        if _ORDER_TO_RUN.search(rest):
            return True
        order = _ORDER_TO_CHANGE.search(rest)
        if order and _SPEAKER.match(rest[order.end():]):  # "correct me if I'm wrong, …" asks
            continue
        # "…is wrong, please fix it", "show me the runs and then remove the failed ones": a pronoun's
        # object is what the question said before it.
        acted_on = q if order and _PRONOUN.match(rest[order.end():]) else rest
        if order and _holds_data(acted_on, clause, facets):
            return True
    return False


def orders_a_change(q: str) -> bool:
    """An order or a wish to change something (lower-cased), whatever it acts on: an order at a clause's
    start whose object is not the one asking ("correct me if…" is not one), or a clause that wishes it
    done without asking ("I'd like those removed"; "which runs need to be rerun?" asks)."""
    for clause, rest in _clauses(q):
        order = _ORDER_TO_CHANGE.search(rest)
        if order and not _SPEAKER.match(rest[order.end():]):
            return True
        if not _QUESTION.match(clause) and _PASSIVE.search(rest):
            return True
    return False


def acts_on_the_data(q: str, reading: list[tuple[str, object]], asks_which_of_the_data: bool = False) -> bool:
    """An order to change (lower-cased) whose object, as the answerer reads the question, is the
    benchmark's data: `reading` is the calls the router or the follow-up would make for it, and
    `asks_which_of_the_data` says the follow-up would ask which of the runs or rules shown is meant."""
    return orders_a_change(q) and (asks_which_of_the_data or any(name in DATA_TOOLS for name, _ in reading))


def changes_what_came_before(q: str) -> bool:
    """An order to change whose object only points back ("ok delete those, they're just noise", "remove
    them"): alone it names nothing of the data, but in a conversation it acts on what the earlier turns
    showed (the answerer asks this where they called a data tool)."""
    for _, rest in _clauses(q):
        order = _ORDER_TO_CHANGE.search(rest)
        if order and _PRONOUN.match(rest[order.end():]):
            return True
    return False


__all__ = ["CHANGE_REFUSAL", "DATA_TOOLS", "acts_on_the_data", "asks_to_change", "changes_what_came_before",
           "orders_a_change"]
