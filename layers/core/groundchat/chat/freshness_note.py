"""A note on an answer whose oldest source is older than `GROUNDCHAT_STALE_SOURCE_DAYS`.

The sources are the passages this answer's tools returned (each with its source's date): the ones
the answer cites when it cites any of them, else all of them. The note is added by the server, not
left to the model: it is streamed after the answer's words and stored with them, so a reopened or
shared conversation shows it too.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

from groundchat.corpus.dates import as_datetime
from groundchat.exchange.frames import Frame, TextFrame
from groundchat.grounding.citations import refs_in_results
from groundchat.grounding.refs import CITATION

if TYPE_CHECKING:
    from groundchat.chat.answer_run import AfterAnswer, Exchange
    from groundchat.json_shapes import JsonObject


def stale_source_note(max_age_days: int, clock: Callable[[], float] = time.time) -> AfterAnswer:
    """An after-answer check for the loop (0 days: never a note)."""

    async def check(exchange: Exchange) -> list[Frame]:
        final = exchange.new_messages[-1] if exchange.new_messages else None
        if max_age_days <= 0 or final is None or final.role != "assistant" or final.tool_calls:
            return []  # no final answer to add a note to
        oldest = oldest_source(exchange.answer.tool_results, exchange.answer_text)
        if oldest is None:
            return []
        age = (datetime.fromtimestamp(clock(), timezone.utc) - oldest[0]).days
        if age <= max_age_days:
            return []
        note = (f"\n\n_Note: the oldest source here is dated {oldest[0]:%Y-%m-%d} ({oldest[1]}), {age} days ago, "
                f"more than the {max_age_days} days this chat treats as current: check that nothing newer applies._")
        final.content += note
        exchange.answer_text += note
        return [TextFrame(text=note)]

    return check


def oldest_source(tool_results: list[JsonObject], answer_text: str) -> tuple[datetime, str] | None:
    """(date, "source section") of the oldest dated passage the answer rests on, or None."""
    passages = refs_in_results(tool_results)
    cited = [passages[ref] for ref in CITATION.findall(answer_text) if ref in passages]
    dated = []
    for passage in cited or passages.values():
        try:
            dated.append((as_datetime(str(passage.get("updated_at"))), f"{passage.get('source')} {passage.get('section')}"))
        except ValueError:  # undated (counted as such in the search's freshness), never a guess
            continue
    return min(dated, key=lambda d: d[0]) if dated else None
