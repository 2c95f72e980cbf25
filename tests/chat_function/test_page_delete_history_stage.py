"""In a real headless Chromium: deleting a conversation after a confirmation (and the 409 while an
answer runs), and every page working under an API Gateway stage
(/Prod/...) with an app that never learns the stage."""
from __future__ import annotations

import pytest

from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import axe_violations
from tests.chat_function.test_disconnect import serve_in_thread
from tests.chat_function.test_page_browser import CHROMIUM, _axe_source, ask, browser, served, sign_in  # noqa: F401

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")


def test_delete_from_the_list_and_the_open_conversation_with_a_confirmation(browser, served, corpus_dir):
    env, url = served(ScriptedModel([Step(text="First answer."), Step(text="Second answer.")]))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, url, env, "alice")
    ask(page, "First question")
    page.click("#new")
    ask(page, "Second question")
    page.wait_for_function("() => document.querySelectorAll('#past li').length === 2")

    # From the list, by keyboard: the dialog opens on "Keep it"; Escape keeps it.
    page.focus("#past li:has-text('First question') button.small")
    page.keyboard.press("Enter")
    page.wait_for_selector("dialog#confirm-delete[open]")
    assert page.evaluate("document.activeElement.id") == "confirm-delete-no"
    assert "“First question”" in page.inner_text("#confirm-delete-text")
    assert not axe_violations(page, _axe_source(corpus_dir))
    page.keyboard.press("Escape")
    assert page.locator("#past li").count() == 2
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Delete “First question”"
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")  # to "Delete it"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#past li').length === 1")
    assert "Deleted “First question”." in page.inner_text("#share-status")
    assert page.inner_text(".msg.user .question") == "Second question"  # the open one stays

    # A 409 while an answer runs: said, nothing removed.
    page.route("**/api/conversations/*", lambda route: route.fulfill(
        status=409, content_type="application/json",
        body='{"error": {"code": "conversation-busy", "message": "busy"}}') if route.request.method == "DELETE" else route.continue_())
    page.click("#delete")
    page.click("#confirm-delete-yes")
    page.wait_for_function("() => document.getElementById('share-status').textContent.includes('still running')")
    assert page.inner_text("#share-status") == "An answer is still running; try again when it ends."
    assert page.locator("#past li").count() == 1 and page.locator(".msg").count() == 2
    page.unroute("**/api/conversations/*")

    # The open conversation: deleted, the transcript cleared, the list empty, the server agrees.
    page.click("#delete")
    page.click("#confirm-delete-yes")
    page.wait_for_function("() => document.querySelectorAll('#past li').length === 0")
    assert page.locator(".msg").count() == 0 and page.is_visible("#start")
    import httpx

    listed = httpx.get(f"{url}/api/conversations", headers=env.token("alice")).json()["conversations"]
    assert listed == []


