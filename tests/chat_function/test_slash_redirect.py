"""A stray trailing slash is redirected relatively, so the address keeps an API Gateway stage."""
from urllib.parse import urljoin

from groundchat_testkit.scripted import ScriptedModel


async def test_a_trailing_slash_goes_to_the_page_by_a_relative_redirect(make_env):
    env = make_env(ScriptedModel([]))
    async with env.client() as c:
        page = await c.get("/chat/")
        status = await c.get("/api/chat/status/?x=1")
        double = await c.get("/chat//")
        unknown = await c.get("/no-such-page/")
        plain = await c.get("/chat")
    assert (page.status_code, page.headers["location"]) == (307, "../chat")
    assert (status.status_code, status.headers["location"]) == (307, "../status?x=1")
    assert double.headers["location"] == "../../chat"
    assert unknown.status_code == 404
    assert plain.status_code == 200 and "text/html" in plain.headers["content-type"]
    # What a browser does with it under a stage: the stage stays.
    assert urljoin("https://abc.execute-api.eu-west-1.amazonaws.com/prod/chat/", "../chat") == \
        "https://abc.execute-api.eu-west-1.amazonaws.com/prod/chat"
    assert urljoin("http://127.0.0.1:8000/chat/", "../chat") == "http://127.0.0.1:8000/chat"


async def test_a_post_with_a_trailing_slash_keeps_its_method(make_env):
    env = make_env(ScriptedModel([]))
    async with env.client() as c:
        moved = await c.post("/api/chat/", json={"message": "hi"})
    assert (moved.status_code, moved.headers["location"]) == (307, "../chat")


async def test_a_route_that_ends_in_a_slash_is_served_not_redirected(make_env):
    from fastapi.responses import PlainTextResponse

    env = make_env(ScriptedModel([]))
    env.app.add_api_route("/chat/help/", lambda: PlainTextResponse("help"), methods=["GET"])
    env.app.add_api_route("/chat/help", lambda: PlainTextResponse("bare"), methods=["GET"])
    async with env.client() as c:
        slashed = await c.get("/chat/help/")
    assert (slashed.status_code, slashed.text) == (200, "help")
