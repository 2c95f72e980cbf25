"""In a real headless Chromium at a phone's 390 px: the note each history profile's outcome draws, in
words that say what the server really did (left out, or summarised; why it failed), and a failed
answer's card with the failure's class, its sanitised reason and the run id, for every reader.

The history frames are the server's own: each made by `shape_history` under a profile's strategy (with
small token limits, so a short conversation reaches them), then drawn by the page's transcript."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from groundchat.chat.history import HistoryPolicy, shape_history
from groundchat.chat.summarise import Summariser
from groundchat.models.failures import ModelFailure
from groundchat.models.messages import Message, ToolCall, ToolSpec
from groundchat.spending.step_guard import NoSpendGuard
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.test_page_browser import CHROMIUM, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

TOOLS = [ToolSpec(name="t", description="a tool", input_schema={"type": "object", "properties": {}})]
QUESTION = Message(role="user", content="and now?")


def _run(coroutine):
    """A coroutine run to its end on a thread of its own: Playwright's sync API holds this thread's loop."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _exchange(n: int, size: int) -> list[Message]:
    call = ToolCall(id=f"c{n}", name="t", args={"n": n})
    return [Message(role="user", content=f"question {n}"), Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id=f"c{n}", name="t", content="r" * size),
            Message(role="assistant", content=f"answer {n}")]


def _summariser(model: ScriptedModel) -> Summariser:
    return Summariser(model, NoSpendGuard(), None, "c" * 32, "r" * 32, None, "groundchat", 3000)


async def _frames() -> dict[str, dict]:
    """Each outcome's `history` frame as the server makes it."""
    drop = HistoryPolicy("drop-oldest", 3000, name="standard")
    visitor = HistoryPolicy("drop-oldest", 3000, max_exchanges=1, name="visitor-qa")
    summarise = HistoryPolicy("summarise-oldest", 3000, name="long-authoring")
    long_history = _exchange(1, 4000) + _exchange(2, 4000) + _exchange(3, 100)
    near = _exchange(1, 6000)  # about 2,750 tokens of 3,000: sent whole, with a warning
    shaped = {
        "standard-warned": await shape_history(near, QUESTION, "sys", TOOLS, drop),
        "standard-reduced": await shape_history(long_history, QUESTION, "sys", TOOLS, drop),
        "visitor-qa-reduced": await shape_history(_exchange(1, 10) + _exchange(2, 10), QUESTION, "sys", TOOLS, visitor),
        "standard-failed": await shape_history(long_history, Message(role="user", content="q " * 4000), "sys", TOOLS, drop),
        "long-authoring-warned": await shape_history(near, QUESTION, "sys", TOOLS, summarise,
                                                     summariser=_summariser(ScriptedModel([]))),
        "long-authoring-reduced": await shape_history(long_history, QUESTION, "sys", TOOLS, summarise,
                                                      summariser=_summariser(ScriptedModel([Step(text="S: earlier.")]))),
        "long-authoring-failed": await shape_history(long_history, QUESTION, "sys", TOOLS, summarise, summariser=_summariser(
            ScriptedModel([Step(raise_error=ModelFailure("gateway", "HTTP 502"))]))),
    }
    return {name: s.frame().data for name, s in shaped.items()}


EXPECTED = {
    "standard-warned": "This conversation is getting long: soon its oldest exchanges will be left out of what the model is sent"
                       " (history profile “standard”). The conversation itself stays whole.",
    "standard-reduced": "This conversation is long: the model was not sent its oldest exchanges (4 earlier messages), only the later"
                        " ones (history profile “standard”). The conversation itself is kept whole.",
    "visitor-qa-reduced": "This conversation is long: the model was not sent its oldest exchanges (4 earlier messages), only the"
                          " later ones (history profile “visitor-qa”). The conversation itself is kept whole.",
    "standard-failed": "This conversation is too long to answer (history profile “standard”): even with every earlier exchange left"
                       " out, this question with the instructions and tools is more than the model may be sent. Starting a new"
                       " conversation keeps answers complete.",
    "long-authoring-warned": "This conversation is getting long: soon older exchanges will be summarised so the model can still read"
                             " it (history profile “long-authoring”).",
    "long-authoring-reduced": "This conversation is getting long: older exchanges are summarised (8 earlier messages)"
                              " (history profile “long-authoring”).",
    "long-authoring-failed": "This conversation is too long to answer (history profile “long-authoring”): the older exchanges could"
                             " not be summarised. Starting a new conversation keeps answers complete.",
}


