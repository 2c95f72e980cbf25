"""The share routes on the app: JSON, page, list; the same 404 for unshared and unknown; reads only."""
from __future__ import annotations

import json
import re

import httpx
import pytest

from groundchat.services import Services
from share_function.app import NOT_FOUND_JSON, create_share_app

SHARED = "a" * 32
PRIVATE = "b" * 32
UNKNOWN = "c" * 32


@pytest.fixture
async def client(dynamo, settings, operations, counting_model, make_conversation):
    model = counting_model
    services = Services(settings=settings, dynamo=dynamo, model_override=model)
    await make_conversation(services.conversations, SHARED, "Which context level is best?", shared=True)
    await make_conversation(services.conversations, PRIVATE, "A private question", shared=False)
    operations.clear()
    app = create_share_app(services)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://share") as c:
        c.model = model  # type: ignore[attr-defined]
        c.operations = operations  # type: ignore[attr-defined]
        yield c


async def test_shared_conversation_json_has_every_message_in_order(client):
    r = await client.get(f"/api/shared/{SHARED}")
    assert r.status_code == 200
    body = r.json()
    assert body["conversation"]["conversation_id"] == SHARED
    assert body["conversation"]["title"] == "Which context level is best?"
    assert body["conversation"]["shared_at"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert [m["seq"] for m in body["messages"]] == [0, 1, 2, 3]
    assert body["messages"][1]["tool_calls"] == [{"id": "t1", "name": "compare_contexts", "args": {"model": "m1"}}]
    assert body["messages"][3]["annotations"]["citations"]["sources"][0]["ref"] == "3f9a1b2c"
    assert body["answered_on"] == body["conversation"]["updated_at"][:10]
    assert r.headers["cache-control"] == "no-cache"


async def test_unshared_and_unknown_give_the_same_404(client):
    private = await client.get(f"/api/shared/{PRIVATE}")
    unknown = await client.get(f"/api/shared/{UNKNOWN}")
    odd = await client.get("/api/shared/" + "x" * 200)
    assert private.status_code == unknown.status_code == odd.status_code == 404
    assert private.content == unknown.content == odd.content
    assert private.json() == NOT_FOUND_JSON
    page_private = await client.get(f"/chat/shared/{PRIVATE}")
    page_unknown = await client.get(f"/chat/shared/{UNKNOWN}")
    assert page_private.status_code == page_unknown.status_code == 404
    assert page_private.content == page_unknown.content


async def test_unsharing_hides_it_at_once(client, dynamo, settings):
    from groundchat.store.conversations import ConversationStore

    assert (await client.get(f"/api/shared/{SHARED}")).status_code == 200
    await ConversationStore(dynamo).set_shared(SHARED, "alice", False)
    assert (await client.get(f"/api/shared/{SHARED}")).status_code == 404


async def test_page_draws_with_the_shared_transcript_code_and_states_the_date(client):
    r = await client.get(f"/chat/shared/{SHARED}")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    page = r.text
    # Relative, so the page works under an API Gateway stage (/Prod/chat/shared/<id>) as well.
    assert '<script src="../../static/transcript.js"></script>' in page
    assert '<script src="../../static/shared.js"></script>' in page
    assert ".stored(data.messages)" in (await client.get("/static/shared.js")).text  # the page's code, as a file
    day = (await client.get(f"/api/shared/{SHARED}")).json()["answered_on"]
    assert f'what the database held on <span class="date">{day}</span>, the day it was\n    answered' in page
    embedded = page.split('<script id="conversation-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(embedded)["messages"][0]["content"] == "Which context level is best?"
    # Which drawer draws each tool is the tool's own fact, served with the page.
    from groundchat.tools.catalog import page_drawers

    drawers = page.split('<script id="tool-drawers" type="application/json">')[1].split("</script>")[0]
    assert json.loads(drawers) == page_drawers() and json.loads(drawers)["compare_contexts"] == "contexts"
    js = await client.get("/static/transcript.js")
    assert js.status_code == 200 and "GroundchatTranscript" in js.text
    assert js.headers["content-type"].startswith("text/javascript")


async def test_page_escapes_what_the_owner_wrote(dynamo, settings, make_conversation):
    services = Services(settings=settings, dynamo=dynamo)
    hostile = "</script><script>alert(1)</script>"
    await make_conversation(services.conversations, "d" * 32, hostile, shared=True)
    app = create_share_app(services)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://share") as c:
        page = (await c.get("/chat/shared/" + "d" * 32)).text
    assert "<script>alert(1)" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # the title, as text
    assert "\\u003c/script>\\u003cscript>alert(1)" in page  # the data, inert inside its script element


async def test_list_is_shared_only_newest_first(client, dynamo, settings, make_conversation):
    services = Services(settings=settings, dynamo=dynamo)
    await make_conversation(services.conversations, "e" * 32, "A later shared question", shared=True)
    r = await client.get("/api/shared")
    assert r.status_code == 200
    listed = r.json()["conversations"]
    assert [c["conversation_id"] for c in listed] == ["e" * 32, SHARED]
    assert listed[0]["share_url"] == "/chat/shared/" + "e" * 32
    assert (await client.get("/api/shared", params={"limit": 1})).json()["conversations"][0]["conversation_id"] == "e" * 32
    out_of_range = await client.get("/api/shared", params={"limit": 0})
    assert out_of_range.status_code == 400 and out_of_range.json()["error"]["code"] == "bad-request"


async def test_reads_only_and_never_calls_a_model(client):
    for path in (f"/api/shared/{SHARED}", f"/api/shared/{PRIVATE}", f"/chat/shared/{SHARED}", "/api/shared"):
        await client.get(path)
    assert client.model.calls == 0
    assert client.operations, "the routes read the store"
    assert set(client.operations) <= {"GetItem", "Query"}


async def test_no_write_methods_are_routed(client):
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        r = await client.request(method, f"/api/shared/{SHARED}")
        assert r.status_code == 405


def test_stored_messages_render_as_the_chat_renders_them():
    from groundchat.store.conversations import public_message

    item = {"conversation_id": "x", "seq": 3, "role": "assistant", "content": "hi",
            "tool_calls": json.dumps([{"id": "t", "name": "get_run", "args": {"run_id": "r1"}}]),
            "annotations": json.dumps({"citations": {"sources": []}}), "run_id": "r", "created_at": "2025-01-01T00:00:00Z"}
    assert public_message(item) == {
        "seq": 3, "role": "assistant", "content": "hi", "tool_calls": [{"id": "t", "name": "get_run", "args": {"run_id": "r1"}}],
        "tool_call_id": None, "name": None, "is_error": False, "annotations": {"citations": {"sources": []}},
        "run_id": "r", "created_at": "2025-01-01T00:00:00Z"}
    assert public_message({"seq": 0, "role": "user"})["content"] == ""


async def test_markers_a_user_wrote_stay_text_on_the_shared_page(dynamo, settings, make_conversation):
    spoof = "{{DATA}} {{ID}} {{BOT_NAME}} <b>x</b>"
    services = Services(settings=settings, dynamo=dynamo)
    await make_conversation(services.conversations, "d" * 32, spoof, shared=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_share_app(services)), base_url="http://share") as c:
        page = (await c.get(f"/chat/shared/{'d' * 32}")).text
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    heading = page.split("<h1>", 1)[1].split("</h1>", 1)[0]
    expected = "{{DATA}} {{ID}} {{BOT_NAME}} &lt;b&gt;x&lt;/b&gt;"
    assert heading == expected
    assert title.startswith(expected + " · ")
    # The data blob appears once, where the page put it, and nowhere a title was substituted.
    assert page.count('"conversation_id"') == 1


@pytest.mark.parametrize("auth_mode", ["dev", "oidc"])
async def test_the_shared_page_says_which_sign_in_its_site_has(dynamo, settings, make_conversation, monkeypatch, auth_mode):
    """The page asks /auth/session only where it exists: its `data-sign-in` names the auth mode."""
    monkeypatch.setattr(settings, "auth_mode", auth_mode)
    services = Services(settings=settings, dynamo=dynamo)
    await make_conversation(services.conversations, "e" * 32, "Focus", shared=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_share_app(services)), base_url="http://share") as c:
        page = (await c.get(f"/chat/shared/{'e' * 32}")).text
    assert f'data-sign-in="{auth_mode}"' in page


