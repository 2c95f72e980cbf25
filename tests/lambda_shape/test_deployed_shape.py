"""The packaged chat and share functions as Lambda runs them: from /opt and /var/task, the chat app
started by the real Lambda Web Adapter (the layer's extension and exec wrapper), the share app under
awslambdaric and Mangum, each behind the real runtime interface emulator, and the API Gateway REST
stand-in in front, with the template's routes, stage and binary media types. moto's server plays
DynamoDB and the offline answerer is the model."""
from __future__ import annotations

import json
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from groundchat_cli.apigw_rest import RestApiStandIn
from groundchat_cli.local_lambda import function_config, load_template
from tests.lambda_shape.local_stack import (build_package, chat_env, frames, init_durations, local_dynamo,
                                            require_local_lambda, start_function, token)


@pytest.fixture(scope="module")
def template():
    return load_template()


@pytest.fixture(scope="module")
def stack(template, tmp_path_factory):
    tools = require_local_lambda()
    root = tmp_path_factory.mktemp("deployed-shape")
    build = build_package(root, tools)
    with local_dynamo() as db:
        env = chat_env(db.endpoint, root / "home")
        chat = start_function(template, "ChatFunction", build, root / "chat", env)
        share = start_function(template, "ShareFunction", build, root / "share", chat_env(db.endpoint, root / "home"))
        api = RestApiStandIn(template, {"ChatFunction": chat, "ShareFunction": share}).start()
        try:
            yield {"api": api, "chat": chat, "share": share, "db": db}
        finally:
            api.stop()
            chat.stop()
            share.stop()


@pytest.fixture(scope="module")
def client(stack):
    with httpx.Client(base_url=stack["api"].stage_url, timeout=120) as c:
        yield c


def test_an_answer_streams_its_frames_through_the_adapter_and_commits_once(client, stack):
    with client.stream("POST", "/api/chat", headers=token(),
                       json={"stream": True, "message": "What does the axe rule color-contrast check?"}) as response:
        assert response.status_code == 200, stack["chat"].log()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers.get("transfer-encoding") == "chunked"
        got = frames(response.iter_lines())
    types = [t for t, _ in got]
    assert types[0] == "start" and types[-1] == "done"
    assert types.count("done") == 1 and got[-1][1]["reason"] == "complete"
    assert "tool-call" in types and "text" in types
    conversation = client.get(f"/api/conversations/{got[0][1]['conversation_id']}", headers=token())
    assert conversation.status_code == 200
    roles = [m["role"] for m in conversation.json()["messages"]]
    assert roles[0] == "user" and roles[-1] == "assistant"


def test_the_chat_cold_start_is_the_emulators_init_phase(stack):
    durations = init_durations(stack["chat"])
    # One init (the adapter waited for /healthz, then took invocations); no second, failed one.
    assert len(durations) == 1 and durations[0] > 0, stack["chat"].log()


def test_a_refusal_is_plain_json_with_its_status(client):
    r = client.post("/api/chat", json={"stream": True, "message": "hi"})
    assert r.status_code == 401
    assert r.headers["content-type"] == "application/json"
    assert r.json()["error"]["code"] == "unauthenticated"


def test_a_body_over_the_limit_is_refused_before_it_is_read(client):
    r = client.post("/api/chat", headers={**token(), "content-type": "application/json"},
                    content=json.dumps({"message": "x" * 200_000}))
    assert r.status_code == 413
    assert r.json()["error"]["code"]


def test_a_question_with_an_image_arrives_as_bytes(client, stack):
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(png, format="PNG")
    r = client.post("/api/chat", headers=token(), data={"message": "What is in this picture?"},
                    files={"image": ("red.png", png.getvalue(), "image/png")})
    # The offline answerer takes no images: the app read the multipart body whole (a body mangled on
    # the way, as text, is a malformed form or a file that is no image), found the image and said
    # why this model cannot take it.
    assert stack["api"].binary_types and r.status_code == 400
    assert r.json()["error"]["code"] == "images-not-accepted", r.text


