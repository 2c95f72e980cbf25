"""The API Gateway REST stand-in on its own, in front of an invocation endpoint that streams as
Lambda's does (the prelude, eight NUL bytes, then the body in chunks): what reaches the client
streams, with the prelude's status, headers and every cookie; routes and binary types come from
the template. No tools needed."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import httpx
import pytest

from groundchat_cli.apigw_rest import APPLIED_PRELUDE, RestApiStandIn, binary_media_types, match, routes_from_template, stage_of
from groundchat_cli.local_lambda import INVOKE_PATH, load_template
from tests.lambda_shape.local_stack import serve_in_thread


@pytest.fixture(scope="module")
def template():
    return load_template()


@pytest.fixture(params=["prelude in the body", "prelude applied"])
def streaming_function(request):
    """An emulator answering a streamed invocation: the runtime interface emulator's way (the
    function's prelude and eight NULs first in the body), or cargo-lambda's (the prelude already
    made the status, headers and cookies, and the answer says so in APPLIED_PRELUDE)."""
    release, finished = threading.Event(), threading.Event()
    events: list[dict] = []
    applied = request.param == "prelude applied"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            events.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
            self.send_response(201 if applied else 200)
            self.send_header("transfer-encoding", "chunked")
            if applied:
                self.send_header("content-type", "text/event-stream")
                self.send_header("set-cookie", "a=1; Path=/; HttpOnly")
                self.send_header("set-cookie", "b=2; Path=/; Secure")
                self.send_header(APPLIED_PRELUDE, "streaming")
            self.end_headers()
            prelude = json.dumps({"statusCode": 201, "headers": {"content-type": "text/event-stream"},
                                  "cookies": ["a=1; Path=/; HttpOnly", "b=2; Path=/; Secure"]}).encode()
            first = b"event: first\n\n" if applied else prelude + b"\0" * 8 + b"event: first\n\n"
            for part in (first, None, b"event: last\n\n"):
                if part is None:
                    release.wait(10)
                    continue
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                self.wfile.flush()
            finished.set()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args):
            pass

    server = serve_in_thread(Handler)
    yield SimpleNamespace(port=server.server_port, invoke_path=INVOKE_PATH, config=SimpleNamespace(timeout=30), release=release, finished=finished, events=events)
    release.set()
    server.shutdown()


def test_a_streamed_answer_reaches_the_client_before_it_ends(template, streaming_function):
    api = RestApiStandIn(template, {"ChatFunction": streaming_function}).start()
    try:
        with httpx.stream("POST", api.stage_url + "/api/chat?x=1", json={"stream": True, "message": "hi"}, timeout=30) as r:
            lines = r.iter_lines()
            first = next(lines)
            before_end = not streaming_function.finished.is_set()
            streaming_function.release.set()
            rest = list(lines)
            status, cookies, content_type = r.status_code, r.headers.get_list("set-cookie"), r.headers["content-type"]
            marked = APPLIED_PRELUDE in r.headers
    finally:
        api.stop()
    assert first == "event: first" and before_end and not marked
    assert "event: last" in rest
    assert status == 201 and content_type == "text/event-stream"
    assert cookies == ["a=1; Path=/; HttpOnly", "b=2; Path=/; Secure"]
    event = streaming_function.events[0]
    assert event["path"] == "/api/chat" and event["requestContext"]["stage"] == api.stage
    assert event["requestContext"]["path"] == f"/{api.stage}/api/chat"
    assert event["queryStringParameters"] == {"x": "1"} and event["isBase64Encoded"] is False


def test_routes_stage_and_binary_types_come_from_the_template(template):
    routes = routes_from_template(template)
    assert match(routes, "GET", "/api/shared/abc")[0].function == "ShareFunction"
    assert match(routes, "GET", "/api/shared/abc/images/f00")[1] == {"id": "abc", "sha256": "f00"}
    assert match(routes, "GET", "/chat")[0].resource == "/chat"
    assert match(routes, "GET", "/anything/else")[0].resource == "/{proxy+}"
    assert stage_of(template, {}) == template["Parameters"]["Stage"]["Default"]
    assert stage_of(template, {"Stage": "prod"}) == "prod"
    assert "multipart/form-data" in binary_media_types(template) and "image/png" in binary_media_types(template)


def test_the_gateways_own_answers_carry_the_templates_security_headers(template):
    """What API Gateway answers itself (no route: 403; a function that failed: 502) carries the
    template's gateway-response headers, the policy a JSON error needs: nothing may load or frame it."""
    class Failing(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(500)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"no")

        def log_message(self, *args):
            pass

    server = serve_in_thread(Failing)
    function = SimpleNamespace(port=server.server_port, invoke_path=INVOKE_PATH, config=SimpleNamespace(timeout=30), output=["boom"])
    api = RestApiStandIn(template, {"ShareFunction": function}).start()
    try:
        unrouted = httpx.get(f"{api.stage_url}/no/such/route")
        failed = httpx.get(f"{api.stage_url}/chat/shared/{'a' * 32}")
    finally:
        api.stop()
        server.shutdown()
    assert (unrouted.status_code, failed.status_code) == (403, 502)
    for answer in (unrouted, failed):
        assert answer.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'; sandbox"
        assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "strict-origin-when-cross-origin"
        assert "camera=()" in answer.headers["permissions-policy"]
