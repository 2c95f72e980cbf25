"""The exact lookup from an axe rule to the WCAG 2.2 criterion its tags name.

Facts only, from data/axe_rules.json (built by infra/sample/build_axe_rules.py): the mapping is
read off axe's own tags ("wcag143" -> 1.4.3), never inferred from a rule's name or text, so a
best-practice rule with no criterion tag says so instead of guessing one.
"""
from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel

NO_WCAG = "no WCAG criterion"
# "wcag143" -> ("1", "4", "3"); level tags such as "wcag2a", "wcag21aa" and "wcag2a-obsolete" do
# not match, because they name a conformance level, not a criterion.
_CRITERION_TAG = re.compile(r"^wcag(\d)(\d)(\d{1,2})$")


class UnknownRule(KeyError):
    """An id that is not an axe rule; carries the closest real ids."""

    def __init__(self, rule_id: str, close: list[str]) -> None:
        super().__init__(rule_id)
        self.rule_id = rule_id
        self.close = close

    def __str__(self) -> str:
        hint = f"; close matches: {', '.join(self.close)}" if self.close else ""
        return f"{self.rule_id!r} is not an axe-core rule{hint}"


class Criterion(BaseModel):
    number: str
    handle: str
    level: str | None  # None for 4.1.1, obsolete and removed in WCAG 2.2
    url: str
    obsolete: bool = False
    tag: str  # the axe tag that names it, so the mapping can be checked by eye


class RuleFacts(BaseModel):
    rule_id: str
    impact: str
    tags: list[str]
    wcag_tags: list[str]
    criteria: list[Criterion]
    best_practice: bool
    help_url: str
    axe_version: str


def criterion_from_tag(tag: str) -> str | None:
    m = _CRITERION_TAG.match(tag)
    return ".".join(m.groups()) if m else None


class RuleTable:
    """The facts table, loaded once per process."""

    def __init__(self, data: dict) -> None:
        self.axe_version: str = data["axe_version"]
        self.wcag_url: str = data["wcag_url"]
        self._criteria: dict[str, dict] = data["criteria"]
        self._rules: dict[str, dict] = data["rules"]

    @property
    def rule_ids(self) -> list[str]:
        return sorted(self._rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def impact(self, rule_id: str) -> str:
        return self._rules[rule_id]["impact"]

    def tags(self, rule_id: str) -> list[str]:
        return list(self._rules[rule_id]["tags"])

    def explain(self, rule_id: str) -> RuleFacts:
        rule = self._rules.get(rule_id)
        if rule is None:
            raise UnknownRule(rule_id, self.close_matches(rule_id))
        criteria = []
        wcag_tags = [t for t in rule["tags"] if t.startswith("wcag")]
        for tag in rule["tags"]:
            num = criterion_from_tag(tag)
            if num is None:
                continue
            sc = self._criteria[num]
            criteria.append(
                Criterion(
                    number=num,
                    handle=sc["handle"],
                    level=sc["level"],
                    url=f"{self.wcag_url}#{sc['anchor']}",
                    obsolete=sc.get("obsolete", False),
                    tag=tag,
                )
            )
        return RuleFacts(
            rule_id=rule_id,
            impact=rule["impact"],
            tags=list(rule["tags"]),
            wcag_tags=wcag_tags,
            criteria=criteria,
            best_practice=not criteria,
            help_url=rule["help_url"],
            axe_version=self.axe_version,
        )

    def close_matches(self, rule_id: str, n: int = 5) -> list[str]:
        lowered = (rule_id or "").strip().lower()
        matches = difflib.get_close_matches(lowered, self._rules, n=n, cutoff=0.5)
        # A fragment ("contrast") is as useful a hint as a typo ("colour-contrast").
        for rid in self.rule_ids:
            if lowered and lowered in rid and rid not in matches and len(matches) < n:
                matches.append(rid)
        return matches


@lru_cache(maxsize=1)
def load_rules() -> RuleTable:
    text = resources.files("groundchat").joinpath("data/axe_rules.json").read_text(encoding="utf-8")
    return RuleTable(json.loads(text))


def explain(rule_id: str) -> RuleFacts:
    return load_rules().explain(rule_id)


def rule_ids() -> list[str]:
    return load_rules().rule_ids
