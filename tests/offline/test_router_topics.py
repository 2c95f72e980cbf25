"""Questions about someone's own site or business reach the texts; the benchmark's stay with its data.

The users' words retrieval sets are all questions the texts answer, so the share of them the router
sends to search_docs is a measure of the offline answerer before any search runs.
"""
from __future__ import annotations

import json

import pytest

from groundchat.offline.router import REFUSAL, route
from groundchat_cli.router_eval import TOOLS
from tests.offline.test_offline_router import FACETS, REPO_ROOT, RULES


def docs_share(name: str) -> float:
    rows = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / name).read_text().splitlines() if line.strip()]
    routed = [any(tool == "search_docs" for tool, _ in route(r["q"], TOOLS, FACETS, RULES).calls) for r in rows]
    return sum(routed) / len(rows)


@pytest.mark.parametrize(("question", "source"), [
    # Refused before as off-topic: no text or party named, only what the site does.
    ("how many flashes per second is too many before it could trigger seizures?", None),
    ("does text have to scale up to 200% without anything breaking?", None),
    ("do users have to re-enter info they already gave earlier in the same process", None),
    # A task's name used as an everyday noun ("modal", "checkout") is the site's, not the runs'.
    ("after closing a modal, where is keyboard focus supposed to go?", None),
    ("the checkout page times out too fast for screen reader users", None),
    ("I'm blind and a web shop's checkout is impossible with my screen reader. Can I take them to court myself?", None),
    # "More context" and "good enough" are a screen reader's and an alt text's here.
    ("can I put an aria-label with the full article title on our 'read more' links, so the screen reader gets more "
     "context?", None),
    ('is alt="image" or alt="photo" good enough', None),
    # Cost is the Act's when it weighs a business's burden; a price on a page is the page's. A text is
    # chosen only where the question names it (or the Act's own words); otherwise both are searched.
    ("We want to calculate whether the cost of accessibility is too high compared with our turnover.", None),
    ("our wide price comparison table needs horizontal scrolling on a phone, is that a reflow fail or allowed?", None),
    ("why are microenterprises treated more lightly?", "eaa"),  # "microenterprise" is the Act's own word
])
def test_a_question_about_a_site_or_a_business_searches_the_texts(question, source):
    calls = route(question, TOOLS, FACETS, RULES).calls
    assert calls == [("search_docs", {"query": question, **({"source": source} if source else {})})]


@pytest.mark.parametrize(("question", "calls"), [
    ("show me the checkout timeouts", [("list_runs", {"task": "checkout-flow", "outcome": "timeout"})]),
    ("how many checkout runs timed out?", [("compare_contexts", {"task": "checkout-flow"})]),
    ("Which model is cheapest?", [("compare_contexts", {})]),
    ("on the modal, does more context make runs pricier?", [("compare_contexts", {"task": "modal-dialog"})]),
    ("what goes wrong on the checkout flow?", [("top_rules", {"task": "checkout-flow"})]),
])
def test_the_benchmarks_questions_stay_with_its_data(question, calls):
    assert route(question, TOOLS, FACETS, RULES).calls == calls


