"""Whether a question is the offline answerer's to take up at all: the gate before its router plans.

Two votes, and the corpus itself. The word lists: the benchmark's words, accessibility's and the Act's open it alone, and
offline/router_topics.py adds a site's and a business's questions in everyday words. And, where the
local embedding model is at hand, the question's likeness to questions the chat answers and declines
(offline/topic_neighbours.py), which weighs against the words either way. A question both votes
would decline is declined only when the search finds nothing of the corpus near it
(`near_the_corpus`): a refusal of a real question is worse than a search that finds something.
"""
from __future__ import annotations

import re
from typing import Callable

from groundchat.offline.router_topics import asks_only_a_price, speaks_of_the_texts
from groundchat.search.embedding_models import CosineThresholds, thresholds_in_use

# What opens the gate alone: the benchmark's words, accessibility's and the Act's. A price opens it
# only when the question names nothing else (offline/router_topics.py: "the cheapest flight" is not
# ours). Words of devices and media ("phone", "font", "keyboard", "photos", "website") open it only
# as offline/router_topics.py says: beside another such word or a question about what a site's users
# need; alone they are as often a question about a gaming keyboard or a wedding invitation's font.
DOMAIN = re.compile(
    r"access|a11y|wcag|\beaa\b|directive|\baxe\b|\brules?\b|\bruns?\b|\bmodels?\b|context|agents?|violat|"
    r"benchmark|criteri|contrast|screen ?reader|focus|\balt\b|aria|\bhtml\b|"
    r"\blaw\b|legal|complian|comply|disab|blind|deaf|caption|label|heading|link|button|\bform|grad(?:e|ed|ing)|"
    r"sample|task|round|completion|timed? ?out|fail|\bpass(?:es|ed|ing)?\b|score|european|member states?|products?|services?|"
    r"web ?pages?|"
    r"sign ?language|subtitles?|transcripts?|"
    # the Act's parties and the products and services it names, as people say them
    r"compl(?:y|ies|ied|iance|iant)|manufactur|import|distribut|retailer|resell|economic operators?|"
    r"e-?readers?|e-?books?|\batms?\b|kiosks?|terminals?|\bbanks?\b|"
    r"\bshops?\b|\bweb ?shops?\b|e-?commerce|ticket (?:machines?|kiosks?)|passenger|\b112\b|\bce mark|"
    r"impair|wheelchair|hard of hearing|hearing (?:aids?|loss)|low vision|cognitive|dyslexi|autis",
    re.IGNORECASE,
)

# The likeness margin (offline/topic_neighbours.py, a difference of cosines) that opens the gate to a
# question none of the word lists knows, and the one under which a question the word lists let in is
# declined all the same ("the rules for returning goods in the EU"); and how near (the highest cosine of
# the question's vector to a passage or a question-bank question, search/service.py `nearness`) the
# corpus must come for a question the votes would decline to be searched all the same. All three are on
# the embedding model's cosine scale, so they live with the model (search/embedding_models.json) and
# were chosen on the decision sets for each: every on-topic question of the router's and the read
# retrieval sets kept, most of the off-topic probes declined. For MiniLM, margins 0.06 and -0.02 and
# nearness 0.45: the nearest any of the 266 tune and validate retrieval questions came was 0.456, while
# a question the corpus has nothing near (a recipe, a football score) comes 0.20 to 0.40.


def near_the_corpus(question: str, nearness: Callable[[str], float | None] | None,
                    thresholds: CosineThresholds | None = None) -> bool:
    """Whether the search finds something of the corpus near the question; False when it cannot say."""
    if nearness is None:
        return False
    near = nearness(question)
    return near is not None and near >= (thresholds or thresholds_in_use()).near_the_corpus


def on_topic_words(q: str) -> bool:
    return bool(DOMAIN.search(q)) or asks_only_a_price(q)


def on_topic(q: str, question: str, topic: Callable[[str], float | None] | None,
             thresholds: CosineThresholds | None = None) -> bool:
    """The word lists' vote, weighed where there is one against the question's likeness to what the
    chat answers and declines."""
    words = on_topic_words(q) or speaks_of_the_texts(q)
    margin = topic(question) if topic is not None else None
    if margin is None:
        return words
    t = thresholds or thresholds_in_use()
    return margin > (t.topic_close_margin if words else t.topic_open_margin)


__all__ = ["DOMAIN", "near_the_corpus", "on_topic", "on_topic_words"]
