"""The /chat page in a real headless Chromium: a question streams in and is drawn as it arrives.

Chromium comes from Debian's package (`make test` installs it where it may); without it these
tests skip and say so.
"""
import shutil

import pytest

from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.page_support import inject_axe
from tests.chat_function.test_disconnect import serve_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test installs it when run as root)")

# Flags for a machine with no network beyond loopback: no background fetches, no sandbox as root.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def sign_in(page, url: str, env, user: str) -> None:
    """The one-click local sign-in, as another local user than the dev user."""
    page.goto(f"{url}/chat")
    page.wait_for_selector("#dev-sign-in:not([hidden])", timeout=10_000)
    page.fill("#dev-user", user)
    page.click("#dev-sign-in-button")
    page.wait_for_selector("#signed-in:not([hidden])", timeout=10_000)


def ask(page, question: str, answers: int = 1, timeout: int = 20_000) -> None:
    """Ask in the page and wait until `answers` answers in the transcript have completed."""
    page.fill("#question", question)
    page.click("#ask button[type=submit]")
    page.wait_for_function(f"() => document.querySelectorAll(\".msg.assistant[data-done='complete']\").length === {answers}", timeout=timeout)


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def served(make_env):
    started = []

    def serve(model, **env_options):
        from share_function.app import add_share_routes

        env = make_env(model, **env_options)
        add_share_routes(env.app, env.services)  # as the local stack serves them, side by side
        server, thread, url = serve_in_thread(env.app)
        started.append((server, thread))
        return env, url

    yield serve
    for server, thread in started:
        server.should_exit = True
        thread.join(5)


def test_a_question_streams_into_the_transcript_with_tools_and_citations(browser, served, tmp_path):
    model = ScriptedModel([
        Step(tool_calls=[("compare_contexts", {"context": "full"})]),
        Step(text="Full context is best: 3.5 violations per run [deadbeef]."),
        Step(text="It costs $0.0126 per run."),
    ])
    env, url = served(model)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "Which context level is best?")
    answer = page.inner_text(".msg.assistant")
    assert "Full context is best: 3.5 violations per run [deadbeef: unverified source]." in answer
    assert "compare_contexts" in answer and "context: full" in answer and "→ 1 row" in answer
    assert "[deadbeef] unverified" in answer
    # The second question continues the same conversation.
    ask(page, "And what does it cost?", answers=2)
    # No tool of the second answer returned $0.0126: the figure is marked, and says so in words.
    second = page.locator(".msg.assistant").nth(1)
    assert "It costs $0.0126 unverified figure per run." in second.inner_text()
    assert second.locator("mark.figure-unverified").inner_text() == "$0.0126"
    assert [m.content for m in model.requests[2].messages if m.role == "user"] == ["Which context level is best?", "And what does it cost?"]
    page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)


def test_the_form_is_disabled_and_says_why_when_the_chat_is_not_configured(browser, dynamo, settings, monkeypatch):
    from chat_function.app import create_app
    from groundchat.services import Services

    monkeypatch.setattr(settings, "model", "openai:gpt-4.1-mini")
    server, thread, url = serve_in_thread(create_app(Services(settings=settings, dynamo=dynamo)))
    try:
        page = browser.new_page()
        page.goto(f"{url}/chat")
        page.wait_for_function("() => document.getElementById('status').textContent.length > 0", timeout=10_000)
        assert "disabled" in page.inner_text("#status")
        assert "GROUNDCHAT_OPENAI" in page.inner_text("#status")
        assert page.is_disabled("#question") and page.is_disabled("#ask button[type=submit]")
    finally:
        server.should_exit = True
        thread.join(5)


def test_offline_view_is_drawn_and_its_form_opens_the_run_list(browser, served, dynamo):
    """The offline answerer composes a view from compare_contexts; the page draws it as a table and
    its form, submitted, opens the run list the registered action names in a new tab."""
    page, env, url = offline_answer_in_page(browser, served, dynamo)
    table = page.inner_text(".msg.assistant .view table")
    assert "guidelines-axe" in table and "$" in table
    assert "offline answerer" in page.inner_text(".msg.assistant")
    form = page.locator(".msg.assistant form")
    form.locator("select").first.select_option("checklist")
    with page.context.expect_page() as opened:
        form.locator("button, input[type=submit]").first.click()
    runs = opened.value
    runs.wait_for_url("**/chat/runs?**context=checklist**", timeout=10_000)
    runs.wait_for_selector("#rows tr", timeout=10_000)
    assert all(cells.split("\t")[2] == "checklist" for cells in runs.locator("#rows tr").all_inner_texts())
    assert page.url.split("?")[0].endswith("/chat")  # the conversation stays open (its id in the address)


def offline_answer_in_page(browser, served, dynamo):
    """The offline answerer over the sample runs, allowed to show views, asked the first example
    question in the page by a user with the grants it needs."""
    from groundchat.offline.answerer import OfflineAnswerer
    from tests.moto_snapshot import sample_loaded
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.view_tool import show_view

    sample_loaded(dynamo)
    env, url = served(OfflineAnswerer(), tools=[*DATA_TOOLS, show_view],
                      grants={"vera": ["chat.use", "runs.read", "views.show"]})
    page = browser.new_page()
    sign_in(page, url, env, "vera")
    ask(page, "Which context level is best, and what does it cost?")
    return page, env, url


