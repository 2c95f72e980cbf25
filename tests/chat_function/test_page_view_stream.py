"""A view drawn while its spec streams in, in a real headless Chromium at a phone's width and a
desktop's: a recorded gateway stream writes `show_view`'s input in pieces and holds between them
(the test says when it goes on), so what the page shows mid-stream is a state the test looks at,
not a race. Each part appears once it is whole enough and passes the checks, before the stream
ends; a part whose figure no tool returned is never drawn; a refused view goes, an accepted one stays."""
from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ, VIEWS_SHOW
from groundchat.models.openai_compat import OpenAICompatModel
from groundchat.models.retry import NO_RETRY
from groundchat.tools.view_tool import show_view
from tests.chat_function.test_page_browser import CHROMIUM, browser, served, sign_in  # noqa: F401
from tests.models.provider_recordings import chunk, sse
from tests.models.tool_input_recordings import OPENAI_ANSWER, OPENAI_FIGURES_CALL, VIEW, figures_tool

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

GRANTS = {"vera": [CHAT_USE, RUNS_READ, VIEWS_SHOW]}
WIDTHS = [390, 1280]
HOLD = b"hold"  # in a recording: wait here until the test lets the stream go on


def view_call(pieces: list[str]) -> list[bytes]:
    """The view's call as a gateway streams it, `pieces` of its arguments at a time, a hold after each
    piece but the last, and one before the finish."""
    events = [sse(chunk({"tool_calls": [{"index": 0, "id": "call_view01", "type": "function",
                                         "function": {"name": "show_view", "arguments": ""}}]})).removesuffix(b"data: [DONE]\n\n")]
    for piece in pieces:
        events.append(f"data: {json.dumps(chunk({'tool_calls': [{'index': 0, 'function': {'arguments': piece}}]}))}\n\n".encode())
        events.append(HOLD)
    events.append(sse(chunk({}, finish="tool_calls"), chunk(None, usage={"prompt_tokens": 1500, "completion_tokens": 160})))
    return events


class HeldGateway:
    """An OpenAI-compatible gateway answering from recordings, in order; a recording given as a list of
    events is streamed event by event and waits at each HOLD until `go_on()`."""

    def __init__(self, *responses: bytes | list[bytes]) -> None:
        self.responses = list(responses)
        self.released = threading.Semaphore(0)
        self.transport = httpx.MockTransport(self._answer)

    def go_on(self) -> None:
        self.released.release()

    async def _answer(self, request: httpx.Request) -> httpx.Response:
        response = self.responses.pop(0)
        headers = {"content-type": "text/event-stream"}
        if isinstance(response, bytes):
            return httpx.Response(200, content=response, headers=headers)
        return httpx.Response(200, content=self._held(response), headers=headers)

    async def _held(self, events: list[bytes]):
        for event in events:
            if event == HOLD:
                while not self.released.acquire(blocking=False):
                    await asyncio.sleep(0.02)
            else:
                yield event


def split(text: str, *marks: str) -> list[str]:
    """`text` cut just after each mark (each found after the one before)."""
    pieces, at = [], 0
    for mark in marks:
        end = text.index(mark, at) + len(mark)
        pieces.append(text[at:end])
        at = end
    return [*pieces, text[at:]] if at < len(text) else pieces


def start(browser, served, width: int, view_events: list[bytes]):
    gateway = HeldGateway(OPENAI_FIGURES_CALL, view_events, OPENAI_ANSWER)
    model = OpenAICompatModel("gpt-4.1-mini", base_url="https://gateway.example/v1", api_key="sk-test-0123456789abcdef",
                              transport=gateway.transport, retry=NO_RETRY, price_id="openai:gpt-4.1-mini")
    env, url = served(model, grants=GRANTS, tools=[figures_tool(), show_view])
    page = browser.new_page(viewport={"width": width, "height": 900})
    sign_in(page, url, env, "vera")
    # Every state of the answer's views, noted as the page changes, to say what was ever drawn.
    page.evaluate("""() => {
      window.viewStates = [];
      new MutationObserver(() => {
        const a = document.querySelector(".msg.assistant");
        if (!a) return;
        const drafts = [...a.querySelectorAll(".view-draft")];
        window.viewStates.push({done: a.dataset.done || null, drafts: drafts.map((d) => d.innerText)});
      }).observe(document.getElementById("transcript"), {subtree: true, childList: true, characterData: true, attributes: true});
    }""")
    page.fill("#question", "Compare the context levels")
    page.click("#ask button[type=submit]")
    return page, gateway