def test_each_history_note_says_what_its_profile_really_did_in_words(browser, served, tmp_path):
    frames = _run(_frames())
    # The server's outcomes and reasons these notes are drawn from.
    assert {name: (f["outcome"], f["strategy"], f.get("reason")) for name, f in frames.items()} == {
        "standard-warned": ("warned", "drop-oldest", None), "standard-reduced": ("reduced", "drop-oldest", None),
        "visitor-qa-reduced": ("reduced", "drop-oldest", None), "standard-failed": ("failed", "drop-oldest", "cannot_reduce"),
        "long-authoring-warned": ("warned", "summarise-oldest", None),
        "long-authoring-reduced": ("reduced", "summarise-oldest", None),
        "long-authoring-failed": ("failed", "summarise-oldest", "compaction_failed")}
    env, url = served(ScriptedModel([Step(text="An answer.")]))
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{url}/chat")
    notes = page.evaluate("""(frames) => {
      const { Transcript } = window.GroundchatTranscript;
      const root = document.querySelector("#transcript") || document.body.appendChild(document.createElement("div"));
      const t = new Transcript(root);
      const out = {};
      for (const [name, frame] of Object.entries(frames)) {
        t.question("question for " + name);
        const a = t.frame("history", frame);
        out[name] = a.querySelector(".history-note") ? a.querySelector(".history-note").textContent : null;
        t.frame("text", {text: "An answer."});
        t.frame("done", {reason: "complete", run_id: "r", cost: "0", cost_text: "$0.00"});
      }
      return out;
    }""", frames)
    assert notes == EXPECTED
    # No code of the server's reaches the reader: no snake_case reason, no dotted code.
    assert not [n for n in notes.values() if re.search(r"\b[a-z]+_[a-z_]+\b|history\.\w+", n)]
    widths = page.evaluate("[...document.querySelectorAll('.history-note')].map(n => n.getBoundingClientRect().right)")
    assert len(widths) == 7 and max(widths) <= 390
    page.screenshot(path=str(tmp_path / "history-notes-390.png"), full_page=True)


@pytest.mark.parametrize("width", [320, 390, 1280])
def test_a_failed_answer_shows_its_class_sanitised_reason_and_run_to_its_reader(browser, served, tmp_path, width):
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    failure = ModelFailure("gateway", f"HTTP 502 from the gateway: upstream connect error (Authorization: Bearer {secret})")
    env, url = served(ScriptedModel([Step(raise_error=failure)]),
                      grants={"vera": ["chat.use", "runs.read"]})  # no traces.read: an ordinary reader
    page = browser.new_page(viewport={"width": width, "height": 844})
    sign_in(page, url, env, "vera")
    page.fill("#question", "Which context level is best?")
    page.click("#ask button[type=submit]")
    page.wait_for_selector(".msg.assistant[data-done='error'] .error-card", timeout=20_000)
    card = page.locator(".msg.assistant .error-card")
    text = card.inner_text()
    facts = dict(zip(card.locator("dt").all_inner_texts(), card.locator("dd").all_inner_texts()))
    assert card.locator(".error-message").inner_text() == "The model gateway returned an error."
    assert facts["Class"] == "gateway"
    assert facts["Reason"].startswith("HTTP 502 from the gateway: upstream connect error") and secret not in text
    assert card.get_attribute("role") == "alert"
    # The run the card names is this answer's: its trace holds the same class and reason.
    trace = _run(env.services.traces.get(facts["Run"], "vera"))
    assert trace is not None and trace["failure"]["class"] == "gateway"
    assert trace["failure"]["reason"].startswith(facts["Reason"].rstrip("…"))
    assert card.evaluate("c => c.getBoundingClientRect().right") <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing scrolls sideways
    page.screenshot(path=str(tmp_path / f"failed-answer-{width}.png"), full_page=True)


def test_details_say_past_conversations_were_not_searched_and_why(browser, served):
    env, url = served(ScriptedModel([Step(text="An answer.")]), grants={"vera": ["chat.use", "runs.read"]})
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sign_in(page, url, env, "vera")
    page.fill("#question", "Which context level is best?")
    page.click("#ask button[type=submit]")
    page.wait_for_selector(".msg.assistant[data-done='complete'] .answer-details", timeout=20_000)
    page.click(".answer-details summary")
    details = page.locator(".answer-details .facts").first
    facts = dict(zip(details.locator("dt").all_inner_texts(), details.locator("dd").all_inner_texts()))
    assert facts["Past conversations"] == "not searched: this account may not search its past conversations (recall.read)"
    # Reopened, the stored answer says the same.
    listed = page.evaluate("fetch('/api/conversations', {headers: {authorization: 'Bearer ' + "
                           "sessionStorage.getItem('groundchat-token')}}).then(r => r.json())")
    page.goto(f"{url}/chat?conversation={listed['conversations'][0]['conversation_id']}")
    page.wait_for_selector(".msg.assistant .answer-details", timeout=10_000)
    page.click(".answer-details summary")
    again = page.locator(".answer-details .facts").first
    assert json.dumps(dict(zip(again.locator("dt").all_inner_texts(), again.locator("dd").all_inner_texts()))) == json.dumps(facts)
