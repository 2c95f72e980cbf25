"""The offline answerer's router in users' words: the right tool with the arguments the question pins
down, spelled as the data holds them; anything off-topic gets a short refusal and no tool."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import Caller
from groundchat.benchmark.axe_rules import rule_ids
from groundchat.chat.loop import run_exchange
from groundchat.offline.answerer import DISCLAIMER, OfflineAnswerer
from groundchat.offline.router import REFUSAL, route
from groundchat.offline.router_changes import CHANGE_REFUSAL
from groundchat.tools.base import ToolContext, ToolRegistry
from groundchat_cli import sample
from groundchat_testkit.answer_runs import kept_run
from groundchat_cli.router_eval import TOOLS, load_cases, score
from tests.corpus_support import REPO_ROOT

FACETS = sample.sample_names()
RULES = set(rule_ids())
CASES = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router.jsonl")
# Written later, blind, to check the tune split's decisions; read since, so tuning data too.
VALIDATE = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_validate.jsonl")
# Written later still, blind, split by hash: the tune half was read, the report half never.
SECOND = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_second.jsonl")
THIRD = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_third.jsonl")
# Written last, blind, never read (not split).
FOURTH = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_fourth.jsonl")
# Written after the router learned web content and a business's duties (offline/router_topics.py); never read.
FIFTH = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_fifth.jsonl")
# Written after the gate learned likeness (offline/topic_neighbours.py); run once, never read.
SIXTH = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_sixth.jsonl")
# Written blind after the sixth, split by hash ("seventh-1|"): the tune half was read, the report half never.
SEVENTH = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_seventh.jsonl")
# Written before the router learned change requests, round words, "nothing extra", two contexts
# together and outcomes as filters, halved by hash ("eighth-1|"): the tune half was read, the report
# half never.
EIGHTH = load_cases(REPO_ROOT / "tests" / "eval" / "offline_router_eighth.jsonl")


@pytest.mark.parametrize(("question", "tool", "args"), [
    ("Which model is cheapest?", "compare_contexts", {}),
    ("Compare the models: cheapest with fewest violations", "compare_contexts", {}),
    ("Which axe rule covers missing alt text?", "explain_rule", {"rule_id": "image-alt"}),
    ("How many runs timed out with birch-pro under guidelines-axe?", "compare_contexts",
     {"model": "birch-pro", "context": "guidelines-axe"}),
    ("what goes wrong on the checkout flow?", "top_rules", {"task": "checkout-flow"}),
    # A number in a name is not a limit; one that counts results is.
    ("list runs with guidelines axe from round 3", "list_runs", {"context": "guidelines-axe", "label": "round-3"}),
    ("nav header runs, no context, last 3", "list_runs", {"task": "nav-header", "context": "none", "limit": 3}),
    ("top 3 rules cedar breaks", "top_rules", {"model": "cedar-mini", "limit": 3}),
    # Runs named by what they are are listed; a figure over them is compared.
    ("birch runs on the blog article", "list_runs", {"model": "birch-pro", "task": "blog-article"}),
    ("on the modal, does more context make runs pricier?", "compare_contexts", {"task": "modal-dialog"}),
    # A rule id alone is on topic; one written with spaces counts where runs or rules are spoken of.
    ("explain select-name", "explain_rule", {"rule_id": "select-name"}),
    ("which runs broke color contrast?", "list_runs", {"rule": "color-contrast"}),
    # How the benchmark works is in the docs, even when a context is named.
    ("what exactly does the guidelines-axe level give the agent", "search_docs",
     {"query": "what exactly does the guidelines-axe level give the agent", "source": "docs"}),
    ("do pre-recorded videos need captions", "search_docs", {"query": "do pre-recorded videos need captions"}),
    # Runs named by the problem they had, in everyday words and either spelling.
    ("blog article runs that failed colour contrast", "list_runs", {"task": "blog-article", "rule": "color-contrast"}),
    ("which runs in round 2 had missing form labels", "list_runs", {"label": "round-2", "rule": "label"}),
    # A model is chosen by a figure over its runs, not listed.
    ("which model finishes its runs most often with the axe tool", "compare_contexts", {"context": "guidelines-axe"}),
    ("heading order: a real failure or just best practice?", "explain_rule", {"rule_id": "heading-order"}),
    # Rules ranked however the question says it.
    ("what breaks most on the blog posts in round 2", "top_rules", {"task": "blog-article", "label": "round-2"}),
    ("which rules does even atlas large keep breaking", "top_rules", {"model": "atlas-large"}),
    ("top 5 violations in round 1 overall", "top_rules", {"label": "round-1", "limit": 5}),
    ("signup form, guidelines-axe: what's still failing most?", "top_rules",
     {"task": "signup-form", "context": "guidelines-axe"}),
    # Two contexts are compared by one call: compare_contexts lists every context.
    ("guidelines vs guidelines-axe for birch pro, worth the extra cost?", "compare_contexts", {"model": "birch-pro"}),
    ("show me cedar-mini's timeouts", "list_runs", {"model": "cedar-mini", "outcome": "timeout"}),
    # What a result means is in the docs.
    ("if axe finds 0 violations does that mean the page is accessible?", "search_docs",
     {"query": "if axe finds 0 violations does that mean the page is accessible?", "source": "docs"}),
    # A label's number as a word or an ordinal; runs ranked with words between; "zero context".
    ("what breaks most in the second round", "top_rules", {"label": "round-2"}),
    ("round three runs for cedar", "list_runs", {"model": "cedar-mini", "label": "round-3"}),
    ("the cleanest checkout flow runs", "list_runs", {"task": "checkout-flow", "order": "fewest_violations"}),
    ("with zero context, what goes wrong most", "top_rules", {"context": "none"}),
    ("which axe rule flags links with no accessible name", "explain_rule", {"rule_id": "link-name"}),
    # What a term means here, and how a figure is worked out, are the docs'.
    ("what does failed mean here", "search_docs", {"query": "what does failed mean here", "source": "docs"}),
    ("how are the violations counted", "search_docs", {"query": "how are the violations counted", "source": "docs"}),
    ("checklist or guidelines, what's the difference in what the agent is given?", "search_docs",
     {"query": "checklist or guidelines, what's the difference in what the agent is given?", "source": "docs"}),
    # An average is still a figure.
    ("what's the mean cost of a dune-code run", "compare_contexts", {"model": "dune-code"}),
])
def test_users_words_reach_the_right_tool_with_the_datas_spelling(question, tool, args):
    assert route(question, TOOLS, FACETS, RULES).calls[0] == (tool, args)


@pytest.mark.parametrize(("question", "calls"), [
    ("which runs timed out", [("list_runs", {"outcome": "timeout"})]),
    ("show me the failed runs of birch-pro", [("list_runs", {"model": "birch-pro", "outcome": "failed"})]),
    ("list completed runs under guidelines-axe", [("list_runs", {"context": "guidelines-axe", "outcome": "completed"})]),
    ("timeouts for dune-code", [("list_runs", {"model": "dune-code", "outcome": "timeout"})]),
    ("list the runs that failed under guidelines-axe", [("list_runs", {"context": "guidelines-axe", "outcome": "failed"})]),
    ("timed out runs, last 5", [("list_runs", {"limit": 5, "outcome": "timeout"})]),
    # Two outcomes: a call takes one, so one call each.
    ("birch-pro runs that failed or timed out", [("list_runs", {"model": "birch-pro", "outcome": "failed"}),
                                                 ("list_runs", {"model": "birch-pro", "outcome": "timeout"})]),
    # A negated outcome narrows nothing.
    ("runs that did not time out for birch", [("list_runs", {"model": "birch-pro"})]),
    # "Failed" after a rule is the rule's failure, not how the run ended.
    ("show me dune's runs that failed select-name", [("list_runs", {"model": "dune-code", "rule": "select-name"})]),
    ("blog article runs that failed colour contrast", [("list_runs", {"task": "blog-article", "rule": "color-contrast"})]),
    # How many ended so, and how often: counted per model × context, not listed.
    ("how many runs timed out", [("compare_contexts", {})]),
    ("show me how many runs timed out for dune-code", [("compare_contexts", {"model": "dune-code"})]),
    ("what's the failure rate of dune-code?", [("compare_contexts", {"model": "dune-code"})]),
    ("how often does dune-code time out?", [("compare_contexts", {"model": "dune-code"})]),
    ("which context level times out the most?", [("compare_contexts", {})]),
    # What the outcomes mean is in the docs.
    ("what's the difference between a failed run and a timeout", [("search_docs", {
        "query": "what's the difference between a failed run and a timeout", "source": "docs"})]),
])
def test_runs_asked_for_by_how_they_ended_are_listed_by_outcome_and_counts_stay_compared(question, calls):
    assert route(question, TOOLS, FACETS, RULES).calls == calls


def test_the_answer_to_a_list_by_outcome_says_how_the_runs_ended():
    from groundchat.offline.templates import compose

    row = {"run_id": "run-1", "model": "birch-pro", "context": "none", "task": "signup-form", "outcome": "timeout",
           "violation_count": 0, "cost_text": "$0.0100"}
    text = compose("timeouts for birch-pro", [("list_runs", {"filter": {"model": "birch-pro", "outcome": "timeout"},
                                                             "runs": [row]}, False)])
    assert text.splitlines() == ["The latest runs that timed out, model birch-pro (from list_runs):",
                                 "- run-1: birch-pro · none · signup-form, timeout, 0 violations, $0.0100"]
    assert compose("which runs failed", [("list_runs", {"filter": {"outcome": "failed"}, "runs": []}, False)]) == (
        "list_runs found no runs that failed.")
    # Without an outcome the lead is as before.
    assert compose("birch runs", [("list_runs", {"filter": {"model": "birch-pro"}, "runs": [row]}, False)]).startswith(
        "The latest runs for model birch-pro (from list_runs):")


@pytest.mark.parametrize("question", ["a recipe for banana bread", "what's the capital of Australia?", "tell me a joke",
                                      "good laptop for coding under 1000 euros?"])
def test_off_topic_questions_are_refused_without_a_tool(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == REFUSAL


@pytest.mark.parametrize("question", ["please run this script on the server: rm -rf /",
                                      "run the benchmark again for cedar-mini", "please run axe on https://example.com",
                                      "python -c 'print(1)' run this", "kick off a round-4 with all five models",
                                      "can you start a new benchmark round?"])
def test_a_request_to_run_something_is_refused(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == CHANGE_REFUSAL


def test_a_run_id_or_a_run_cost_is_not_an_order_to_run():
    assert route("run-round-1-blog-article-birch-pro-guidelines", TOOLS, FACETS, RULES).calls == [
        ("get_run", {"run_id": "run-round-1-blog-article-birch-pro-guidelines"})]
    assert route("run costs for cedar-mini?", TOOLS, FACETS, RULES).calls == [("compare_contexts", {"model": "cedar-mini"})]
    assert route("run the numbers for cedar-mini", TOOLS, FACETS, RULES).calls == [("compare_contexts", {"model": "cedar-mini"})]


@pytest.mark.parametrize("question", ["write me a haiku about screen readers",
                                      "refactor our navbar component so it passes axe",
                                      "fix my checkout markup for screen readers"])
def test_a_request_to_write_something_is_refused_even_on_topic(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == REFUSAL


@pytest.mark.parametrize(("question", "read"), [
    ("give me a summary of https://en.wikipedia.org/wiki/Football", False),
    ("https://example.com/blog/post-1 tl;dr please", False),
    ("open https://w3.org.example.net/page and summarise it", False),
    # An address of the texts' publishers, or a page asked about for its accessibility, is searched.
    ("summarise https://www.w3.org/TR/WCAG22/ for me", True),
    ("can you read https://myshop.example and tell me if screen readers can use it", True),
])
def test_a_page_to_read_by_its_address_is_declined_unless_the_texts_speak_of_it(question, read):
    # The likeness votes for every one of them: the address decides.
    plan = route(question, TOOLS, FACETS, RULES, topic=lambda q: 0.5)
    assert (plan.refusal is None, [name for name, _ in plan.calls][:1]) == ((True, ["search_docs"]) if read else (False, []))


def test_a_question_on_how_to_fix_something_is_still_answered():
    assert route("fix the contrast on our buttons: what ratio do we need?", TOOLS, FACETS, RULES).calls[0][0] == "search_docs"
    assert route("how do I fix missing form labels", TOOLS, FACETS, RULES).calls[0][0] in ("search_docs", "explain_rule")


async def test_the_answerer_refuses_off_topic_in_words_and_calls_nothing():
    registry = ToolRegistry([], None)
    frames = [f async for f in run_exchange(await kept_run(OfflineAnswerer(), registry, question="a recipe for banana bread"))]
    assert [f.type for f in frames] == ["start", "step", "text", "step", "done"]
    assert frames[2].data["text"] == REFUSAL + "\n\n" + DISCLAIMER
    assert frames[-1].data["reason"] == "complete"


def test_the_router_eval_is_split_and_large_enough():
    assert len(CASES) >= 60
    assert {c.split for c in CASES} == {"tune", "report"}
    assert {c.tool for c in CASES} >= {"compare_contexts", "list_runs", "get_run", "top_rules", "explain_rule", "search_docs", "none"}


def test_on_the_report_split_the_router_picks_the_tool_and_its_arguments(topic_margin):
    figures = score([c for c in CASES if c.split == "report"], FACETS, RULES, topic_margin)
    # Floors under the reported figures (tool 0.957, tool and arguments 0.894; 0.936 / 0.872 before
    # the seventh set's tune half was read), never tuned on.
    assert figures["tool"] >= 0.95
    assert figures["tool_and_args"] >= 0.89


def test_on_the_validation_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    assert len(VALIDATE) == 80 and {c.split for c in VALIDATE} == {"validate"}
    assert not {c.q.lower() for c in VALIDATE} & {c.q.lower() for c in CASES}
    figures = score(VALIDATE, FACETS, RULES, topic_margin)
    assert figures["tool"] >= 0.95 and figures["tool_and_args"] >= 0.95


def test_on_the_second_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    assert len(SECOND) == 50 and {c.split for c in SECOND} == {"tune", "report"}
    earlier = {c.q.lower() for c in [*CASES, *VALIDATE]}
    assert not {c.q.lower() for c in SECOND} & earlier
    tune = score([c for c in SECOND if c.split == "tune"], FACETS, RULES, topic_margin)
    assert tune["tool"] >= 0.96 and tune["tool_and_args"] >= 0.92
    # Floors under the report half's figures (tool 0.84, tool and arguments 0.68), never read. It was
    # 0.76 while web content in everyday words searched WCAG alone: two of its lines label such a
    # question with WCAG, and both texts are searched now (the passage is found for more of the
    # set's questions: tests/eval/test_retrieval.py, ROUTED_FLOORS).
    # Since the seventh set's tune half was read: 0.88 / 0.76.
    report = score([c for c in SECOND if c.split == "report"], FACETS, RULES, topic_margin)
    assert report["tool"] >= 0.88 and report["tool_and_args"] >= 0.74


def test_on_the_third_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    assert len(THIRD) == 50 and {c.split for c in THIRD} == {"tune", "report"}
    assert not {c.q.lower() for c in THIRD} & {c.q.lower() for c in [*CASES, *VALIDATE, *SECOND]}
    tune = score([c for c in THIRD if c.split == "tune"], FACETS, RULES, topic_margin)
    # 0.889 with arguments: one line labels a web content question with WCAG, which both texts answer
    # a search of now (0.926 before).
    assert tune["tool"] >= 0.96 and tune["tool_and_args"] >= 0.88
    # Floors under the report half's figures (tool 0.826, tool and arguments 0.652), never read.
    report = score([c for c in THIRD if c.split == "report"], FACETS, RULES, topic_margin)
    assert report["tool"] >= 0.82 and report["tool_and_args"] >= 0.65


def test_on_the_fourth_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    # 50 written; one was word for word a question of the second set's tune half, and was dropped.
    assert len(FOURTH) == 49 and {c.split for c in FOURTH} == {"fourth"}
    assert not {c.q.lower() for c in FOURTH} & {c.q.lower() for c in [*CASES, *VALIDATE, *SECOND, *THIRD]}
    # Floors under its figures (tool 0.878, tool and arguments 0.755; as first run 0.878 / 0.776: one
    # question now also gets the run list's outcome, which did not exist when its label was written).
    # Since the seventh set's tune half was read: 0.898 / 0.776. With bge-small-en-v1.5 "summarise this article for
    # me <address>" came within bge's likeness margin and was searched (0.878); a page to read by its address is
    # declined since, and both models give 0.898 / 0.837.
    figures = score(FOURTH, FACETS, RULES, topic_margin)
    assert figures["tool"] >= 0.88 and figures["tool_and_args"] >= 0.76


def test_on_the_fifth_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    assert len(FIFTH) == 50 and {c.split for c in FIFTH} == {"fifth"}
    assert not {c.q.lower() for c in FIFTH} & {c.q.lower() for c in [*CASES, *VALIDATE, *SECOND, *THIRD, *FOURTH]}
    # Floors under its figures as first run (tool 0.94, tool and arguments 0.84; the previous stop's
    # router: 0.90 / 0.82). After the gate learned everyday device words: 0.96 / 0.86.
    # Since the seventh set's tune half was read: 0.98 / 0.92.
    figures = score(FIFTH, FACETS, RULES, topic_margin)
    assert figures["tool"] >= 0.96 and figures["tool_and_args"] >= 0.90


def test_on_the_sixth_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    # 50 written; three were word for word questions of earlier sets, and were dropped.
    assert len(SIXTH) == 47 and {c.split for c in SIXTH} == {"sixth"}
    assert not {c.q.lower() for c in SIXTH} & {c.q.lower() for c in [*CASES, *VALIDATE, *SECOND, *THIRD, *FOURTH, *FIFTH]}
    # Floors under its figures as first and only run (tool 0.936, tool and arguments 0.830; the same
    # with the word lists alone).
    figures = score(SIXTH, FACETS, RULES, topic_margin)
    assert figures["tool"] >= 0.93 and figures["tool_and_args"] >= 0.82


def test_on_the_seventh_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    # 100 written; three were word for word questions of earlier sets and one an example the gate
    # ships (offline/topic_examples.json), and were dropped.
    assert len(SEVENTH) == 96 and {c.split for c in SEVENTH} == {"tune", "report"}
    earlier = [*CASES, *VALIDATE, *SECOND, *THIRD, *FOURTH, *FIFTH, *SIXTH]
    assert not {c.q.lower() for c in SEVENTH} & {c.q.lower() for c in earlier}
    # The tune half as first run: tool 0.841, with arguments 0.795; its nine misses taught a label's
    # number as an ordinal ("the 3rd round"), "cleanest" with words before "runs", "zero context",
    # rules asked by what a button or link lacks, what a term means and how a figure is worked out
    # (the docs'), and a request to rewrite code (refused).
    tune = score([c for c in SEVENTH if c.split == "tune"], FACETS, RULES, topic_margin)
    assert tune["tool"] >= 0.97 and tune["tool_and_args"] >= 0.97
    # Floors under the report half's figures (tool 1.000, tool and arguments 0.923; as first run, before
    # the tune half was read, 0.981 / 0.885), never read.
    report = score([c for c in SEVENTH if c.split == "report"], FACETS, RULES, topic_margin)
    assert report["tool"] >= 0.98 and report["tool_and_args"] >= 0.90


def test_a_question_about_buying_a_device_is_not_about_its_accessibility():
    assert route("best phone for a blind user under 300 euros?", TOOLS, FACETS, RULES).calls != []


@pytest.mark.parametrize("question", [
    "do our videos need captions?",
    "must our bank's app work with a screen reader by law?",
    # Web content words, and the Act's: a guess at WCAG alone would lose it.
    "a blind viewer says the programme guide on the TV box we sell never reads out, what now?",
])
def test_a_question_that_names_neither_text_searches_both(question):
    assert route(question, TOOLS, FACETS, RULES).calls == [("search_docs", {"query": question})]


def test_a_question_that_names_a_text_searches_that_text():
    assert route("what does WCAG say about captions?", TOOLS, FACETS, RULES).calls == [
        ("search_docs", {"query": "what does WCAG say about captions?", "source": "wcag22"})]
    assert route("what does the EAA say about captions?", TOOLS, FACETS, RULES).calls == [
        ("search_docs", {"query": "what does the EAA say about captions?", "source": "eaa"})]


@pytest.mark.parametrize("question", ["hi, what can you do?", "Hello!", "what can I ask?", "help"])
def test_a_greeting_is_answered_with_what_it_can_do(question):
    from groundchat.offline.router import INTRODUCTION

    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == INTRODUCTION
    assert "outside" not in INTRODUCTION and "Which context level is best" in INTRODUCTION


def test_a_question_about_the_agents_asks_for_the_benchmarks_figures():
    assert route("does giving the agent more instructions actually help?", TOOLS, FACETS, RULES).calls == [
        ("compare_contexts", {})]


def test_the_acts_parties_and_products_in_everyday_words_are_on_topic():
    plan = route("who has to make sure an imported e-reader complies?", TOOLS, FACETS, RULES)
    assert plan.refusal is None and plan.calls[0][0] == "search_docs"


def test_two_names_of_one_facet_are_compared_name_by_name():
    assert route("which is better value, birch or dune?", TOOLS, FACETS, RULES).calls == [
        ("compare_contexts", {"model": "birch-pro"}), ("compare_contexts", {"model": "dune-code"})]


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=600))
def test_any_text_gets_a_refusal_or_at_most_four_offered_calls(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert (plan.refusal is None) == bool(plan.calls)
    assert len(plan.calls) <= 4 and all(name in TOOLS for name, _ in plan.calls)
    for name, args in plan.calls:
        for facet in ("model", "context", "task", "label"):
            assert facet not in args or args[facet] in FACETS[facet]


@pytest.mark.parametrize(("question", "calls"), [
    ("Which run had the most violations?", [("list_runs", {"order": "most_violations", "limit": 1})]),
    ("show me birch-pro's worst runs", [("list_runs", {"model": "birch-pro", "order": "most_violations"})]),
    ("worst runs for birch-pro", [("list_runs", {"model": "birch-pro", "order": "most_violations"})]),
    ("the cleanest runs under guidelines-axe", [("list_runs", {"context": "guidelines-axe", "order": "fewest_violations"})]),
    ("top 5 runs by violations in round-2", [("list_runs", {"label": "round-2", "order": "most_violations", "limit": 5})]),
    ("list the 3 runs with the most violations", [("list_runs", {"order": "most_violations", "limit": 3})]),
    ("runs with the fewest violations in round 1", [("list_runs", {"label": "round-1", "order": "fewest_violations"})]),
    # A model or context ranked by violations is a mean per model × context; rules ranked are top_rules.
    ("Which model has the most violations?", [("compare_contexts", {})]),
    ("Which context has the fewest violations?", [("compare_contexts", {})]),
    ("which rule is broken most?", [("top_rules", {})]),
])
def test_runs_ranked_by_their_violations_are_a_list_in_that_order(question, calls):
    assert route(question, TOOLS, FACETS, RULES).calls == calls


def test_the_answer_to_a_list_by_violations_says_its_order_and_each_runs_count():
    from groundchat.offline.templates import compose

    row = {"run_id": "run-1", "model": "birch-pro", "context": "none", "task": "signup-form", "outcome": "completed",
           "violation_count": 7, "node_count": 19, "cost_text": "$0.0100"}
    text = compose("worst runs for birch-pro", [("list_runs", {"filter": {"model": "birch-pro"}, "order": "most_violations",
                                                               "runs": [row]}, False)])
    assert text.splitlines() == ["The graded runs for model birch-pro, most violations first (from list_runs):",
                                 "- run-1: 7 violations, 19 failing elements; birch-pro · none · signup-form, $0.0100"]
    assert compose("cleanest runs", [("list_runs", {"filter": {}, "order": "fewest_violations", "runs": []}, False)]) == (
        "list_runs found no graded runs under this filter.")


async def test_which_run_had_the_most_violations_is_answered_from_the_sample_end_to_end(dynamo):
    from groundchat.services import Services
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat_cli.sample import generate_runs
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)

    async def allow(permission, caller):
        return True

    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    run = await kept_run(OfflineAnswerer(), ToolRegistry(DATA_TOOLS, allow), ctx=ctx, question="Which run had the most violations?")
    frames = [f async for f in run_exchange(run)]
    call = next(f.data for f in frames if f.type == "tool-call")
    assert (call["name"], call["args"]) == ("list_runs", {"order": "most_violations", "limit": 1})
    [row] = next(f.data["result"] for f in frames if f.type == "tool-result")["runs"]
    graded = [x for x in generate_runs() if x.get("axe")]
    most = max(len(x["axe"]["violations"]) for x in graded)
    newest = max((x for x in graded if len(x["axe"]["violations"]) == most), key=lambda x: (x["started_at"], x["id"]))
    assert (row["run_id"], row["violation_count"]) == (newest["id"], most)
    text = "".join(f.data["text"] for f in frames if f.type == "text")
    assert f"- {newest['id']}: {most} violations" in text and "most violations first" in text
    assert frames[-1].data["reason"] == "complete"


def test_a_check_asked_of_a_page_brings_the_rule_and_the_texts():
    assert route("does the contrast check apply to our logo?", TOOLS, FACETS, RULES).calls == [
        ("explain_rule", {"rule_id": "color-contrast"}),
        ("search_docs", {"query": "does the contrast check apply to our logo?"})]
    # Asked of the benchmark's checker, the rule alone.
    assert route("which axe rule checks colour contrast?", TOOLS, FACETS, RULES).calls == [
        ("explain_rule", {"rule_id": "color-contrast"})]


@pytest.mark.parametrize(("question", "calls"), [
    ("why do runs time out?", [("search_docs", {"query": "why do runs time out?", "source": "docs"})]),
    ("what is a failed run vs a timed out run",
     [("search_docs", {"query": "what is a failed run vs a timed out run", "source": "docs"})]),
    # Two names side by side are compared, not explained.
    ("what's cheaper, birch-pro vs atlas-large?", [("compare_contexts", {"model": "birch-pro"}),
                                                   ("compare_contexts", {"model": "atlas-large"})]),
])
def test_why_runs_end_as_they_do_and_two_terms_side_by_side_are_the_docs(question, calls):
    assert route(question, TOOLS, FACETS, RULES).calls == calls


def test_on_the_eighth_set_the_router_picks_the_tool_and_its_arguments(topic_margin):
    import hashlib
    import re

    assert len(EIGHTH) == 88
    for case in EIGHTH:
        normalised = re.sub(r"\s+", " ", case.q.lower()).strip()
        in_tune = int(hashlib.sha256(("eighth-1|" + normalised).encode()).hexdigest()[:8], 16) % 100 < 50
        assert case.split == ("tune" if in_tune else "report"), case.q
    earlier = [*CASES, *VALIDATE, *SECOND, *THIRD, *FOURTH, *FIFTH, *SIXTH, *SEVENTH]
    assert not {c.q.lower() for c in EIGHTH} & {c.q.lower() for c in earlier}
    # The tune half (47) as first run: tool 0.681, with arguments 0.447; its misses taught the
    # change requests, a round's number never a limit, "nothing extra" and "the bare runs", two
    # contexts written apart, "ran out of time", "incomplete" and "the 5 most common problems".
    tune = score([c for c in EIGHTH if c.split == "tune"], FACETS, RULES, topic_margin)
    assert (tune["n"], tune["tool"], tune["tool_and_args"]) == (47, 1.0, 1.0)
    # Floors under the report half's figures (41: tool 0.976, tool and arguments 0.951; as first run,
    # before the tune half was read, 0.683 / 0.390), never read.
    report = score([c for c in EIGHTH if c.split == "report"], FACETS, RULES, topic_margin)
    assert report["n"] == 41 and report["tool"] >= 0.97 and report["tool_and_args"] >= 0.95


def _change_requests() -> list[dict]:
    """Every line of every router set marked as a request to change, delete, rename, run or re-grade."""
    import json

    rows = []
    for path in sorted((REPO_ROOT / "tests" / "eval").glob("offline_router*.jsonl")):
        # never read: run once, in test_never_read_sets.py and test_never_read_tenth.py
        if path.name in ("offline_router_ninth.jsonl", "offline_router_tenth.jsonl"):
            continue
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {r.get("kind") for r in rows} == {None, "change"}
    return [r for r in rows if r.get("kind") == "change"]


def test_every_change_request_in_the_router_sets_is_refused_without_a_tool(topic_margin):
    requests = _change_requests()
    # 15 in the earlier sets (orders to run, deploy, install, delete), 28 in the eighth.
    assert len(requests) == 43 and all(r["tool"] == "none" and r["args"] == {} for r in requests)
    for row in requests:
        for topic in (topic_margin, None):  # with the likeness margin and with the word lists alone
            plan = route(row["q"], TOOLS, FACETS, RULES, topic=topic)
            assert (plan.calls, plan.refusal) == ([], CHANGE_REFUSAL), row["q"]


def test_the_change_refusal_is_one_sentence_saying_the_chat_only_reads():
    assert CHANGE_REFUSAL == ("I can only read the benchmark's runs and the texts, so I cannot change, delete, rename, "
                              "run or re-grade anything.")
    assert CHANGE_REFUSAL.count(".") == 1 and CHANGE_REFUSAL.endswith(".")


@pytest.mark.parametrize("question", [
    "remove cedar-mini's failed runs", "rename this label", "regrade round 2", "wipe the timeouts",
    "can we regrade round 2?", "round 2 needs regrading", "i want the failed runs deleted",
    "show me the runs and then remove the failed ones",
    "the cost on run-round-1-blog-article-cedar-mini-none is wrong, please fix it",
    "merge round-1 and round-2 into a single label", "add a new model called elm-tiny to the benchmark",
])
def test_a_request_to_change_the_data_is_refused_in_one_sentence(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert (plan.calls, plan.refusal) == ([], CHANGE_REFUSAL)


@pytest.mark.parametrize(("question", "tool"), [
    # Words of a change that ask about a page, or ask to read.
    ("fix the contrast on our buttons: what ratio do we need?", "search_docs"),
    ("fix the label on our email field", "search_docs"),
    ("remove the outline on focus, is that allowed?", "search_docs"),
    ("delete button needs a label?", "search_docs"),
    ("hide decorative images from screen readers?", "search_docs"),
    ("can I import my own runs?", "search_docs"),
    ("change in cost between round 1 and round 2", "compare_contexts"),
    ("add up the costs for round 1", "compare_contexts"),
    ("combine round 1 and 2: which model is cheapest?", "compare_contexts"),
    ("drop in violations from none to checklist", "compare_contexts"),
    ("rerun costs for cedar", "compare_contexts"),
    ("show me every run that failed on the checkout task", "list_runs"),
])
def test_words_of_a_change_in_a_question_that_reads_are_not_refused(question, tool):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.refusal is None and plan.calls[0][0] == tool


async def test_the_answerer_refuses_a_change_in_one_sentence_calls_nothing_and_draws_nothing():
    registry = ToolRegistry([], None)
    frames = [f async for f in run_exchange(await kept_run(OfflineAnswerer(), registry, question="remove cedar-mini's failed runs"))]
    assert [f.type for f in frames] == ["start", "step", "text", "step", "done"]
    assert frames[2].data["text"] == CHANGE_REFUSAL + "\n\n" + DISCLAIMER


@pytest.mark.parametrize(("question", "calls"), [
    # A round's number is the label, never a limit; a round the data lacks pins nothing.
    ("round 2 runs for birch pro", [("list_runs", {"model": "birch-pro", "label": "round-2"})]),
    ("round 3 runs for atlas large", [("list_runs", {"model": "atlas-large", "label": "round-3"})]),
    ("round 4 runs for cedar", [("list_runs", {"model": "cedar-mini"})]),
    ("what breaks most in r3?", [("top_rules", {"label": "round-3"})]),
    ("rd 2 runs for dune", [("list_runs", {"model": "dune-code", "label": "round-2"})]),
    ("the 2nd round, top 3 rules", [("top_rules", {"label": "round-2", "limit": 3})]),
    ("last 3 runs in round 2", [("list_runs", {"label": "round-2", "limit": 3})]),
    ("the 5 most common problems for dune code", [("top_rules", {"model": "dune-code", "limit": 5})]),
    # "Nothing extra", "bare", "just the task": the none context.
    ("with nothing extra, which model breaks the fewest rules", [("compare_contexts", {"context": "none"})]),
    ("show me the bare runs on the product grid", [("list_runs", {"task": "product-grid", "context": "none"})]),
    ("runs given no extra context for cedar mini", [("list_runs", {"model": "cedar-mini", "context": "none"})]),
    ("just the task prompt and nothing else: which rules break most?", [("top_rules", {"context": "none"})]),
    # Two contexts together are the one context the data holds for both.
    ("guidelines plus the axe results: which model does best?", [("compare_contexts", {"context": "guidelines-axe"})]),
    ("axe + guidelines: what still breaks?", [("top_rules", {"context": "guidelines-axe"})]),
    ("when the agent gets the guidelines and can run axe itself, how often does it time out?",
     [("compare_contexts", {"context": "guidelines-axe"})]),
    # Two contexts set against each other still pin neither.
    ("checklist vs guidelines for cedar mini", [("compare_contexts", {"model": "cedar-mini"})]),
    # Outcomes filter a run list; "incomplete" is failed and timed out, one call each.
    ("show me every run that failed on the checkout task", [("list_runs", {"task": "checkout-flow", "outcome": "failed"})]),
    ("which runs ran out of time on the nav header", [("list_runs", {"task": "nav-header", "outcome": "timeout"})]),
    ("incomplete runs for atlas small", [("list_runs", {"model": "atlas-small", "outcome": "failed"}),
                                         ("list_runs", {"model": "atlas-small", "outcome": "timeout"})]),
    ("the unfinished runs of birch pro", [("list_runs", {"model": "birch-pro", "outcome": "failed"}),
                                          ("list_runs", {"model": "birch-pro", "outcome": "timeout"})]),
    ("birch pro runs that did not complete", [("list_runs", {"model": "birch-pro", "outcome": "failed"}),
                                              ("list_runs", {"model": "birch-pro", "outcome": "timeout"})]),
    # axe's own "incomplete" results are the docs', not an outcome.
    ("what does incomplete mean in axe", [("search_docs", {"query": "what does incomplete mean in axe", "source": "docs"})]),
])
def test_arguments_as_users_say_them(question, calls):
    assert route(question, TOOLS, FACETS, RULES).calls == calls
