"""Follow-ups for the offline answerer: a question read against the conversation before it.

"And in round 3?", "what about cedar-mini?", "and which criterion is it?", "why does it matter?": each
leans on what was asked and looked up just before. From the earlier turns' tool calls (their arguments)
and results (the rules and runs they listed), this decides whether the last question is such a
follow-up and what it refers to, and plans the calls that answer it: mostly the previous call with the
arguments it changes, or a rule lookup or a search about the previous subject. Where the conversation
does not pin the referent down (two rules, a list of ten, nothing at all), the answer is one sentence
asking which is meant, and nothing is called. A question that does not lean on the conversation is
left to the router. The words it reads by are data (offline/follow_up.json).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from groundchat.models.messages import Message
from groundchat.offline.earlier_turns import Call, Exchange, exchanges
from groundchat.offline.follow_up_picks import listed, picked_run, rules_spoken_of, shifted_label, topic_of_rule
from groundchat.offline.name_matching import parts, pinned
from groundchat.offline.router_run_lists import FEWEST_VIOLATIONS, MOST_VIOLATIONS, ONE_RUN, outcomes_named
from groundchat.search.vocabulary import in_american_spelling

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

FILTERS = ("model", "context", "task", "label")
_DATA_TOOLS = {"compare_contexts", "list_runs", "top_rules", "get_run"}
# What each tool takes beyond the filters, so a call turned into another keeps only what it accepts.
_EXTRA = {"compare_contexts": (), "top_rules": ("limit",), "list_runs": ("rule", "outcome", "order", "limit")}


@dataclass
class FollowUp:
    """The plan for a follow-up: calls, or one sentence asking which is meant (then no call)."""

    calls: list[Call] = field(default_factory=list)
    clarify: str | None = None


@lru_cache(maxsize=1)
def _words() -> JsonObject:
    return json.loads((Path(__file__).with_name("follow_up.json")).read_text(encoding="utf-8"))


def _any(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


# follow_up.json compiled: the patterns and words a follow-up is read with.
_Cues = TypedDict("_Cues", {
    "opens": re.Pattern[str], "refers": re.Pattern[str], "place": re.Pattern[str], "no_context": re.Pattern[str],
    "chooses": re.Pattern[str], "antecedents": re.Pattern[str], "asks": dict[str, re.Pattern[str]],
    "every": dict[str, re.Pattern[str]], "texts": dict[str, re.Pattern[str]],
    "places": dict[str, int], "never_alone": set[str], "short": int, "clarify": dict[str, str],
    "earlier_round": re.Pattern[str], "later_round": re.Pattern[str], "picks_one": re.Pattern[str],
})


@lru_cache(maxsize=1)
def _cues() -> _Cues:
    w = _words()
    places = w["ordinals"]["places"]
    return {
        "opens": _any(w["opens"]["patterns"]),
        "refers": _any(w["refers"]["patterns"]),
        "place": re.compile(w["ordinals"]["pattern"].replace("{places}", "|".join(map(re.escape, places)))),
        "places": places,
        "asks": {kind: _any(patterns) for kind, patterns in w["asks"].items() if not kind.startswith("_")},
        "every": {facet: re.compile(p) for facet, p in w["every"].items() if facet in FILTERS},
        "no_context": re.compile(w["no_context"]["pattern"]),
        "texts": {source: re.compile(p) for source, p in w["texts_named"].items()},
        "never_alone": set(w["name_prefixes_that_need_more"]["never"]),
        "short": int(w["short_words"]["max"]),
        "chooses": re.compile(w["chooses"]["pattern"]),
        "antecedents": re.compile(w["antecedents"]["pattern"]),
        "clarify": w["clarify"],
        "earlier_round": re.compile(w["relative_round"]["earlier"]),
        "later_round": re.compile(w["relative_round"]["later"]),
        "picks_one": re.compile(w["picks_one"]["pattern"]),
    }


def resolve(question: str, earlier: list[Message], offered: set[str], facets: dict[str, list[str]],
            everyday_rules: list[tuple[str, str]] | None = None, *, off_topic_alone: bool = False) -> FollowUp | None:
    """The plan for `question` as a follow-up of the `earlier` messages, or None when it does not lean
    on them (the router answers it alone). `everyday_rules` are the router's (pattern, rule id) pairs
    for problems named in everyday words ("low color contrast"). `off_topic_alone`: the router
    declines the question taken alone; then it is a follow-up only if it points back or is short
    ("and by when?"), never because it opens with "and" ("and a recipe for banana bread?")."""
    cues = _cues()
    q = in_american_spelling(question.lower()).strip()
    names = _named(q, facets)
    ambiguous = _ambiguous(q, facets, names)
    drops = [facet for facet, words in cues["every"].items() if words.search(q)]
    asks = next((kind for kind, words in cues["asks"].items() if words.search(q)), None)
    place = _place(q)
    refers = bool(cues["refers"].search(q))
    short = len(re.findall(r"[\w'-]+", q)) <= cues["short"] and bool(names or ambiguous) and asks is None
    if not (cues["opens"].search(q) or refers or place is not None or short):
        return None
    outcomes = outcomes_named(q, rule_named=False)
    before = [e for e in exchanges(earlier) if e.calls]
    # "The previous round": the label one step from the one the last data call asked about.
    step = -1 if cues["earlier_round"].search(q) else 1 if cues["later_round"].search(q) else 0
    if step and "label" not in names:
        shifted = shifted_label(before, facets.get("label", []), step)
        if shifted is not None:
            names = {**names, "label": shifted}
    # After a search, new words of its own continue it in the same text ("and for focus order?").
    searched_last = bool(before) and any(n == "search_docs" for n, _ in before[-1].calls)
    if not (asks or refers or place is not None or names or ambiguous or drops or outcomes or searched_last):
        return None  # nothing of its own to change or ask: "and?" is the router's
    words = len(re.findall(r"[\w'-]+", q))
    if off_topic_alone and not (refers or place is not None or names or ambiguous) and words > cues["short"]:
        return None
    if not before:
        if (refers or place is not None or asks in ("criterion", "run_detail")) and not _referent_within(q, names, everyday_rules or []):
            return FollowUp(clarify=_nothing(asks, q))
        return None
    last = before[-1]
    if ambiguous:
        facet, options = next(iter(ambiguous.items()))
        return FollowUp(clarify=_options(facet, options))
    # A detour ("what does the region rule mean?") does not lose the figures asked about before it.
    if names or drops or asks in ("cost", "wrong", "runs_of", "again"):
        if not any(n in _DATA_TOOLS for n, _ in last.calls):
            last = next((e for e in reversed(before) if any(n in _DATA_TOOLS for n, _ in e.calls)), last)
    plan = _plan(question, q, last, asks, place, refers, names, drops, everyday_rules or [])
    if plan is None or plan.clarify is not None:
        return plan
    plan.calls = [(name, args) for name, args in plan.calls if name in offered][:4]
    return plan if plan.calls else None


def _plan(question: str, q: str, last: Exchange, asks: str | None, place: int | None, refers: bool,
          names: dict[str, str], drops: list[str], everyday: list[tuple[str, str]]) -> FollowUp | None:
    listed_rules = listed(last, "top_rules", "rules", "rule_id")
    listed_runs = listed(last, "list_runs", "runs", "run_id")
    data = [(n, a) for n, a in last.calls if n in _DATA_TOOLS and n != "get_run"]
    listed_rules = listed_rules or listed(last, "get_run", "violations", "rule_id")
    if listed_runs and not place and _cues()["picks_one"].search(q):
        picked = picked_run(last, names, outcomes_named(q, rule_named=False))
        if len(picked) == 1:
            return FollowUp([("get_run", {"run_id": picked[0]})])
        if len(picked) > 1:
            return FollowUp(clarify=_many("run", picked))
    if place is not None and (listed_rules or listed_runs) and asks not in ("cost", "wrong"):
        items, kind = (listed_rules, "rule") if listed_rules else (listed_runs, "run")
        if -len(items) <= place < len(items):
            item = items[place]
            if kind == "run":
                return FollowUp([("get_run", {"run_id": item})])
            if asks == "runs_of":
                return FollowUp([("list_runs", {**names, "rule": item})])
            if asks == "texts":
                return FollowUp([_texts_search(question, q, last, item, topic_of_rule(last, item))])
            return FollowUp([("explain_rule", {"rule_id": item})])
    rules, many = rules_spoken_of(last, everyday)
    if asks == "criterion":
        if len(rules) == 1:
            return FollowUp([("explain_rule", {"rule_id": rules[0]})])
        if rules:
            return FollowUp(clarify=_options("rule", rules) if not many else _many("rule", rules))
        if any(n == "search_docs" for n, _ in last.calls):
            return FollowUp([_texts_search(question, q, last, None, _searched(last), default="wcag22")])
        return FollowUp(clarify=_nothing(asks, q))
    if asks == "run_detail":
        if len(listed_runs) == 1:
            return FollowUp([("get_run", {"run_id": listed_runs[0]})])
        if listed_runs:
            return FollowUp(clarify=_many("run", listed_runs))
        ran = [a["run_id"] for n, a in last.calls if n == "get_run"]
        if len(ran) == 1:
            return FollowUp([("get_run", {"run_id": ran[0]})])
        return FollowUp(clarify=_nothing(asks, q))
    if asks == "texts" or (asks is None and not data and not names and not drops):
        if rules and not data and len(rules) > 1:
            return FollowUp(clarify=_options("rule", rules))
        if many and refers:
            return FollowUp(clarify=_many("rule", rules))
        if len(rules) == 1 and not data:
            return FollowUp([_texts_search(question, q, last, rules[0], topic_of_rule(last, rules[0]))])
        if any(n == "search_docs" for n, _ in last.calls):
            return FollowUp([_texts_search(question, q, last, None, _searched(last))])
        if asks == "texts":
            return FollowUp([("search_docs", {"query": f"{question} ({last.question})"[:500], "source": "docs"})])
        return None
    if asks == "runs_of" and len(rules) == 1 and not data:
        return FollowUp([("list_runs", {**names, "rule": rules[0]})])
    if not data:
        return None
    if refers and len(data) > 1 and not names and not _cues()["chooses"].search(q):
        for facet in FILTERS:
            values = list(dict.fromkeys(a.get(facet) for _, a in data if a.get(facet)))
            if len(values) > 1:
                return FollowUp(clarify=_options(facet, values))
    target = {"cost": "compare_contexts", "wrong": "top_rules", "runs_of": "list_runs"}.get(asks or "")
    if _ranks(q):
        target = "list_runs"
    outcomes = outcomes_named(q, rule_named=False)
    calls = []
    for name, args in data:
        tool = target or name
        changed = _changed(args, names, drops, keep_extra=tool == name)
        if tool == "list_runs":
            changed = _as_run_list(q, changed, outcomes)
        allowed = (*FILTERS, *_EXTRA.get(tool, ()))
        calls.append((tool, {k: v for k, v in changed.items() if k in allowed}))
    return FollowUp(_unique(calls))


def _referent_within(q: str, names: dict[str, str], everyday: list[tuple[str, str]]) -> bool:
    """Whether what a pointing word ("it", "that run", "the second one") points at is named earlier in
    the question itself: a name of the data, or one of its nouns or an everyday problem before it."""
    cues = _cues()
    pointer = [m.start() for m in (cues["refers"].search(q), cues["place"].search(q)) if m]
    before = q[:min(pointer)] if pointer else q
    return bool(names) or bool(cues["antecedents"].search(before)) or any(re.search(p, before) for p, _ in everyday)


def _unique(calls: list[Call]) -> list[Call]:
    seen, out = set(), []
    for name, args in calls:
        key = (name, json.dumps(args, sort_keys=True))
        if key not in seen:
            seen.add(key)
            out.append((name, args))
    return out


def _changed(args: JsonObject, names: dict[str, str], drops: list[str], keep_extra: bool) -> JsonObject:
    out = {k: v for k, v in args.items() if k in FILTERS or keep_extra}
    for facet in drops:
        out.pop(facet, None)
    out.update(names)
    return out


def _as_run_list(q: str, args: JsonObject, outcomes: list[str]) -> JsonObject:
    if outcomes:
        args = {**args, "outcome": outcomes[0]}
    if order := _ranks(q):
        args = {**args, "order": order}
        if ONE_RUN.search(q):
            args["limit"] = 1
    return args


def _ranks(q: str) -> str | None:
    """Runs ranked by their violations, said of runs ("runs with the most violations") or of the
    previous list ("which of them had the most violations")."""
    if not (MOST_VIOLATIONS.search(q) or FEWEST_VIOLATIONS.search(q) or _cues()["asks"]["ranked"].search(q)):
        return None
    fewest = FEWEST_VIOLATIONS.search(q) or re.search(r"\b(?:fewest|least)\b|\bcleanest\b", q)
    return "fewest_violations" if fewest else "most_violations"


def _named(q: str, facets: dict[str, list[str]]) -> dict[str, str]:
    nameable = {f: [v for v in facets.get(f, []) if not (f == "context" and v == "none")] for f in FILTERS if f in facets}
    out = pinned(q, nameable)
    if "none" in facets.get("context", []) and _cues()["no_context"].search(q):
        out["context"] = "none"
    return out


def _ambiguous(q: str, facets: dict[str, list[str]], names: dict[str, str]) -> dict[str, list[str]]:
    """A first part several names share, written alone ("atlas"), where no name of that facet is pinned."""
    tokens = set(re.findall(r"[a-z0-9]+", q))
    out: dict[str, list[str]] = {}
    for facet in FILTERS:
        if facet in names:
            continue
        by_first: dict[str, list[str]] = {}
        for name in facets.get(facet, []):
            first = parts(name)[0] if parts(name) else name
            by_first.setdefault(first, []).append(name)
        for first, owners in by_first.items():
            if len(owners) > 1 and first in tokens and first not in _cues()["never_alone"]:
                out[facet] = owners
    return out


def _place(q: str) -> int | None:
    m = _cues()["place"].search(q)
    if m is None:
        return None
    rest = q[m.end():]
    # "the top one", "the second rule", "the last run", "the 2nd?": a place; "top rules" is not
    if m.group(0).rstrip().endswith(("one", "rule", "run", "item", "list", "violation", "error", "problem", "issue",
                                     "failure")) or re.match(r"\s*[?.!]*\s*$", rest):
        return _cues()["places"][m.group(1)]
    return None


def _searched(last: Exchange) -> str:
    return next((a.get("query", "") for n, a in last.calls if n == "search_docs"), last.question)


def _texts_search(question: str, q: str, last: Exchange, rule: str | None, topic: str, default: str | None = None) -> Call:
    """A search about the previous subject: the follow-up's words with what it refers to, in the text
    it names, else the text searched before (WCAG for a rule's criterion)."""
    named = [source for source, words in _cues()["texts"].items() if words.search(q)]
    before = next((a.get("source") for n, a in last.calls if n == "search_docs"), None)
    source = named[0] if len(named) == 1 else before or ("wcag22" if rule else default)
    args: JsonObject = {"query": f"{question} ({topic})"[:500]}
    if source:
        args["source"] = source
    return ("search_docs", args)


_KINDS = {"model": "model", "context": "context level", "task": "task", "label": "round", "rule": "rule", "run": "run"}


def _options(kind: str, options: list[str]) -> str:
    listed = ", ".join(options[:-1]) + f" or {options[-1]}" if len(options) > 1 else options[0]
    return _cues()["clarify"]["options"].format(kind=_KINDS.get(kind, kind), options=listed)


def _many(kind: str, options: list[str]) -> str:
    return _cues()["clarify"]["many"].format(kind=_KINDS.get(kind, kind), count=len(options), options=", ".join(options[:3]))


def _nothing(asks: str | None, q: str) -> str:
    kind = ("rule or criterion" if asks == "criterion" or re.search(r"\b(?:rule|criterion|check)\b", q) else
            "run" if asks == "run_detail" or re.search(r"\brun\b", q) else
            "model" if re.search(r"\bmodel\b", q) else "one")
    return _cues()["clarify"]["nothing"].format(kind=kind)


__all__ = ["FollowUp", "resolve"]
