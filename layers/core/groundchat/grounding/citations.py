"""Checking the refs an answer cites against the passages the tools returned in that same answer.

A ref is verified only if a tool result of this exchange carried it: a ref from an earlier answer,
or one the model made up, is `unverified`, and the page shows it as such.
"""
from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Iterable, Protocol

from groundchat.exchange.frames import CitationsFrame
from groundchat.grounding.refs import CITATION
from groundchat.grounding.result_walk import result_nodes

if TYPE_CHECKING:
    from groundchat.exchange.state import AnswerState
    from groundchat.json_shapes import JsonObject



def refs_in_results(tool_results: Iterable[JsonObject]) -> dict[str, JsonObject]:
    """Every passage carrying a `ref` anywhere in the tool results, by ref (first one wins)."""
    found: dict[str, JsonObject] = {}
    for _, value in result_nodes(tool_results):
        if isinstance(value, dict):
            ref = value.get("ref")
            if isinstance(ref, str) and re.fullmatch(r"[0-9a-f]{8}", ref):
                found.setdefault(ref, value)
    return found


def check_citations(answer_text: str, tool_results: Iterable[JsonObject]) -> JsonObject:
    returned = refs_in_results(tool_results)
    sources: list[JsonObject] = []
    unverified: list[str] = []
    numbered: dict[str, int] = {}
    for ref in CITATION.findall(answer_text):
        if ref in numbered or ref in unverified:
            continue
        passage = returned.get(ref)
        if passage is None:
            unverified.append(ref)
            continue
        numbered[ref] = len(sources) + 1
        sources.append({
            "n": numbered[ref], "ref": ref, "status": "verified",
            **{k: passage.get(k) for k in ("source", "section", "title", "url")},
        })
    return {
        "sources": [*sources],
        "unverified": [{"ref": r, "status": "unverified"} for r in unverified],
        "cited": len(sources) + len(unverified),
        "verified": len(sources),
    }


class AnsweredExchange(Protocol):
    """What the checks after an answer read of it (the chat's `Exchange`)."""

    question: str
    answer_text: str
    answer: AnswerState


async def citation_check(exchange: AnsweredExchange) -> list[CitationsFrame]:
    """An after-answer check (`AnswerRun.checks`, chat/answer_run.py): the refs the answer cites, the
    figures in its words that no tool of this answer returned (see `text_numbers`), and how well
    each cited passage supports the sentence citing it (see `support`)."""
    from groundchat.grounding.citation_support import SupportCheck, check_support
    from groundchat.grounding.text_numbers import unverified_numbers

    results = exchange.answer.tool_results
    report = check_citations(exchange.answer_text, results)
    report["unverified_numbers"] = [*unverified_numbers(exchange.answer_text, exchange.question, results)]
    checked = SupportCheck("nothing-to-check", [])
    if report["verified"]:
        # The embedding model is CPU work: off the event loop that streams other answers.
        checked = await asyncio.to_thread(check_support, exchange.answer_text, refs_in_results(results))
    report.update(support=[*checked.entries], support_state=checked.state, support_note=checked.note)
    exchange.answer.annotations.citations = report
    return [CitationsFrame.model_validate(report)]
