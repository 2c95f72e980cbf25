"""The offline answerer's router: a question in users' words to the tools and arguments that answer
it, using what the data holds (model, context, task and label names, run ids, axe rule ids).

Arguments are only what the question pins down: a name the data holds, spelled as users spell it
("checkout flow" for `checkout-flow`). A question outside the benchmark, accessibility and the two
texts gets no tool at all and a short refusal; a request to change, delete, rename, run or re-grade
something gets one sentence saying the chat only reads (offline/router_changes.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from groundchat.offline.name_matching import find_names
from groundchat.offline.router_run_lists import (
    ASKS_A_COUNT,
    FEWEST_VIOLATIONS,
    MOST_VIOLATIONS,
    ONE_RUN,
    lists_by_outcome,
    outcomes_named,
)
from groundchat.offline.router_arguments import RUN_ID, counted_part, filters_named, limited, nameable
from groundchat.offline.router_changes import CHANGE_REFUSAL, acts_on_the_data, asks_to_change
from groundchat.offline.router_gate import near_the_corpus, on_topic, on_topic_words
from groundchat.offline.router_topics import asks_the_texts
from groundchat.offline.typed_names import corrected
from groundchat.search.vocabulary import in_american_spelling

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject
    from groundchat.offline.earlier_turns import Call

Facets = dict[str, list[str]]

# What people call the problems axe names by rule id, for "which axe rule covers …".
EVERYDAY_RULES: list[tuple[str, str]] = [
    (r"\balt\b|alt[- ]text|image descriptions?|images? without (?:a )?(?:text|description)", "image-alt"),
    (r"contrast", "color-contrast"),
    (r"\blang(?:uage)? attribute|\bhtml lang\b|page language", "html-has-lang"),
    (r"(?:form|input|field)s? (?:without |missing )?labels?|\blabels? (?:on|for) (?:form|input)", "label"),
    (r"link text|empty links?|links? (?:that (?:have|has) |with )?(?:no|without(?: an?)?) (?:accessible )?(?:text|name)|"
     r"link names?", "link-name"),
    (r"empty buttons?|buttons? (?:that (?:have|has) |with )?(?:no|without(?: an?)?) (?:accessible )?(?:text|name|label)|"
     r"button names?", "button-name"),
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
    (r"\bh1\b|main heading|level[- ]one heading|heading one", "page-has-heading-one"),
]

# Advice on what to buy ("a good laptop for coding under 1000 euros") names a product the Act covers
# but asks nothing about accessibility.
_SHOPPING = re.compile(r"\b(?:good|best|cheap\w*|decent|recommend\w*)\b.{0,30}\b(?:laptops?|phones?|tablets?|computers?|"
                       r"monitors?|e-?readers?|tvs?)\b.{0,40}\b(?:for|under|below|around)\b", re.I)
_ACCESSIBILITY = re.compile(r"access|a11y|disab|blind|deaf|screen ?reader|impair|wcag|\beaa\b|the act\b", re.I)
# Asked to write something: a haiku about screen readers is still not a question the data answers.
_WRITE_SOMETHING = re.compile(r"\b(?:write|compose|make up|generate)\b.{0,20}\b(?:poem|haiku|story|song|joke|"
                              r"limerick|essay|rap|lyrics|sonnet)s?\b"
                              # or code: "rewrite my signup component so it passes axe", "fix our navbar's html"
                              r"|^\s*(?:please\s+|can you\s+|could you\s+)?(?:re-?write|refactor|write|generate|code|fix|patch)\s+"
                              r"(?:my|our|this|the|a|an|me a)\b.{0,40}\b(?:components?|code|markup|html|css|jsx|"
                              r"functions?|snippets?|templates?|navbar|widgets?)\b", re.I)
# Asked to read a page by its address: no tool here fetches one, and the texts are their publishers'
# (w3.org, europa.eu). Declined unless it speaks of accessibility: "does https://our.shop meet WCAG?" is
# searched, "summarise this article for me https://…" is not a question the texts answer.
_PAGE_ADDRESS = r"https?://(?!(?:[\w-]+\.)*(?:w3\.org|europa\.eu)(?:[/:?#\s]|$))\S+"
_READ_A_PAGE = re.compile(rf"\b(?:summari[sz]\w*|summary|tl;?dr|read|open|visit|fetch|browse|translate)\b.{{0,60}}?{_PAGE_ADDRESS}"
                          rf"|{_PAGE_ADDRESS}.{{0,40}}\b(?:summari[sz]\w*|summary|tl;?dr)\b", re.I)
_WRONG = re.compile(r"wrong|mistake|\bwhat (?:still |else |usually |typically )?(?:breaks|fails)\b|most (?:com+on|frequent|often)|frequent|problems|failures|slip through|"
                    r"broken most|breaks? most|fail(?:s|ing)? most|top rules|rules? (?:are |get )?(?:broken|violated|failed)|"
                    r"errors|issues|trips? up|\b(?:top|worst|most \w+)(?: \d+)?(?: \w+)? (?:rules|violations)\b|"
                    r"\brules\b.{0,40}\b(?:break|breaks|breaking|broke|broken|fail\w*|violated|catch\w*|trip\w*)\b", re.I)
# A list of runs: asked for, or runs named by what they are ("birch runs on the blog article").
_ASKS_FOR_A_LIST = re.compile(r"\b(?:show|list|give me|display|see)\b", re.I)
_LIST = re.compile(_ASKS_FOR_A_LIST.pattern + r".*\b(?:runs?|time ?outs|timed[- ]out|failures)\b|"
                   r"\bwhich .*\bruns\b|\bevery .* run|"
                   r"\bruns? (?:that|which|with)\b|\b(?:latest|newest|most recent)\b|\blast (?:\d+|runs?)\b", re.I)
_RUNS = re.compile(r"\bruns\b", re.I)
_WHICH_FACET = re.compile(r"\bwhich (?:models?|contexts?|context levels?|levels?|agents?)\b", re.I)
# A figure over runs: the runs are counted or averaged, not listed.
_AGGREGATE = re.compile(r"how many|how much|average|\bmean\b|\bcost|cheap|expensive|pric(?:e|ey|ier|iest)|rate\b|"
                        r"percent|%|completion|best|worst|compare|fewest|least|\bmost\b|per run|total|better|worse|"
                        r"cleaner|fewer|\bmore\b|\bless\b", re.I)
_COMPARE = re.compile(r"cost|cheap|expensive|price|spen[dt]|\btotal\b|best|worst|compare|\bcomplet(?:ed|es|ion)\b|violations?|average|mean|"
                      r"timed? ?out|how many|success|perform|which model|which context|good enough|better|fewest|most", re.I)
_EAA = re.compile(r"\beaa\b|european accessib\w* act|\beuropean\b[\w\s]{0,25}\bact\b|\baccessib\w* act\b|\bthe act\b|"
                  r"directive|member states?|\barticle \d|\bannex\b|\brecital\b|\beu\b|national law|market surveillance|"
                  r"microenterprise|e-?commerce|e-?books?|banking|ticket machines?|self-service|transpos|penalt|\bfines\b|\bfined\b|"
                  r"\ba fine\b", re.I)
_WCAG = re.compile(r"wcag|success criteri|criterion|level aa|level a\b|\baaa\b|conformance", re.I)
# What web content must do, in everyday words: a question on it without a text named is WCAG's.
_WCAG_TOPIC = re.compile(r"captions?|captoins?|subtitles?|transcripts?|audio description|sign language|videos?|\balt\b|"
                         r"images?|pictures?|colou?r|contrast|keyboard|focus|screen ?readers?|headings?|\blinks?\b|"
                         r"buttons?|\bforms?\b|\blabels?\b|\bzoom|reflow|font|text size|time ?outs?|time limits?|"
                         r"animations?|flash\w*|drag\w*|touch targets?|target size|\bhelp\b|error messages?|"
                         r"passwords?|captcha|log ?in|every page|same place", re.I)
# How the benchmark works, asked as such: a definition, a reason or a how-to, not a figure.
_ABOUT_THE_BENCHMARK = re.compile(
    r"\b(?:what'?s|what is) the difference\b|\bwhat (?:exactly )?(?:does|do) (?:the |a )?[\w-]+ "
    r"(?:level|context|task|label|round)s? (?:give|include|contain|mean|add)\b|"
    # "what's actually in the checklist context level?", "what does timeout mean in this benchmark"
    r"\bwhat'?s (?:actually |exactly )?in (?:the |a )?[\w-]+ (?:context|level|context level|task)\b|"
    r"\bwhat (?:does|do) [\"'\w -]{1,30} mean (?:in|for|here|on)\b|^\s*why (?:count|measure|use|do you|do we|"
    r"does the benchmark|is it|are (?:runs|violations)|do (?:runs|agents|models))\b|\bhow (?:do|can|should) (?:i|we|you) "
    r"(?:import|add|load|upload|bring)\b", re.I)
# How a figure is worked out, which the docs say, not the figure: "how is the cost of a run calculated".
_HOW_IT_IS_WORKED_OUT = re.compile(r"\bhow (?:is|are|was|were|do you|does it) [\w ]{0,30}\b(?:calculated|computed|"
                                   r"worked out|measured|graded|scored|counted)\b", re.I)
# "What is a failed run vs a timed out run?": two of the benchmark's terms set side by side, not two names.
_WHAT_IS_X_VS_Y = re.compile(r"^\s*(?:what'?s|what is|what are)\b.{0,60}\b(?:vs\.?|versus)\b", re.I)
# What a result means, not a figure: "if axe finds 0 violations, is the page accessible?"
_RESULT_MEANING = re.compile(r"\b(?:0|zero|no) violations\b.{0,40}\b(?:mean|accessible|enough|conform\w*)\b", re.I)
_DOCS = re.compile(r"grad(?:e|ed|ing)|sample data|\bsample\b|benchmark|how (?:are|is|were) (?:the )?runs|context levels?|"
                   r"incomplete|methodolog|what (?:does|is) (?:a |the )?(?:context|task|label|round)", re.I)
_ASKS_RULE = re.compile(r"\baxe\b|\brule\b|\bcheck\b|which rule", re.I)

CAN_ANSWER = ("I can answer questions about the benchmark's runs (which context level or model does best and what it "
              "costs, which axe rules the agents break, a run's details), what an axe rule checks, and what WCAG 2.2 "
              "and the European Accessibility Act require.")
REFUSAL = CAN_ANSWER + " This question is outside that, so I have not looked anything up."
# A request to change, delete, rename, run or re-grade: one sentence (offline/router_changes.py).
RUN_REFUSAL = CHANGE_REFUSAL
# A greeting or "what can you do?" is answered with what it can do, not turned away.
INTRODUCTION = ("I answer from the benchmark's runs and from the texts, and say where every figure and quote comes "
                "from. " + CAN_ANSWER + " For example: \u201cWhich context level is best, and what does "
                "it cost?\u201d, \u201cWhich axe rules do the agents break most?\u201d, \u201cWhich axe rule covers "
                "missing alt text?\u201d or \u201cWhat does the European Accessibility Act require of online shops?\u201d")
_GREETING = re.compile(r"^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|greetings)\b[\s!,.?]*(?:there)?[\s!,.?]*$"
                       r"|\bwhat (?:can|do) you (?:do|know|answer)\b|\bwhat can i ask\b|\bhow (?:do|can) i use (?:you|this)\b"
                       r"|\bwho are you\b|^\s*help\s*[?!.]*\s*$", re.I)
# The benchmark's own subjects: a question about agents or models asks for its figures.
_ABOUT_AGENTS = re.compile(r"\bagents?\b|\bmodels?\b|\binstructions?\b|\bguidance\b|\bmore context\b", re.I)


@dataclass
class Plan:
    calls: list[Call] = field(default_factory=list)
    refusal: str | None = None


def _rule_ids(question: str, q: str, rules: set[str]) -> list[str]:
    ids = []
    # "heading order: a real failure or best practice?" asks what the rule is.
    speaks_of_rules = bool(re.search(r"\brules?\b|\bruns\b|\baxe\b|best practice", q))
    for token in dict.fromkeys(re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", q)):
        if token not in rules:
            continue
        plain_word = "-" not in token
        # One-word ids ("list", "region", "label") are everyday words too: a rule only when the
        # question speaks of a rule or quotes the id.
        quoted = any(f"{mark}{token}{mark}" in question.lower() for mark in "`'\"")
        if not plain_word or quoted or re.search(r"\brule\b", q):
            ids.append(token)
    if not ids and speaks_of_rules:
        # "color contrast" for `color-contrast`: a hyphenated id written with spaces, where the
        # question speaks of rules or runs (elsewhere it is the subject, not the rule).
        hyphenated = [r for r in rules if "-" in r]
        ids = find_names(q, hyphenated, hyphenated, whole_only=True)
    return ids


def _everyday_rule(q: str, rules: set[str]) -> str | None:
    for pattern, rule_id in EVERYDAY_RULES:
        if rule_id in rules and re.search(pattern, q):
            return rule_id
    return None


def route(question: str, offered: set[str], facets: Facets, rules: set[str],
          topic: Callable[[str], float | None] | None = None,
          nearness: Callable[[str], float | None] | None = None) -> Plan:
    """The tools to call for a question (only those offered), or a refusal. `topic` gives a question's
    margin of likeness to what the chat answers over what it declines (offline/topic_neighbours.py);
    `nearness` how near the corpus comes to it (search/service.py), without which the votes decide."""
    # Names as users type them ("cedr-mini", "guidlines"), then one spelling of the words the rules and
    # names use ("colour contrast" is `color-contrast`).
    question = corrected(question, known_names(facets, rules))
    q = in_american_spelling(question)
    # Asked to write code or a poem first: "fix my checkout markup" is not a change to the data.
    if _WRITE_SOMETHING.search(q) or ((_SHOPPING.search(q) or _READ_A_PAGE.search(q)) and not _ACCESSIBILITY.search(q)):
        return Plan(refusal=REFUSAL)
    if asks_to_change(q, facets):
        return Plan(refusal=CHANGE_REFUSAL)
    if _GREETING.search(q):
        return Plan(refusal=INTRODUCTION)
    recall = _recall_call(question, offered)
    if recall and not on_topic_words(q):  # "what did I ask last week?": the past is the whole question
        return Plan(calls=[recall])
    run_ids = RUN_ID.findall(question)
    # The gate's votes first; the data's names are looked for only in a question they would refuse. A
    # task's name alone is an everyday noun too ("a newsletter signup" under another law): such a
    # question near the texts is theirs, and only one far from them is the task's.
    named = set(find_names(q, [v for values in facets.values() for v in values]))
    if not on_topic(q, question, topic) and not (
            run_ids or named - set(facets.get("task", [])) or _rule_ids(question, q, rules)):
        if near_the_corpus(question, nearness):  # what lies near it is the texts, never the figures
            return Plan(calls=[_texts_search(question)] if "search_docs" in offered else [])
        if not named:
            return Plan(refusal=REFUSAL)
    calls = _plan(question, q, facets, rules, run_ids)
    if acts_on_the_data(q, calls):  # "toss the dune-code ones": an order on what the plan would read
        return Plan(refusal=CHANGE_REFUSAL)
    calls = [(name, args) for name, args in calls if name in offered]
    if recall:
        calls = [recall, *calls]
    if not calls and "search_docs" in offered:
        calls = [("search_docs", {"query": question[:500]})]
    return Plan(calls=calls[:4])


def _plan(question: str, q: str, facets: Facets, rules: set[str], run_ids: list[str]) -> list[Call]:
    if run_ids:
        return [("get_run", {"run_id": run_id}) for run_id in dict.fromkeys(run_ids)]
    filters = filters_named(q, facets)
    named_rules = _rule_ids(question, q, rules | set(facets.get("rule", [])))
    counted = counted_part(q, facets)  # where a number may say how many results
    if (ranked := _by_violations(q, filters, named_rules, counted)) is not None:
        return [("list_runs", ranked)]
    if named_rules and (_LIST.search(q) or _RUNS.search(q)):
        return lists_by_outcome({**filters, "rule": named_rules[0], **limited(counted)}, outcomes_named(q, rule_named=True))
    # Runs named by the problem they had ("runs in round 2 with missing form labels").
    if _RUNS.search(q) and not _WRONG.search(q) and not _WHICH_FACET.search(q) and (everyday := _everyday_rule(q, rules)):
        return lists_by_outcome({**filters, "rule": everyday, **limited(counted)}, outcomes_named(q, rule_named=True))
    if named_rules:
        return [("explain_rule", {"rule_id": rule_id}) for rule_id in named_rules]
    if _ASKS_RULE.search(q) and not _WRONG.search(q) and (everyday := _everyday_rule(q, rules)):
        # "Does the contrast check apply to our logo?" asks of the rule and of what a page must do:
        # the texts are searched too, unless the question is about the benchmark's checks.
        texts = [_texts_search(question)] if asks_the_texts(q, filters) else []
        return [("explain_rule", {"rule_id": everyday}), *texts]
    docs_source = _docs_source(q)
    if docs_source in ("eaa", "wcag22"):
        return [("search_docs", {"query": question[:500], "source": docs_source})]
    if asks_the_texts(q, filters):
        return [_texts_search(question)]
    # "mean" as an average ("the mean cost"), not as "what does X mean"
    asks_a_figure = re.search(r"how many|how much|average|\bmean (?:cost|violations?|number|count|rate|tokens?)\b|"
                              r"cheapest|\btotal\b|\bspen[dt]\b|\bcosts?\b", q)
    sets_terms_side_by_side = _WHAT_IS_X_VS_Y.search(q) and not find_names(q, [v for vs in facets.values() for v in vs])
    explains_terms = _ABOUT_THE_BENCHMARK.search(q) or sets_terms_side_by_side
    if _RESULT_MEANING.search(q) or _HOW_IT_IS_WORKED_OUT.search(q) or (explains_terms and not asks_a_figure):
        return [("search_docs", {"query": question[:500], "source": "docs"})]
    if _WRONG.search(q) and not _COMPARE_ONLY.search(q):
        return [("top_rules", {**filters, **limited(counted)})]
    if _WHICH_FACET.search(q) and _AGGREGATE.search(q) and not _ASKS_FOR_A_LIST.search(q):
        # "Which model finishes its runs most often": a model is chosen by a figure over its runs.
        return _per_name(q, facets, filters) or [("compare_contexts", filters)]
    outcomes = outcomes_named(q, rule_named=False)
    if outcomes and ASKS_A_COUNT.search(q):  # "how many timed out", "the failure rate": counted, not listed
        return _per_name(q, facets, filters) or [("compare_contexts", filters)]
    if _LIST.search(q) or (_RUNS.search(q) and filters and not _AGGREGATE.search(q)):
        return lists_by_outcome({**filters, **limited(counted)}, outcomes)
    # "timeouts for dune-code": runs named by how they ended, for a name the data holds.
    if outcomes and (filters or _RUNS.search(q)) and not _AGGREGATE.search(q):
        return lists_by_outcome({**filters, **limited(counted)}, outcomes)
    if _COMPARE.search(q) or filters:
        return _per_name(q, facets, filters) or [("compare_contexts", filters)]
    if docs_source == "docs":
        return [("search_docs", {"query": question[:500], "source": "docs"})]
    if _ABOUT_AGENTS.search(q):
        return [("compare_contexts", filters)]
    if _WCAG_TOPIC.search(q):
        return [_texts_search(question)]
    return []


def known_names(facets: Facets, rules: set[str]) -> list[str]:
    """Every name a question may mistype: the data's models, contexts, tasks and labels, the rules with
    a hyphen (one-word ids are everyday words) and how a run may end."""
    from groundchat.benchmark.runs import OUTCOMES

    return [*(v for values in facets.values() for v in values), *(r for r in rules if "-" in r), *OUTCOMES]


def _texts_search(question: str) -> Call:
    """A question that names neither text searches every text. Web content in everyday words used to
    be sent to WCAG alone, and a guess at one text loses the answer whenever the other holds it: "a
    blind viewer can't use our TV box's programme guide" is the Act's. The search's question leg
    (search/question_leg.py) tells the two apart by the questions each answers; with it, searching
    both found the passage for 7 more of the decision sets' 465 questions and lost none."""
    return ("search_docs", {"query": question[:500]})