class StagePrefix:
    """API Gateway's REST API in front of the app: the browser asks for /Prod/..., the app is sent
    the path without the stage and is never told it; anything outside the stage is a 403."""

    def __init__(self, app, stage: str = "/Prod") -> None:
        self.app, self.stage = app, stage

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if not (path == self.stage or path.startswith(self.stage + "/")):
            await send({"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"message":"Missing Authentication Token"}'})
            return
        inner = path[len(self.stage):] or "/"
        await self.app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)


@pytest.fixture
def staged(make_env):
    started = []

    def serve(model, **options):
        from share_function.app import add_share_routes

        env = make_env(model, **options)
        add_share_routes(env.app, env.services)
        server, thread, url = serve_in_thread(StagePrefix(env.app))
        started.append((server, thread))
        return env, url + "/Prod"

    yield serve
    for server, thread in started:
        server.should_exit = True
        thread.join(5)


def test_every_page_works_under_a_stage_prefix(browser, staged, dynamo):
    from groundchat.tools.data_tools import DATA_TOOLS
    from tests.chat_function.page_support import import_runs, sample_slice

    import_runs(dynamo, sample_slice())

    env, url = staged(ScriptedModel([
        Step(tool_calls=[("compare_contexts", {"context": "full"})]),
        Step(text="Full context is best; see [the run list](/chat/runs?context=checklist)."),
    ]), tools=DATA_TOOLS)
    page = browser.new_page()
    outside = []
    # Every tab of the context: the chat, the run list it opens; every request under the stage, none failing.
    page.context.on("request", lambda r: outside.append(r.url) if "/Prod/" not in r.url else None)
    failed, asked = [], []
    page.context.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    page.context.on("request", lambda r: asked.append(r.url.split("127.0.0.1:")[1].split("/", 1)[1]))
    sign_in(page, url, env, "alice")
    assert page.evaluate("window.GroundchatTranscript.BASE") == "/Prod"
    assert page.evaluate("getComputedStyle(document.querySelector('.top')).display") == "flex"  # the stylesheet loaded
    ask(page, "Which context level is best?")
    assert page.get_attribute(".msg.assistant .body a", "href") == "/Prod/chat/runs?context=checklist"

    # The run list, from the answer's link, loads its runs through the stage.
    with page.context.expect_page() as opened:
        page.click(".msg.assistant .body a")
    runs = opened.value
    runs.wait_for_load_state()
    assert runs.url.endswith("/Prod/chat/runs?context=checklist")
    runs.wait_for_function("() => performance.getEntriesByType('resource').some((e) => e.name.includes('/Prod/api/runs?'))")
    runs.wait_for_selector("table tbody tr")  # the runs came through /Prod/api/runs
    assert runs.get_attribute("nav[aria-label=Site] a", "href") == "../chat"
    runs.click("nav[aria-label=Site] a")
    runs.wait_for_url(url + "/chat")

    # Sharing: the link carries the stage, and the shared page draws under it.
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden])")
    link = page.get_attribute("#share-link", "href")
    assert link.startswith("/Prod/chat/shared/")
    assert page.inner_text("#share-link").startswith("http://127.0.0.1:") and "/Prod/chat/shared/" in page.inner_text("#share-link")
    shared = browser.new_page()
    shared.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    shared.goto(page.inner_text("#share-link"))
    shared.wait_for_selector(".msg.assistant")
    assert "Full context is best" in shared.inner_text("#transcript")
    # Its own look for a sign-in finishes (no other tab lends a token here) without asking for
    # /auth/session, which a dev deployment does not have.
    assert shared.evaluate("window.GroundchatTranscript.Auth.ready(50).then((t) => t)") == ""
    shared.click("nav[aria-label=Site] a")
    shared.wait_for_url(url + "/chat")
    assert outside == [] and failed == []
    for path in ("Prod/static/transcript.js", "Prod/static/transcript.css", "Prod/api/dev/sign-in", "Prod/api/chat",
                 "Prod/api/conversations", "Prod/api/runs?context=checklist", "Prod/static/public.js"):
        assert path in asked, (path, asked)


def test_a_link_to_a_conversation_opens_it_for_its_owner_only(browser, served):
    """Recall's hits link to `/chat?conversation=<id>`: the owner lands in that conversation; anyone
    else gets the empty chat (the API answers 404 for another person's conversation)."""
    env, url = served(ScriptedModel([Step(text="The answer about focus.")]))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, url, env, "alice")
    ask(page, "What about visible focus?")
    import httpx

    conversation = httpx.get(f"{url}/api/conversations", headers=env.token("alice")).json()["conversations"][0]["conversation_id"]

    page.goto(f"{url}/chat?conversation={conversation}")
    page.wait_for_selector(".msg.user .question")
    assert page.inner_text(".msg.user .question") == "What about visible focus?"
    assert "The answer about focus." in page.inner_text(".msg.assistant")

    other = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(other, url, env, "bob")
    other.goto(f"{url}/chat?conversation={conversation}")
    other.wait_for_load_state("networkidle")
    assert other.locator(".msg").count() == 0
