"""The offline answerer's router: a question in users' words to the tools and arguments that answer
it, using what the data holds (model, context, task and label names, run ids, axe rule ids).

Arguments are only what the question pins down: a name the data holds, spelled as users spell it
("checkout flow" for `checkout-flow`). A question outside the benchmark, accessibility and the two
texts, or a request to run something, gets no tool at all and a short refusal.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Facets = dict[str, list[str]]

RUN_ID = re.compile(r"\brun[-_][A-Za-z0-9][A-Za-z0-9_-]{3,}\b", re.I)
_NUMBER_WORDS = {"three": 3, "five": 5, "ten": 10, "twenty": 20, "top three": 3, "top five": 5, "top ten": 10}
_LIMIT = re.compile(r"\b(?:top|first|last|latest|show(?: me)?|list)?\s*(\d{1,3})\b(?!\s*%)")

# What people call the problems axe names by rule id, for "which axe rule covers …".
EVERYDAY_RULES: list[tuple[str, str]] = [
    (r"\balt\b|alt[- ]text|image descriptions?|images? without (?:a )?(?:text|description)", "image-alt"),
    (r"contrast", "color-contrast"),
    (r"\blang(?:uage)? attribute|\bhtml lang\b|page language", "html-has-lang"),
    (r"(?:form|input|field)s? (?:without |missing )?labels?|\blabels? (?:on|for) (?:form|input)", "label"),
    (r"link text|empty links?|links? without (?:text|a name)|link names?", "link-name"),
    (r"empty buttons?|buttons? without (?:text|a name)|button names?", "button-name"),
    (r"heading order|skipped headings?|heading levels?", "heading-order"),
    (r"landmarks?|content outside (?:a )?region", "region"),
    (r"page titles?|document titles?|<title>", "document-title"),
    (r"tap targets?|touch targets?|target size|small buttons?", "target-size"),
    (r"zoom(?:ing)? (?:disabled|blocked)|user-scalable|viewport", "meta-viewport"),
    (r"duplicate ids?", "duplicate-id-aria"),
    (r"dialog(?:s)? (?:without|missing)? ?(?:a )?names?|unnamed dialogs?", "aria-dialog-name"),
    (r"autocomplete", "autocomplete-valid"),
    (r"list items?|\bli\b", "listitem"),
    (r"skip links?|bypass", "bypass"),
]

_DOMAIN = re.compile(
    r"access|a11y|wcag|\beaa\b|directive|\baxe\b|\brules?\b|\bruns?\b|\bmodels?\b|context|agents?|violat|cost|cheap|"
    r"expensive|price|benchmark|criteri|contrast|screen ?reader|keyboard|focus|\balt\b|aria|\bhtml\b|website|\bapps?\b|"
    r"\blaw\b|legal|complian|comply|disab|blind|deaf|caption|label|heading|link|button|\bform|grad(?:e|ed|ing)|"
    r"sample|task|round|completion|timed? ?out|fail|pass|score|european|member states?|products?|services?",
    re.IGNORECASE,
)
_RUN_SOMETHING = re.compile(r"\b(?:run|execute|exec|eval|install|delete|drop|deploy)\b (?:this|my|the following|a|an)\b"
                            r"(?: \w+)? (?:script|code|command|program|query|sql|shell|file|package|table|database)", re.I)
_WRONG = re.compile(r"wrong|mistake|most (?:common|frequent|often)|frequent|problems|failures|slip through|"
                    r"broken most|break most|top rules|rules? (?:are |get )?(?:broken|violated|failed)|errors|issues", re.I)
_LIST = re.compile(r"\b(?:show|list|give me|display|see)\b.*\bruns?\b|\bwhich .*\bruns\b|\bevery .* run|\bruns? (?:that|which|with)\b", re.I)
_COMPARE = re.compile(r"cost|cheap|expensive|price|spend|best|worst|compare|\bcomplet(?:ed|es|ion)\b|violations?|average|mean|"
                      r"timed? ?out|how many|success|perform|which model|which context|good enough|better|fewest|most", re.I)
_EAA = re.compile(r"\beaa\b|european accessibility act|\bthe act\b|directive|member states?|\barticle\b|\bannex\b|"
                  r"\brecital\b|\beu\b|national law|market surveillance|microenterprise|e-?commerce|e-?books?|banking|"
                  r"ticket machines?|self-service|transpos|penalt|fines?\b", re.I)
_WCAG = re.compile(r"wcag|success criteri|criterion|level aa|level a\b|\baaa\b|conformance", re.I)
_DOCS = re.compile(r"grad(?:e|ed|ing)|sample data|\bsample\b|benchmark|how (?:are|is|were) (?:the )?runs|context levels?|"
                   r"incomplete|methodolog|what (?:does|is) (?:a |the )?(?:context|task|label|round)", re.I)
_ASKS_RULE = re.compile(r"\baxe\b|\brule\b|\bcheck\b|which rule", re.I)

REFUSAL = ("I can answer questions about the benchmark's runs (which context level or model does best and what it "
           "costs, which axe rules the agents break, a run's details), what an axe rule checks, and what WCAG 2.2 "
           "and the European Accessibility Act require. This question is outside that, so I have not looked anything up.")
RUN_REFUSAL = ("I do not run anything: I only look up the benchmark's results and the texts. " + REFUSAL.split(". This")[0] + ".")


@dataclass
class Plan:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    refusal: str | None = None


def _spelled(name: str) -> list[str]:
    """How a stored name appears in a question: as stored, or with spaces for hyphens."""
    return list(dict.fromkeys([name.lower(), name.lower().replace("-", " ")]))


def _find_names(q: str, names: list[str]) -> list[str]:
    """Names of one facet the question mentions, longest first so `guidelines-axe` beats `guidelines`."""
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    for name in sorted(names, key=len, reverse=True):
        for spelling in _spelled(name):
            for m in re.finditer(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", q):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue
                taken.append((m.start(), m.end()))
                if name not in found:
                    found.append(name)
    return found


def _filters(q: str, facets: Facets) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in ("model", "context", "task", "label"):
        values = [v for v in facets.get(name, []) if not (name == "context" and v == "none")]
        found = _find_names(q, values)
        if len(found) == 1:
            out[name] = found[0]
    if re.search(r"\b(?:no|without(?: any)?) context\b|\bcontext (?:of )?none\b|\bnone context\b", q):
        out["context"] = "none"
    return out


def _limit(q: str) -> int | None:
    for words, number in _NUMBER_WORDS.items():
        if re.search(rf"\b{words}\b", q):
            return number
    m = _LIMIT.search(q)
    return int(m.group(1)) if m and 0 < int(m.group(1)) <= 100 and not RUN_ID.search(q) else None


def _rule_ids(question: str, q: str, rules: set[str]) -> list[str]:
    ids = []
    for token in dict.fromkeys(re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", q)):
        if token not in rules:
            continue
        plain_word = "-" not in token
        # One-word ids ("list", "region", "label") are everyday words too: a rule only when the
        # question speaks of a rule or quotes the id.
        quoted = any(f"{mark}{token}{mark}" in question.lower() for mark in "`'\"")
        if not plain_word or quoted or re.search(r"\brule\b", q):
            ids.append(token)
    return ids


def _everyday_rule(q: str, rules: set[str]) -> str | None:
    for pattern, rule_id in EVERYDAY_RULES:
        if rule_id in rules and re.search(pattern, q):
            return rule_id
    return None


def route(question: str, offered: set[str], facets: Facets, rules: set[str]) -> Plan:
    """The tools to call for a question (only those offered), or a refusal."""
    q = question.lower()
    if _RUN_SOMETHING.search(q):
        return Plan(refusal=RUN_REFUSAL)
    recall = _recall_call(question, offered)
    if recall and not _DOMAIN.search(q):  # "what did I ask last week?": the past is the whole question
        return Plan(calls=[recall])
    names = [v for values in facets.values() for v in values]
    run_ids = RUN_ID.findall(question)
    if not run_ids and not _DOMAIN.search(q) and not _find_names(q, names):
        return Plan(refusal=REFUSAL)
    calls = _plan(question, q, facets, rules, run_ids)
    calls = [(name, args) for name, args in calls if name in offered]
    if recall:
        calls = [recall, *calls]
    if not calls and "search_docs" in offered:
        calls = [("search_docs", {"query": question[:500]})]
    return Plan(calls=calls[:4])


def _plan(question: str, q: str, facets: Facets, rules: set[str], run_ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
    if run_ids:
        return [("get_run", {"run_id": run_id}) for run_id in dict.fromkeys(run_ids)]
    filters = _filters(q, facets)
    named_rules = _rule_ids(question, q, rules | set(facets.get("rule", [])))
    if named_rules and _LIST.search(q):
        return [("list_runs", {**filters, "rule": named_rules[0], **_limited(q)})]
    if named_rules:
        return [("explain_rule", {"rule_id": rule_id}) for rule_id in named_rules]
    if _ASKS_RULE.search(q) and not _WRONG.search(q) and (everyday := _everyday_rule(q, rules)):
        return [("explain_rule", {"rule_id": everyday})]
    docs_source = _docs_source(q)
    if docs_source in ("eaa", "wcag22"):
        return [("search_docs", {"query": question[:500], "source": docs_source})]
    if _WRONG.search(q) and not _COMPARE_ONLY.search(q):
        return [("top_rules", {**filters, **_limited(q)})]
    if _LIST.search(q):
        return [("list_runs", {**filters, **_limited(q)})]
    if _COMPARE.search(q) or filters:
        return [("compare_contexts", filters)]
    if docs_source == "docs":
        return [("search_docs", {"query": question[:500], "source": "docs"})]
    return []


def _recall_call(question: str, offered: set[str]) -> tuple[str, dict[str, Any]] | None:
    """An explicit look back ("as I asked last week") searches the caller's past, when offered."""
    from groundchat.recall.plan import TOOL_NAME, is_explicit_recall

    if TOOL_NAME in offered and is_explicit_recall(question):
        return (TOOL_NAME, {"query": question[:500]})
    return None


# "Which model fails least / has the fewest violations" compares; "what fails most" ranks rules.
_COMPARE_ONLY = re.compile(r"cheap|cost|price|fewest|least|completion|which model|which context|best", re.I)


def _limited(q: str) -> dict[str, int]:
    limit = _limit(q)
    return {"limit": limit} if limit else {}


def _docs_source(q: str) -> str | None:
    if _EAA.search(q):
        return "eaa"
    if _WCAG.search(q):
        return "wcag22"
    if _DOCS.search(q):
        return "docs"
    return None