def test_the_stage_prefix_holds_on_the_page_and_its_redirect(client, stack):
    page = client.get("/chat")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    # No address on the page is absolute to the host root: under /dev it would lose the stage.
    assert 'href="/' not in page.text and 'src="/' not in page.text
    redirect = client.get("/chat/", follow_redirects=False)
    assert redirect.status_code in (301, 302, 307, 308)
    target = urlsplit(urljoin(str(redirect.request.url), redirect.headers["location"]))
    assert target.path == f"/{stack['api'].stage}/chat"


def test_every_page_and_its_scripts_carry_the_security_headers_through_both_functions(client, stack):
    """Through the template's routes, the adapter and Mangum: each page, each script it loads (the
    shared page's from the share function), and a streamed answer carry the policy."""
    answered = client.post("/api/chat", headers={**token(), "accept": "text/event-stream"}, json={"message": "Which rules are broken most?"})
    conversation = frames(answered.text.splitlines())[0][1]["conversation_id"]
    assert client.post(f"/api/conversations/{conversation}/share", headers=token()).status_code == 200
    checked = [answered]
    for address in ("/chat", "/chat/runs", "/chat/trace", f"/chat/shared/{conversation}", f"/api/shared/{conversation}",
                    "/static/chat.js", "/static/runs.js", "/static/trace.js", "/static/shared.js", "/static/public.js",
                    "/static/transcript.js", "/static/transcript.css"):
        checked.append(client.get(address))
    assert [(str(r.url), r.status_code) for r in checked if r.status_code != 200] == []
    for r in checked:
        assert "script-src 'self';" in r.headers["content-security-policy"], r.url
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"], r.url
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY", r.url
        assert r.headers["referrer-policy"] == "strict-origin-when-cross-origin" and "camera=()" in r.headers["permissions-policy"]
    assert ".stored(data.messages)" in checked[9].text  # the shared page's own script, from the share function


def test_an_unknown_route_is_api_gateways_own_answer(stack):
    # The greedy route sends it to the app, which answers 404 in its own shape.
    r = httpx.get(stack["api"].stage_url + "/no/such/page", timeout=60)
    assert r.status_code == 404


def test_a_shared_conversation_and_its_list_through_mangum(client, stack):
    with client.stream("POST", "/api/chat", headers=token(), json={"stream": True, "message": "Which rules are broken most?"}) as asked:
        conversation_id = frames(asked.iter_lines())[0][1]["conversation_id"]
    shared = client.post(f"/api/conversations/{conversation_id}/share", headers=token())
    assert shared.status_code == 200, shared.text
    page = client.get(f"/chat/shared/{conversation_id}")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    data = client.get(f"/api/shared/{conversation_id}")
    assert data.status_code == 200
    assert data.json()["messages"][0]["content"] == "Which rules are broken most?"
    assert client.get("/api/shared/0123456789abcdef0123456789abcdef").status_code == 404


def test_the_source_ip_reaches_the_app_from_the_request_context(stack):
    from groundchat_cli.apigw_rest import Route, proxy_event

    event = proxy_event(method="POST", path="/api/chat", query="a=1&a=2", headers=[("Host", "h"), ("X-A", "1"), ("X-A", "2"),
                        ("content-type", "image/png")], body=b"\x89PNG", route=Route("ChatFunction", "POST", "/api/chat", True),
                        params={}, stage="dev", source_ip="203.0.113.9", request_path="/dev/api/chat",
                        binary_types=stack["api"].binary_types)
    assert event["requestContext"]["identity"]["sourceIp"] == "203.0.113.9"
    assert event["multiValueHeaders"]["X-A"] == ["1", "2"] and event["headers"]["X-A"] == "2"
    assert event["multiValueQueryStringParameters"] == {"a": ["1", "2"]}
    assert event["isBase64Encoded"] is True and event["body"] == "iVBORw=="


