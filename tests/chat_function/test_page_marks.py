"""The checks' marks on an answer's words, drawn by the one renderer for live, reopened and shared
answers: a figure no tool returned is marked and says so in words (a link to a note, not colour
alone); a citation whose passage reads as weak support for its sentence carries "weak support"; a
citations frame without `support` (answers stored before it existed) changes nothing."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import TEST_TOOLS
from tests.chat_function.test_page_browser import CHROMIUM, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

GRANTS = {"alice": [CHAT_USE, RUNS_READ]}


def marks(locator) -> dict:
    """What the reader sees: the marked figures, their flags, and the note they lead to."""
    answer = locator
    return {
        "figures": answer.locator(".body mark.figure-unverified").all_inner_texts(),
        "flags": answer.locator(".body a.figure-flag").all_inner_texts(),
        "note": answer.locator(".figures-note").inner_text() if answer.locator(".figures-note").count() else None,
    }


def test_figures_no_tool_returned_are_marked_live_reopened_and_shared(browser, served):
    model = ScriptedModel([
        Step(tool_calls=[("compare_contexts", {"context": "full"})]),
        # 3.5 came from the tool; 42% and $1,250 did not (and 3.5 inside 13.5 is another figure).
        Step(text="Full context: 3.5 violations a run, **42%** fewer, at $1,250 in total; 13.5 elsewhere."),
    ])
    env, url = served(model, grants=GRANTS, tools=TEST_TOOLS)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Which context is best?")
    live = marks(page.locator(".msg.assistant"))
    assert live["figures"] == ["42%", "$1,250", "13.5"]
    assert live["flags"] == ["unverified figure"] * 3
    assert live["note"] == ("Unverified figures: no tool returned 42%, $1,250, 13.5 in this answer. "
                            "Check them against the results above before relying on them.")
    # The flag leads to the note, and the mark is not told by colour alone: it has a dashed border.
    href = page.locator(".body a.figure-flag").first.get_attribute("href")
    assert page.locator(href).inner_text().startswith("Unverified figures:")
    assert page.eval_on_selector(".body mark.figure-unverified", "m => getComputedStyle(m).borderBottomStyle") == "dashed"
    assert "3.5 violations" in page.inner_text(".msg.assistant .body")
    page.keyboard.press("Tab")  # the flag is a link: reachable by keyboard, like a citation mark
    page.click("#new")
    page.click("#past li .entry button")
    page.wait_for_selector(".msg.assistant .figures-note")
    assert marks(page.locator(".msg.assistant")) == live
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden]) #share-link")
    reader = browser.new_page()
    reader.goto(url + page.get_attribute("#share-link", "href"))
    reader.wait_for_selector(".msg.assistant .figures-note")
    assert marks(reader.locator(".msg.assistant")) == live


CITED = ("Text needs a contrast of 4.5:1 [bbbb2222]. Large text needs less [bbbb2222]. "
         "Focus must be visible [cccc3333].")
SOURCES = [{"n": 1, "ref": "bbbb2222", "status": "verified", "source": "wcag22", "section": "1.4.3", "title": "Contrast",
            "url": "https://www.w3.org/TR/WCAG22/#contrast-minimum"},
           {"n": 2, "ref": "cccc3333", "status": "verified", "source": "wcag22", "section": "2.4.7", "title": "Focus Visible",
            "url": "https://www.w3.org/TR/WCAG22/#focus-visible"}]
SUPPORT = [{"ref": "bbbb2222", "sentence": "Text needs a contrast of 4.5:1 [bbbb2222].", "score": 0.81, "verdict": "supported"},
           {"ref": "bbbb2222", "sentence": "Large text needs less [bbbb2222].", "score": 0.22, "verdict": "weak"},
           {"ref": "cccc3333", "sentence": "Focus must be visible [cccc3333].", "score": 0.77, "verdict": "supported"}]

DRAW = """([text, citations, stored]) => {
  const root = document.body.appendChild(document.createElement("div"));
  root.id = "drawn";
  const t = new window.GroundchatTranscript.Transcript(root);
  if (stored) {
    t.stored([{role: "user", content: "q"}, {role: "assistant", content: text, annotations: {citations}}]);
  } else {
    t.frame("text", {text});
    t.frame("citations", citations);
    t.frame("done", {reason: "complete", run_id: "r1", cost: "0", cost_text: "$0.00"});
  }
  const a = root.querySelector(".msg.assistant");
  return {
    text: a.querySelector(".body").textContent,
    weak: [...a.querySelectorAll(".body .cite-weak")].map((w) => [w.previousSibling.previousSibling.textContent, w.getAttribute("href")]),
    notes: [...a.querySelectorAll(".sources li")].map((li) => [li.id, [...li.querySelectorAll(".weak-note")].map((n) => n.innerText)]),
  };
}"""


@pytest.mark.parametrize("stored", [False, True], ids=["live", "stored"])
def test_a_weak_verdict_marks_its_citation_and_no_support_key_changes_nothing(browser, served, stored):
    env, url = served(ScriptedModel([Step(text="unused")]), grants=GRANTS)
    page = browser.new_page()
    page.goto(f"{url}/chat")
    base = {"sources": SOURCES, "unverified": [], "cited": 2, "verified": 2, "unverified_numbers": []}
    with_support = page.evaluate(DRAW, [CITED, {**base, "support": SUPPORT}, stored])
    page.evaluate("document.getElementById('drawn').remove()")
    without = page.evaluate(DRAW, [CITED, base, stored])
    # Any weak verdict for a ref marks that ref's citations, said in words and leading to the source.
    assert [w[0] for w in with_support["weak"]] == ["[source 1]", "[source 1]"]
    assert all(w[1].endswith("-source-1") for w in with_support["weak"])
    assert with_support["notes"][0][1] == [
        "Weak support: this passage may not say all of “Large text needs less [bbbb2222].”. Read it before relying on the sentence."]
    assert with_support["notes"][1][1] == []
    assert "[source 1] weak support" in with_support["text"] and "[source 2] weak support" not in with_support["text"]
    # Without the key: the same text and sources as before support existed, and no mark at all.
    assert without["weak"] == [] and all(notes == [] for _, notes in without["notes"])
    assert without["text"] == with_support["text"].replace(" weak support", "")


@pytest.mark.parametrize("stored", [False, True], ids=["live", "stored"])
def test_an_answer_whose_support_was_not_checked_says_so_under_its_sources(browser, served, stored):
    env, url = served(ScriptedModel([Step(text="unused")]), grants=GRANTS)
    page = browser.new_page()
    page.goto(f"{url}/chat")
    unchecked = {"sources": SOURCES, "unverified": [], "cited": 2, "verified": 2, "unverified_numbers": [], "support": [],
                 "support_state": "unchecked",
                 "support_note": "the citation-support model could not run here, so no citation was checked"}
    page.evaluate(DRAW, [CITED, unchecked, stored])
    assert page.locator("#drawn .support-unchecked").inner_text() == (
        "Support not checked: the citation-support model could not run here, so no citation was checked. "
        "Read the sources before relying on a sentence.")
    page.evaluate("document.getElementById('drawn').remove()")
    page.evaluate(DRAW, [CITED, {**unchecked, "support_state": "checked", "support_note": None}, stored])
    assert page.locator("#drawn .support-unchecked").count() == 0