def _by_violations(q: str, filters: dict[str, str], named_rules: list[str], counted: str) -> JsonObject | None:
    """list_runs' arguments for runs ranked by their violation count, or None when the question does
    not rank runs so. A rule is kept only alone (the order takes a rule without other filters)."""
    if _WHICH_FACET.search(q):
        return None
    order = ("most_violations" if MOST_VIOLATIONS.search(q) else
             "fewest_violations" if FEWEST_VIOLATIONS.search(q) else None)
    if order is None or (named_rules and filters):
        return None
    args: JsonObject = {**filters, **({"rule": named_rules[0]} if named_rules else {}), "order": order}
    return {**args, **({"limit": 1} if ONE_RUN.search(q) else limited(counted))}


def _per_name(q: str, facets: Facets, filters: dict[str, str]) -> list[Call]:
    """"Birch or dune?": a facet named two or three times is compared name by name, one call each
    (a call takes one value per filter). Two contexts need no such split: compare_contexts gives
    a row per context, and naming two pins neither."""
    every = [v for values in facets.values() for v in values]
    for facet, values in nameable(facets).items():
        if facet == "context":
            continue  # compare_contexts lists every context side by side already: one call answers it
        names = [] if facet in filters else find_names(q, values, every)
        if 2 <= len(names) <= 3:
            return [("compare_contexts", {**filters, facet: name}) for name in names]
    return []


def _recall_call(question: str, offered: set[str]) -> Call | None:
    """An explicit look back ("as I asked last week") searches the caller's past, when offered."""
    from groundchat.recall.plan import TOOL_NAME, is_explicit_recall

    if TOOL_NAME in offered and is_explicit_recall(question):
        return (TOOL_NAME, {"query": question[:500]})
    return None


# "Which model fails least / has the fewest violations" compares; "what fails most" ranks rules.
_COMPARE_ONLY = re.compile(r"cheap|cost|price|fewest|least|completion|which model|which context|best", re.I)


def _docs_source(q: str) -> str | None:
    if _EAA.search(q):
        return "eaa"
    if _WCAG.search(q):
        return "wcag22"
    if _DOCS.search(q):
        return "docs"
    return None