def draft(page) -> dict:
    return page.evaluate("""() => {
      const d = document.querySelector(".msg.assistant .view-draft");
      if (!d) return null;
      return {title: d.querySelector("h2").innerText, stats: d.querySelectorAll(".view-stats dd").length,
              bars: d.querySelectorAll(".view-bars tbody tr").length, tables: d.querySelectorAll(":scope > div table, :scope > table").length,
              rows: [...d.querySelectorAll(".view-table")].filter((t) => !t.closest(".view-bars")).map((t) => t.querySelectorAll("tbody tr").length),
              busy: d.getAttribute("aria-busy"), done: document.querySelector(".msg.assistant").dataset.done || null};
    }""")


def wait_for_draft(page, condition: str) -> dict:
    page.wait_for_function(f"() => {{ const d = document.querySelector('.msg.assistant .view-draft'); return d && ({condition}); }}",
                           timeout=15_000)
    return draft(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_an_accepted_view_is_drawn_part_by_part_before_the_stream_ends_and_stays(browser, served, width, tmp_path):
    text = json.dumps(VIEW)
    pieces = split(text, '"Violations by context level", ', '"unit": "runs"}]}, ', '"value": 7.5}, ', '"value": 3.25}]}, ',
                   '["none", 50], ')
    page, gateway = start(browser, served, width, view_call(pieces))

    shown = wait_for_draft(page, "d.querySelector('h2').innerText.length > 0")
    assert shown["title"] == VIEW["title"] and (shown["stats"], shown["bars"], shown["rows"]) == (0, 0, [])
    assert shown["done"] is None and shown["busy"] == "true"
    gateway.go_on()
    shown = wait_for_draft(page, "d.querySelectorAll('.view-stats dd').length === 1")
    assert shown["bars"] == 0 and shown["done"] is None
    assert page.inner_text(".view-draft .view-stats") == "Runs compared\n12 runs"
    gateway.go_on()
    shown = wait_for_draft(page, "d.querySelectorAll('.view-bars tbody tr').length === 1")  # the first bar, whole
    gateway.go_on()
    shown = wait_for_draft(page, "d.querySelectorAll('.view-bars tbody tr').length === 2")
    assert shown["rows"] == [] and shown["done"] is None
    gateway.go_on()
    shown = wait_for_draft(page, "[...d.querySelectorAll('.view-table')].some((t) => !t.closest('.view-bars'))")
    assert shown["rows"] == [1] and shown["done"] is None  # the table, row by row
    gateway.go_on()
    shown = wait_for_draft(page, "[...d.querySelectorAll('.view-table')].filter((t) => !t.closest('.view-bars')).some((t) => t.querySelectorAll('tbody tr').length === 2)")
    assert shown["done"] is None  # every part is drawn, and the call has not even finished
    page.screenshot(path=str(tmp_path / f"view-streaming-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing pushes the page sideways
    gateway.go_on()

    page.wait_for_function("() => document.querySelector(\".msg.assistant[data-done='complete']\")", timeout=15_000)
    assert page.locator(".msg.assistant .view-draft").count() == 0
    final = page.locator(".msg.assistant .view")
    assert final.count() == 1 and final.locator("h2").inner_text() == VIEW["title"]
    assert final.locator(".view-stats dd").count() == 1 and final.locator(".view-bars tbody tr").count() == 2
    assert final.get_attribute("aria-busy") is None
    page.screenshot(path=str(tmp_path / f"view-accepted-{width}.png"), full_page=True)
    # Drawn before the answer ended: states with a draft holding every part, and none after.
    states = page.evaluate("window.viewStates")
    assert any(s["done"] is None and s["drafts"] and "Completion" in s["drafts"][0] for s in states)
    assert all(not s["drafts"] for s in states if s["done"])


@pytest.mark.parametrize("width", WIDTHS)
def test_a_part_with_a_figure_no_tool_returned_is_never_drawn_and_a_refused_view_goes(browser, served, width, tmp_path):
    refused = {"title": "Violations by context level", "parts": [
        {"type": "stats", "items": [{"label": "Runs compared", "value": 12, "unit": "runs"}]},
        # 9.9 is no figure the data tool returned: that bar must never be drawn, and the server refuses the view.
        {"type": "bar_chart", "title": "Mean violations per run", "unit": "violations per run",
         "bars": [{"label": "none", "value": 7.5}, {"label": "checklist", "value": 9.9}]},
    ]}
    pieces = split(json.dumps(refused), '"unit": "runs"}]}, ', '"value": 7.5}, ')
    page, gateway = start(browser, served, width, view_call(pieces))

    shown = wait_for_draft(page, "d.querySelectorAll('.view-stats dd').length === 1")
    assert shown["bars"] == 0
    gateway.go_on()
    shown = wait_for_draft(page, "d.querySelectorAll('.view-bars tbody tr').length === 1")  # 7.5 is grounded: drawn
    gateway.go_on()
    # Every piece is in, the call not yet finished: the second bar (9.9) failed the numbers check and
    # is not drawn; the rest stays a draft until the server decides.
    page.wait_for_function("() => window.viewStates.length > 0 && document.querySelector('.view-draft')", timeout=15_000)
    page.wait_for_timeout(300)  # room for a wrong drawing to show, were there one
    shown = draft(page)
    assert (shown["stats"], shown["bars"], shown["done"]) == (1, 1, None)
    page.screenshot(path=str(tmp_path / f"view-part-refused-{width}.png"), full_page=True)
    gateway.go_on()

    page.wait_for_function("() => document.querySelector(\".msg.assistant[data-done='complete']\")", timeout=15_000)
    answer = page.locator(".msg.assistant")
    assert answer.locator(".view").count() == 0  # the server refused it: what was drawn of it is gone
    assert "view refused" in answer.locator(".tool-error").text_content()  # in the show_view call, folded
    page.screenshot(path=str(tmp_path / f"view-refused-{width}.png"), full_page=True)
    states = page.evaluate("window.viewStates")
    assert any(s["drafts"] for s in states if s["done"] is None)
    assert not any("9.9" in d for s in states for d in s["drafts"])


PREFIXES = """() => {
  const {partialJson, decimal, roundsTo} = window.GroundchatViewStream;
  const seen = (text) => JSON.stringify(partialJson(text).value);
  return {
    cutString: seen('{"title": "Viol'), wholeString: seen('{"title": "A \\\\"b\\\\" \\\\u00e9", "parts'),
    cutNumber: seen('{"a": [1, 2'), wholeNumber: seen('{"a": [1, 25]'), cutLiteral: seen('{"a": tr'), literal: seen('{"a": null, "b": false}'),
    nested: seen('{"parts": [{"type": "table", "rows": [["none", 50], ["check'),
    broken: partialJson('{"a": }').broken === true,
    openRow: (() => { const p = partialJson('{"rows": [["a", 1], ["b"'); return [p.open.has(p.value.rows[0]), p.open.has(p.value.rows[1])]; })(),
    rounding: [roundsTo(decimal("0.0126"), decimal("0.013")), roundsTo(decimal("0.125"), decimal("0.12")),
               roundsTo(decimal("0.125"), decimal("0.13")), roundsTo(decimal("0.5"), decimal("1")), roundsTo(decimal("7.5"), decimal("7.6"))],
  };
}"""


def test_the_partial_parser_keeps_only_what_is_whole_and_the_rounding_is_the_servers(browser, served):
    from groundchat_testkit.scripted import ScriptedModel, Step

    env, url = served(ScriptedModel([Step(text="x")]), grants=GRANTS)
    page = browser.new_page()
    page.goto(f"{url}/chat")
    page.wait_for_function("() => window.GroundchatViewStream !== undefined", timeout=10_000)
    got = page.evaluate(PREFIXES)
    assert got["cutString"] == "{}" and json.loads(got["wholeString"]) == {"title": 'A "b" é'}
    # A number is kept once something follows it: "2" may yet be "25".
    assert got["cutNumber"] == '{"a":[1]}' and got["wholeNumber"] == '{"a":[1,25]}'
    assert got["cutLiteral"] == "{}" and got["literal"] == '{"a":null,"b":false}'
    assert json.loads(got["nested"]) == {"parts": [{"type": "table", "rows": [["none", 50], []]}]}
    assert got["broken"] is True and got["openRow"] == [False, True]
    # Halves up or to even, as grounding/view_numbers.py allows; 7.5 is never 7.6.
    assert got["rounding"] == [True, True, True, True, False]
