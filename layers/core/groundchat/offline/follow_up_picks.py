"""What a follow-up reads out of the earlier turns' calls and results: the rules and runs they listed,
the rules they spoke of, one run of a list by what it alone has
("the checklist one", "the one that failed"), and a round by its place beside the one asked about
("the previous round"), in the data's own order of labels."""
from __future__ import annotations

import re

from groundchat.offline.earlier_turns import Exchange
from groundchat.search.vocabulary import in_american_spelling

DATA_TOOLS = frozenset({"compare_contexts", "list_runs", "top_rules", "get_run"})


def picked_run(last: Exchange, names: dict[str, str], outcomes: list[str]) -> list[str]:
    """The listed runs that have every name and outcome the question gives ("the checklist one", "the
    one that failed"); none when it gives neither."""
    if not (names or outcomes):
        return []
    out = []
    for (name, _), value in zip(last.calls, last.results):
        if name != "list_runs" or not isinstance(value, dict):
            continue
        for run in value.get("runs") or []:
            if isinstance(run, dict) and all(run.get(f) == v for f, v in names.items()) and (
                    not outcomes or run.get("outcome") in outcomes):
                out.append(str(run.get("run_id")))
    return list(dict.fromkeys(out))


def shifted_label(before: list[Exchange], labels: list[str], step: int) -> str | None:
    """The label `step` places from the one the last data call named, in the data's order."""
    ordered = sorted(labels, key=lambda label: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", label)])
    for exchange in reversed(before):
        named = [a.get("label") for n, a in exchange.calls if n in DATA_TOOLS and a.get("label")]
        if named:
            if named[-1] not in ordered:
                return None
            i = ordered.index(named[-1]) + step
            return ordered[i] if 0 <= i < len(ordered) else None
    return None


def listed(last: Exchange, tool: str, key: str, item: str) -> list[str]:
    out: list[str] = []
    for (name, _), value in zip(last.calls, last.results):
        if name == tool and isinstance(value, dict):
            out.extend(str(r[item]) for r in value.get(key) or [] if isinstance(r, dict) and r.get(item))
    return list(dict.fromkeys(out))


def rules_spoken_of(last: Exchange, everyday: list[tuple[str, str]]) -> tuple[list[str], bool]:
    """The rules the last exchange was about, and whether they are a list of many (top_rules')."""
    explained = [a["rule_id"] for n, a in last.calls if n == "explain_rule" and a.get("rule_id")]
    if explained:
        return list(dict.fromkeys(explained)), False
    filtered = [a["rule"] for n, a in last.calls if n == "list_runs" and a.get("rule")]
    if filtered:
        return list(dict.fromkeys(filtered)), False
    if any(n == "search_docs" for n, _ in last.calls):
        asked = in_american_spelling(last.question.lower())
        found = [rule for pattern, rule in everyday if re.search(pattern, asked)]
        return found[:1], False
    ranked = listed(last, "top_rules", "rules", "rule_id")
    return ranked, len(ranked) > 2


def topic_of_rule(last: Exchange, rule: str) -> str:
    """A rule in words for a search: its id and the criteria the lookup returned ("1.4.3 Contrast (Minimum)")."""
    for (name, args), value in zip(last.calls, last.results):
        if name == "explain_rule" and args.get("rule_id") == rule and isinstance(value, dict):
            criteria = "; ".join(f"{c.get('number')} {c.get('handle')}" for c in value.get("criteria") or [] if isinstance(c, dict))
            return f"{rule.replace('-', ' ')}: {criteria}" if criteria else rule.replace("-", " ")
    return rule.replace("-", " ")


__all__ = ["DATA_TOOLS", "listed", "picked_run", "rules_spoken_of", "shifted_label", "topic_of_rule"]
