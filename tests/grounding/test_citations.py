"""Citations are checked against the tool results of the same answer only."""
from __future__ import annotations

from groundchat.grounding.citations import check_citations, citation_check
from groundchat.chat.answer_run import Exchange

EXCERPT = {"ref": "3f9a1b2c", "source": "wcag22", "section": "1.4.3", "title": "1.4.3 Contrast (Minimum)",
           "url": "https://www.w3.org/TR/WCAG22/#contrast-minimum", "text": "..."}
OTHER = {"ref": "0badcafe", "source": "eaa", "section": "Article 4(1)", "title": "Article 4", "url": "https://e/#art_4"}


def _results(*excerpts):
    return [{"id": "t1", "name": "search_docs", "grounding": "text", "result": {"outcome": "hit", "excerpts": list(excerpts)}}]


async def test_real_ref_verified_invented_unverified():
    ex = Exchange(conversation_id="c", run_id="r", question="q")
    ex.answer_text = "Text needs 4.5:1 [3f9a1b2c]; also [3f9a1b2c] again, and [deadbeef]."
    ex.answer.tool_results = _results(EXCERPT)
    frames = await citation_check(ex)
    assert [f.type for f in frames] == ["citations"]
    report = frames[0].data
    assert report["sources"] == [{"n": 1, "ref": "3f9a1b2c", "status": "verified", "source": "wcag22",
                                  "section": "1.4.3", "title": "1.4.3 Contrast (Minimum)",
                                  "url": "https://www.w3.org/TR/WCAG22/#contrast-minimum"}]
    assert report["unverified"] == [{"ref": "deadbeef", "status": "unverified"}]
    assert (report["cited"], report["verified"]) == (2, 1)
    assert ex.annotations["citations"] == report


async def test_a_ref_from_an_earlier_answer_is_not_counted():
    earlier = Exchange(conversation_id="c", run_id="r1", question="q1")
    earlier.answer_text = "See [0badcafe]."
    earlier.answer.tool_results = _results(OTHER)
    assert (await citation_check(earlier))[0].data["verified"] == 1
    later = Exchange(conversation_id="c", run_id="r2", question="q2")
    later.answer_text = "As I said, [0badcafe] and [3f9a1b2c]."
    later.answer.tool_results = _results(EXCERPT)  # this answer's tools did not return 0badcafe
    report = (await citation_check(later))[0].data
    assert [s["ref"] for s in report["sources"]] == ["3f9a1b2c"]
    assert report["unverified"] == [{"ref": "0badcafe", "status": "unverified"}]


def test_numbering_follows_first_mention_and_ignores_non_refs():
    report = check_citations("[0badcafe] then [3f9a1b2c] [3F9A1B2C] [12345] [zzzzzzzz]", _results(EXCERPT, OTHER))
    assert [(s["n"], s["ref"]) for s in report["sources"]] == [(1, "0badcafe"), (2, "3f9a1b2c")]
    assert report["unverified"] == []


def test_no_citations_no_sources():
    assert check_citations("No refs here.", []) == {"sources": [], "unverified": [], "cited": 0, "verified": 0}