SECURITY = {"x-content-type-options": "nosniff", "referrer-policy": "strict-origin-when-cross-origin",
            "x-frame-options": "DENY"}


def assert_secured(response) -> None:
    for name, value in SECURITY.items():
        assert response.headers.get(name) == value, (response.url, name)
    policy = dict(part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["frame-ancestors"] == "'none'", response.url
    assert "unsafe-inline" not in policy["script-src"] and "unsafe-eval" not in response.headers["content-security-policy"]
    assert "camera=()" in response.headers["permissions-policy"], response.url


async def test_every_route_of_the_share_function_carries_the_security_headers(client):
    """The page (shared or not), its JSON, the list, a 404 image, its scripts and styles, a bad query."""
    for address in (f"/chat/shared/{SHARED}", f"/chat/shared/{UNKNOWN}", f"/api/shared/{SHARED}", f"/api/shared/{PRIVATE}",
                    "/api/shared", "/api/shared?limit=0", f"/api/shared/{SHARED}/images/{'0' * 64}",
                    "/static/transcript.js", "/static/transcript.css", "/static/shared.js", "/nothing-here"):
        assert_secured(await client.get(address))


async def test_the_shared_page_runs_no_inline_script_and_loads_its_own(client):
    page = (await client.get(f"/chat/shared/{SHARED}")).text
    opening_tags = re.findall(r"<script\b[^>]*>", page)
    # Each script is a file of this site, or a data block a browser never runs; no handler attribute.
    assert opening_tags == ['<script id="conversation-data" type="application/json">',
                            '<script id="tool-drawers" type="application/json">',
                            '<script src="../../static/transcript.js">', '<script src="../../static/shared.js">']
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", page)
    script = await client.get("/static/shared.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert "conversation-data" in script.text  # the page's own code, moved out of the page
