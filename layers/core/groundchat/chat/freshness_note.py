"""A note on an answer whose oldest source of our own is older than `GROUNDCHAT_STALE_SOURCE_DAYS`.

The age rule is for our own docs only. WCAG 2.2 and the Act are normative texts: one in force is
current until it is amended, whatever its age, so citing them never brings an age warning (one that
came on every answer about the Act taught readers to skip it). The answer says the date of the text
it quotes instead, and, where the ingest checked the text's official source (corpus/source_checks.py),
when it last did; it warns only when that source has changed since the copy quoted.

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
from groundchat.corpus.source_checks import SourceCheck
from groundchat.exchange.frames import Frame, TextFrame
from groundchat.grounding.citations import refs_in_results
from groundchat.grounding.refs import CITATION

if TYPE_CHECKING:
    from groundchat.chat.answer_run import AfterAnswer, Exchange
    from groundchat.json_shapes import JsonObject


# The ingest's checks of the normative texts' official sources, read from the index searched.
SourceChecks = Callable[[], dict[str, SourceCheck]]


def stale_source_note(max_age_days: int, clock: Callable[[], float] = time.time,
                      checks: SourceChecks | None = None) -> AfterAnswer:
    """An after-answer check for the loop (0 days: no note of age; the texts' dates are said still)."""

    async def check(exchange: Exchange) -> list[Frame]:
        final = exchange.new_messages[-1] if exchange.new_messages else None
        if final is None or final.role != "assistant" or final.tool_calls:
            return []  # no final answer to add a note to
        note = ""
        texts = normative_dates(exchange.answer.tool_results, exchange.answer_text)
        if texts:
            note += _texts_note(texts, await _read(checks) if checks is not None else {})
        oldest = oldest_source(exchange.answer.tool_results, exchange.answer_text)
        age = (datetime.fromtimestamp(clock(), timezone.utc) - oldest[0]).days if oldest else 0
        if oldest is not None and max_age_days > 0 and age > max_age_days:
            note += (f"\n\n_Note: the oldest source here is dated {oldest[0]:%Y-%m-%d} ({oldest[1]}), {age} days ago, "
                     f"more than the {max_age_days} days this chat treats as current: check that nothing newer applies._")
        if not note:
            return []
        final.content += note
        exchange.answer_text += note
        return [TextFrame(text=note)]

    return check


def _texts_note(texts: dict[str, datetime], checked: dict[str, SourceCheck]) -> str:
    """Each text's date and, where checked, when its official source last was; a warning for a text
    whose official source changed since the copy quoted, and for no other."""
    dated: list[str] = []
    changed: list[str] = []
    for source, day in texts.items():
        check = checked.get(source)
        line = f"{NORMATIVE[source]} as dated {day:%Y-%m-%d}"
        if check is not None:
            line += f", its official source last checked {check.checked_at[:10]}"
            if check.changed:
                changed.append(f"{NORMATIVE[source]} (found on {check.checked_at[:10]})")
        dated.append(line)
    note = f"\n\n_Texts quoted: {'; '.join(dated)}. A text in force stays current until it is amended._"
    if changed:
        note += (f"\n\n_Note: the official source has changed since the copy quoted here: {'; '.join(changed)}. "
                 "Check the current text before relying on this answer._")
    return note


async def _read(checks: SourceChecks) -> dict[str, SourceCheck]:
    """The checks, read off the event loop (an index's metadata); none when they cannot be read."""
    import asyncio
    import logging

    try:
        return await asyncio.to_thread(checks)
    except Exception as exc:  # the texts' dates are still said; a lost check is not an outage
        logging.getLogger("groundchat.chat").warning("source checks unavailable: %s: %s", type(exc).__name__, exc)
        return {}


# The normative texts, by source, as an answer names them: no age rule applies to them.
NORMATIVE = {"wcag22": "WCAG 2.2", "eaa": "Directive (EU) 2019/882 (the European Accessibility Act)"}


def _rested_on(tool_results: list[JsonObject], answer_text: str) -> list[JsonObject]:
    """The passages the answer cites, or every returned one when it cites none."""
    passages = refs_in_results(tool_results)
    cited = [passages[ref] for ref in CITATION.findall(answer_text) if ref in passages]
    return cited or list(passages.values())


def normative_dates(tool_results: list[JsonObject], answer_text: str) -> dict[str, datetime]:
    """Each normative text the answer rests on, with the latest date among its passages."""
    out: dict[str, datetime] = {}
    for passage in _rested_on(tool_results, answer_text):
        source = str(passage.get("source"))
        if source not in NORMATIVE:
            continue
        try:
            day = as_datetime(str(passage.get("updated_at")))
        except ValueError:
            continue
        out[source] = max(out.get(source, day), day)
    return out


def oldest_source(tool_results: list[JsonObject], answer_text: str) -> tuple[datetime, str] | None:
    """(date, "source section") of the oldest dated passage of our own the answer rests on, or None."""
    dated: list[tuple[datetime, str]] = []
    for passage in _rested_on(tool_results, answer_text):
        if passage.get("source") in NORMATIVE:
            continue
        try:
            dated.append((as_datetime(str(passage.get("updated_at"))), f"{passage.get('source')} {passage.get('section')}"))
        except ValueError:  # undated (counted as such in the search's freshness), never a guess
            continue
    return min(dated, key=lambda d: d[0]) if dated else None