def test_what_ran_is_what_the_template_says(template, stack):
    chat = function_config(template, "ChatFunction")
    own = template["Resources"]["ChatFunction"]["Properties"]
    assert stack["chat"].config == chat
    assert chat.handler == own["Handler"] == "run.sh" and chat.runtime == template["Globals"]["Function"]["Runtime"]
    assert chat.adapter_layer and not function_config(template, "ShareFunction").adapter_layer
    env = stack["chat"].environment()
    for name in ("AWS_LAMBDA_EXEC_WRAPPER", "AWS_LWA_INVOKE_MODE", "AWS_LWA_READINESS_CHECK_PATH"):
        assert env[name] == own["Environment"]["Variables"][name]
    assert env["AWS_LAMBDA_FUNCTION_TIMEOUT"] == str(own["Timeout"])
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == str(own["MemorySize"])
    streaming = [r for r in stack["api"].routes if r.streaming]
    # Our SSE answer and the AI SDK's UI message stream; every other route is buffered.
    assert sorted((r.method, r.resource) for r in streaming) == [("GET", "/api/ai-sdk/chat/{id}/stream"), ("POST", "/api/ai-sdk/chat"),
                                                                  ("POST", "/api/chat")]


def test_reload_rating_and_stop_routes_through_the_adapter(client, stack):
    """The routes around an answer, as API Gateway routes them to the packaged chat function."""
    with client.stream("POST", "/api/chat", headers=token(), json={"stream": True, "message": "What does the axe rule color-contrast check?"}) as r:
        got = frames(r.iter_lines())
    conversation_id, done = got[0][1]["conversation_id"], got[-1][1]
    answer = client.get(f"/api/conversations/{conversation_id}/answer", headers=token())
    assert answer.status_code == 200, stack["chat"].log()
    assert answer.json()["state"] == "answered" and answer.json()["run_id"] == done["run_id"]
    rated = client.post(f"/api/conversations/{conversation_id}/messages/{done['answer_seq']}/feedback", headers=token(),
                        json={"rating": "down", "reasons": ["wrong-passage"]})
    assert rated.status_code == 200, rated.text
    trace = client.get(f"/api/traces/{done['run_id']}", headers=token()).json()
    assert [(f["rating"], f["reasons"]) for f in trace["feedback"]] == [("down", ["wrong-passage"])]
    stop = client.post(f"/api/conversations/{conversation_id}/stop", headers=token())
    assert stop.status_code == 409 and stop.json()["error"]["code"] == "not-answering"


def test_the_ai_sdk_stream_is_streamed_through_the_adapter(client, stack):
    body = {"id": "ab" * 16, "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "What does the axe rule color-contrast check?"}]}]}
    with client.stream("POST", "/api/ai-sdk/chat", headers=token(), json=body) as response:
        assert response.status_code == 200, stack["chat"].log()
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers.get("transfer-encoding") == "chunked"
        data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    kinds = [json.loads(d)["type"] for d in data[:-1]]
    assert kinds[0] == "start" and kinds[-1] == "finish" and "text-delta" in kinds and "tool-input-available" in kinds


def test_mcp_through_the_packaged_layer(stack):
    """The `mcp` SDK ships in the layer: an MCP client lists the tools and calls one through
    API Gateway, the adapter and the packaged function."""
    import asyncio

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        async with httpx2.AsyncClient(headers=token(), timeout=60) as http:
            async with streamable_http_client(stack["api"].stage_url + "/mcp", http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = [t.name for t in (await session.list_tools()).tools]
                    called = await session.call_tool("explain_rule", {"rule_id": "color-contrast"})
                    return tools, called

    tools, called = asyncio.run(go())
    assert "explain_rule" in tools and "search_docs" in tools, stack["chat"].log()
    assert not called.is_error and "1.4.3" in called.content[0].text
