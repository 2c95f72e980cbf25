"""An answer whose oldest source is older than GROUNDCHAT_STALE_SOURCE_DAYS says so, in the words
streamed and in the words stored; the sources are the cited passages when any are cited."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import BaseModel

from groundchat.auth.callers import DOCS_READ, Caller
from groundchat.chat.freshness_note import stale_source_note
from groundchat.chat.loop import run_exchange
from groundchat.grounding.citations import citation_check
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()
EXCERPTS = [
    {"ref": "aaaa1111", "source": "eaa", "section": "Article 4", "title": "t", "url": "u", "text": "x",
     "updated_at": "2019-06-07T00:00:00Z"},
    {"ref": "bbbb2222", "source": "wcag22", "section": "1.4.3", "title": "t", "url": "u", "text": "y",
     "updated_at": "2024-12-12T00:00:00Z"},
    {"ref": "cccc3333", "source": "docs", "section": "a.md", "title": "t", "url": "u", "text": "z", "updated_at": None},
    {"ref": "dddd4444", "source": "docs", "section": "b.md", "title": "t", "url": "u", "text": "w",
     "updated_at": "2020-01-01T00:00:00Z"},
]


class Query(BaseModel):
    query: str


async def fake_search(ctx, args):
    return {"outcome": "hit", "excerpts": EXCERPTS, "freshness": {"oldest_updated_at": "2019-06-07T00:00:00Z", "undated": 1}}


async def allow(permission, caller):
    return True


async def answer(text: str, days: int, checks=None):
    model = ScriptedModel([Step(tool_calls=[("search_docs", {"query": "q"})]), Step(text=text)])
    registry = ToolRegistry([Tool(name="search_docs", grounding="text", drawer="excerpts", offline_template="excerpts", description="search", input_model=Query, permission=DOCS_READ,
                                  handler=fake_search)], allow)
    run = await kept_run(model, registry, system="sys", question="What does the law say?",
                         checks=[citation_check, stale_source_note(days, clock=lambda: NOW, checks=checks)])
    frames = [f async for f in run_exchange(run)]
    return frames, run.committed[0]


async def test_an_old_cited_source_of_our_own_gets_a_note_streamed_and_stored():
    frames, ex = await answer("Runs are graded by axe [dddd4444].", 1095)
    notes = [f.text for f in frames if f.type == "text" and "Note:" in f.text]
    assert notes == ["\n\n_Note: the oldest source here is dated 2020-01-01 (docs b.md), 2526 days ago, more than "
                     "the 1095 days this chat treats as current: check that nothing newer applies._"]
    assert [f.type for f in frames][-3:] == ["citations", "text", "done"]  # after the checks, before done
    assert ex.new_messages[-1].content == "Runs are graded by axe [dddd4444]." + notes[0]


async def test_a_law_in_force_is_never_stale_for_its_age_and_its_date_is_said():
    frames, ex = await answer("Economic operators must comply [aaaa1111].", 1095)
    notes = [f.text for f in frames if f.type == "text" and f.text.startswith("\n\n_")]
    assert notes == ["\n\n_Texts quoted: Directive (EU) 2019/882 (the European Accessibility Act) as dated 2019-06-07. "
                     "A text in force stays current until it is amended._"]
    assert "Note:" not in ex.new_messages[-1].content


async def test_only_the_cited_sources_count_when_the_answer_cites_any():
    frames, ex = await answer("Text needs 4.5:1 [bbbb2222].", 1095)  # the old excerpts were returned, not cited
    assert not any("Note:" in f.text for f in frames if f.type == "text")
    assert ex.new_messages[-1].content == ("Text needs 4.5:1 [bbbb2222].\n\n_Texts quoted: WCAG 2.2 as dated 2024-12-12. "
                                           "A text in force stays current until it is amended._")


async def test_without_citations_every_returned_dated_source_counts_and_undated_are_never_guessed():
    frames, _ = await answer("Here is what I found.", 1095)
    assert any("dated 2020-01-01 (docs b.md)" in f.text for f in frames if f.type == "text")
    frames, _ = await answer("Here is what I found.", 3000)  # 2526 days is within 3000
    assert not any("Note:" in f.text for f in frames if f.type == "text")


@pytest.mark.parametrize("days", [0])
async def test_zero_days_turns_the_note_off(days):
    frames, _ = await answer("Economic operators must comply [aaaa1111].", days)
    assert not any("Note:" in f.text for f in frames if f.type == "text")


def test_the_setting_is_read_from_the_environment(monkeypatch):
    from groundchat.config import get_settings, reset_settings_cache

    monkeypatch.setenv("GROUNDCHAT_STALE_SOURCE_DAYS", "30")
    reset_settings_cache()
    assert get_settings().stale_source_days == 30


# The normative texts' official sources, as the ingest last checked them (corpus/source_checks.py).
def _checked(changed: bool):
    from groundchat.corpus.source_checks import SourceCheck

    return lambda: {"eaa": SourceCheck(checked_at="2026-11-30T02:00:00Z", changed=changed)}


async def test_a_law_whose_official_source_is_unchanged_says_when_it_was_checked_and_warns_of_nothing():
    frames, ex = await answer("Economic operators must comply [aaaa1111].", 1095, checks=_checked(False))
    notes = [f.text for f in frames if f.type == "text" and f.text.startswith("\n\n_")]
    assert notes == ["\n\n_Texts quoted: Directive (EU) 2019/882 (the European Accessibility Act) as dated 2019-06-07, "
                     "its official source last checked 2026-11-30. A text in force stays current until it is amended._"]
    assert "Note:" not in ex.new_messages[-1].content


async def test_a_law_whose_official_source_changed_since_the_copy_quoted_is_warned_of():
    frames, ex = await answer("Economic operators must comply [aaaa1111].", 1095, checks=_checked(True))
    notes = "".join(f.text for f in frames if f.type == "text" and f.text.startswith("\n\n_"))
    assert notes.endswith("\n\n_Note: the official source has changed since the copy quoted here: Directive (EU) "
                          "2019/882 (the European Accessibility Act) (found on 2026-11-30). Check the current text "
                          "before relying on this answer._")
    assert ex.new_messages[-1].content.endswith(notes)
    # However old the text, a source that has not changed brings no warning, and the age rule is off
    # (0 days) without silencing a change.
    frames, _ = await answer("Economic operators must comply [aaaa1111].", 0, checks=_checked(True))
    assert any("has changed since" in f.text for f in frames if f.type == "text")


async def test_checks_that_cannot_be_read_leave_the_texts_dated():
    def unreadable():
        raise OSError("index unreachable")

    frames, _ = await answer("Economic operators must comply [aaaa1111].", 1095, checks=unreadable)
    assert [f.text for f in frames if f.type == "text" and f.text.startswith("\n\n_")] == [
        "\n\n_Texts quoted: Directive (EU) 2019/882 (the European Accessibility Act) as dated 2019-06-07. "
        "A text in force stays current until it is amended._"]