def _axe_source(corpus_dir) -> str:
    import tarfile

    with tarfile.open(corpus_dir / "axe" / "axe-core-4.14.1.tgz") as tgz:
        return tgz.extractfile("package/axe.min.js").read().decode()


def test_our_own_pages_pass_axe(browser, served, dynamo, corpus_dir):
    """An accessibility benchmark's chat is held to the rules it reports: axe-core on every page,
    with an answer, a view and its citations drawn."""
    axe = _axe_source(corpus_dir)
    page, env, url = offline_answer_in_page(browser, served, dynamo)
    conversation = page.evaluate("fetch('/api/conversations', {headers: {authorization: 'Bearer ' + sessionStorage.getItem('groundchat-token')}}).then(r => r.json())")
    conversation_id = conversation["conversations"][0]["conversation_id"]
    shared = page.evaluate(f"fetch('/api/conversations/{conversation_id}/share', {{method: 'POST', headers: {{authorization: 'Bearer ' + sessionStorage.getItem('groundchat-token')}}}}).then(r => r.status)")
    assert shared == 200
    runs = page.evaluate("fetch('/api/runs?limit=2', {headers: {authorization: 'Bearer ' + sessionStorage.getItem('groundchat-token')}}).then(r => r.json())")["runs"]

    found = {}
    for address in (None, f"/chat/shared/{conversation_id}", "/chat/runs?context=none",
                    f"/chat/runs?run={runs[0]['run_id']}&compare={runs[1]['run_id']}"):
        if address is not None:
            page.goto(f"{url}{address}")
            page.wait_for_load_state("networkidle")
        inject_axe(page, axe)
        result = page.evaluate("async () => await axe.run()")
        found[address or "/chat"] = [(v["id"], [n["target"] for n in v["nodes"]]) for v in result["violations"]]
    assert found == {page: [] for page in found}


def test_share_a_conversation_and_reopen_it_from_the_list(browser, served):
    model = ScriptedModel([Step(text="First answer."), Step(text="Second answer.")])
    env, url = served(model)
    page = browser.new_page()
    sign_in(page, url, env, "alice")
    ask(page, "First question?")
    page.click("#share")
    page.wait_for_selector("#share-box:not([hidden]) #share-link", timeout=5_000)
    shared_link = page.get_attribute("#share-link", "href")
    assert page.is_visible("#unshare") and not page.is_visible("#share")
    page.click("#new")
    assert page.inner_text("#transcript") == ""
    ask(page, "Second question?")
    page.wait_for_function("() => document.querySelectorAll('#past li').length === 2", timeout=5_000)
    assert "shared" in page.inner_text("#past")
    page.click("#past li .entry button:has-text('First question?')")
    page.wait_for_function("() => document.getElementById('transcript').innerText.includes('First answer.')", timeout=5_000)
    assert "Second answer." not in page.inner_text("#transcript")
    assert page.is_visible("#unshare")
    reader = browser.new_page()  # someone without a token reads the shared link
    reader.goto(f"{url}{shared_link}")
    reader.wait_for_function("() => document.getElementById('transcript').innerText.includes('First answer.')", timeout=5_000)
    page.click("#unshare")
    page.wait_for_selector("#share:not([hidden])", timeout=5_000)
    assert reader.goto(f"{url}{shared_link}").status == 404


def test_on_a_phone_a_tables_caption_wraps_within_what_the_reader_sees(browser, served, dynamo):
    """At 320 px the view's table is wider than the page and scrolls in its box; its caption must
    wrap at the box's width, not run off under the box's edge with the table."""
    from groundchat.offline.answerer import OfflineAnswerer
    from tests.moto_snapshot import sample_loaded
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.view_tool import show_view

    sample_loaded(dynamo)
    env, url = served(OfflineAnswerer(), tools=[*DATA_TOOLS, show_view],
                      grants={"vera": ["chat.use", "runs.read", "views.show"]})
    page = browser.new_page(viewport={"width": 320, "height": 640})
    sign_in(page, url, env, "vera")
    ask(page, "Which context level is best, and what does it cost?")
    boxes = page.evaluate("""[...document.querySelectorAll('.msg.assistant .scroll-box')].map(box => {
        const table = box.querySelector('table'), caption = box.querySelector('caption');
        return {box: box.getBoundingClientRect().right, table: table.scrollWidth, seen: box.clientWidth,
                caption: caption ? caption.getBoundingClientRect().right : null,
                text: caption ? caption.textContent : null};
    })""")
    wide = [b for b in boxes if b["table"] > b["seen"] and b["caption"] is not None]
    assert wide, boxes  # the comparison table is wider than a 320 px phone
    for b in wide:
        assert b["caption"] <= b["box"] + 0.5, b