@pytest.mark.parametrize("question", [
    # Devices, documents and pictures named for themselves, not for anyone's access to them.
    "is a mechanical keyboard worth it?", "can you suggest a good font pairing for my logo?",
    "how do I convert a word file to pdf?", "how can I speed up my android phone?", "recommend a gaming mouse",
    "how do I make my instagram photos look better?", "how do I back up my phone to the cloud?",
    "help me write a cover letter for a marketing job", "translate this text into French", "is coffee bad for my memory?",
    "what music is good for a road trip?", "what's a good name for my dog?", "tips for a job interview",
])
def test_one_everyday_word_the_texts_also_use_does_not_make_a_question_theirs(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == REFUSAL


@pytest.mark.parametrize("question", [
    "our new phone only unlocks with a face scan. do we need another way in?",
    "what should go in the page title for accesibility, does it even matter?",
    "do English brand names on a Dutch page need their own language marked?",
    "is our colour scheme ok?", "do forms need labels?", "what does it cost?", "which is cheapest?", "what fails most?",
])
def test_the_same_words_about_a_sites_users_or_the_benchmark_stay_on_topic(question):
    assert route(question, TOOLS, FACETS, RULES).calls != []


@pytest.mark.parametrize("question", ["whats the cheapest flight to london", "what's the price of bitcoin today?",
                                      "how do I make a website for my bakery cheaply?", "how much does a tesla cost?"])
def test_a_price_of_something_else_is_not_the_benchmarks_cost(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert plan.calls == [] and plan.refusal == REFUSAL


@pytest.mark.parametrize("question", ["What does it cost?", "how much did we spend?", "which one is the cheapest?",
                                      "what does the cheapest option cost", "is it expensive?"])
def test_a_price_that_names_nothing_else_is_the_benchmarks(question):
    assert route(question, TOOLS, FACETS, RULES).calls == [("compare_contexts", {})]


def test_the_users_words_sets_reach_the_texts():
    # The decision sets, read: before this rule 0.802, 0.794 and 0.785 of them reached search_docs;
    # the rest were refused as off-topic or sent to the runs' data.
    assert docs_share("users_words_tune.jsonl") == 1.0
    assert docs_share("users_words_validate.jsonl") >= 0.98
    assert docs_share("users_words_second_tune.jsonl") >= 0.98


@pytest.mark.parametrize("question", [
    "is one declaration of conformity per phone model enough?",
    "our newest TV model has no audio description option. is that allowed?",
    "our call centre agents have no idea about screen readers. do we need to train them?",
])
def test_a_products_model_and_people_who_answer_customers_are_not_the_benchmarks(question):
    calls = route(question, TOOLS, FACETS, RULES).calls
    assert [name for name, _ in calls] == ["search_docs"]


@pytest.mark.parametrize(("question", "tool"), [
    ("which model is cheapest?", "compare_contexts"), ("how do the agents do on the checkout?", "compare_contexts"),
])
def test_the_benchmarks_models_and_agents_stay_its_own(question, tool):
    assert route(question, TOOLS, FACETS, RULES).calls[0][0] == tool


def test_a_question_the_votes_decline_near_the_texts_searches_them_even_when_it_names_a_task():
    # Another law's question that names a task's everyday noun ("signup"): the votes decline it; the
    # corpus lies near it, so the texts are searched, never the benchmark's figures for signup-form.
    from groundchat.benchmark.axe_rules import rule_ids
    from groundchat.offline.router import REFUSAL, route
    from groundchat_cli import sample
    from groundchat.search.embedding_models import thresholds_in_use
    from groundchat_cli.router_eval import TOOLS

    question = "Which privacy law rules cover a newsletter signup box?"
    facets, rules = sample.sample_names(), set(rule_ids())
    declined = lambda q: -0.5  # noqa: E731 - the likeness votes against
    # Near and far on the configured model's cosine scale: MiniLM's "near" is 0.45, bge's 0.67.
    just_near = thresholds_in_use().near_the_corpus + 0.01
    near = route(question, TOOLS, facets, rules, topic=declined, nearness=lambda q: just_near)
    assert near.calls == [("search_docs", {"query": question})]
    # Far from the texts, a task's name is what it has: the benchmark's; with no name at all, declined.
    far = route(question, TOOLS, facets, rules, topic=declined, nearness=lambda q: 0.2)
    assert far.calls == [("compare_contexts", {"task": "signup-form"})]
    nothing = route("Which privacy law rules cover a newsletter box?", TOOLS, facets, rules, topic=declined,
                    nearness=lambda q: 0.2)
    assert (nothing.calls, nothing.refusal) == ([], REFUSAL)
    # A model's name still makes it the benchmark's, whatever the votes.
    assert route("birch-pro on the signup form?", TOOLS, facets, rules, topic=declined).calls[0][0] == "compare_contexts"
