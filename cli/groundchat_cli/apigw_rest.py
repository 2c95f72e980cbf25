"""An API Gateway REST API stand-in in front of local Lambdas (local_lambda.py).

It reads the routes from template.yaml (each function's `Api` events: path, method, and whether
the integration streams), turns each HTTP request into the REST proxy event API Gateway sends
(stage, requestContext.identity.sourceIp, single- and multi-value headers and query, a base64 body
for the API's binary media types), invokes the function's emulator, and turns the answer back into
HTTP: a buffered proxy result (statusCode, multiValueHeaders, body, isBase64Encoded), or, for a
streaming route, the prelude the function writes first ({statusCode, headers, cookies}, then eight
NUL bytes) followed by the body, passed on chunk by chunk as the emulator hands it over.

It answers at /<stage>/... as the execute-api address does, and at / as a custom domain mapped to
the stage does (the event is the same but for requestContext.path).
"""
from __future__ import annotations

import base64
import http.client
import json
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from groundchat_cli.local_lambda import LocalLambda

PRELUDE_END = b"\0" * 8
# The header cargo-lambda's emulator marks an answer with whose streaming prelude it has applied.
APPLIED_PRELUDE = "lambda-runtime-function-response-mode"
log = logging.getLogger("groundchat_cli.apigw_rest")


@dataclass(frozen=True)
class Route:
    function: str  # the template's logical id
    method: str
    resource: str  # /api/shared/{id}
    streaming: bool

    def pattern(self) -> re.Pattern[str]:
        parts = []
        for segment in self.resource.strip("/").split("/"):
            if segment.endswith("+}"):
                parts.append(f"(?P<{segment[1:-2]}>.+)")
            elif segment.startswith("{"):
                parts.append(f"(?P<{segment[1:-1]}>[^/]+)")
            else:
                parts.append(re.escape(segment))
        return re.compile("^/" + "/".join(parts) + "$")

    @property
    def specificity(self) -> tuple[int, int]:
        segments = self.resource.strip("/").split("/")
        return (sum(not s.startswith("{") for s in segments), -sum(s.endswith("+}") for s in segments))


def routes_from_template(template: dict[str, Any]) -> list[Route]:
    out = []
    for logical, resource in template["Resources"].items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in resource["Properties"].get("Events", {}).values():
            if event.get("Type") != "Api":
                continue
            props = event["Properties"]
            out.append(Route(logical, props["Method"].upper(), props["Path"],
                             props.get("ResponseTransferMode") == "RESPONSE_STREAM"))
    return out


def binary_media_types(template: dict[str, Any]) -> list[str]:
    apis = [r for r in template["Resources"].values() if r.get("Type") == "AWS::Serverless::Api"]
    # In the template "/" is written "~1", as API Gateway's own JSON pointer form requires.
    return [t.replace("~1", "/") for api in apis for t in api["Properties"].get("BinaryMediaTypes", [])]


def stage_of(template: dict[str, Any], parameters: dict[str, str]) -> str:
    apis = [r for r in template["Resources"].values() if r.get("Type") == "AWS::Serverless::Api"]
    stage = apis[0]["Properties"]["StageName"]
    if isinstance(stage, dict) and "Ref" in stage:
        return parameters.get(stage["Ref"]) or template["Parameters"][stage["Ref"]]["Default"]
    return str(stage)


def gateway_response_headers(template: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The headers of the API's own answers by kind ("DEFAULT_4XX", "DEFAULT_5XX"), as API Gateway
    sends them: a static value is written in single quotes, which it strips."""
    apis = [r for r in template["Resources"].values() if r.get("Type") == "AWS::Serverless::Api"]
    responses = apis[0]["Properties"].get("GatewayResponses") or {}
    out: dict[str, list[tuple[str, str]]] = {}
    for kind, response in responses.items():
        headers = (response.get("ResponseParameters") or {}).get("Headers") or {}
        out[kind] = [(name, value[1:-1] if value[:1] == value[-1:] == "'" and len(value) > 1 else value)
                     for name, value in headers.items()]
    return out


def is_binary(content_type: str, binary_types: list[str]) -> bool:
    kind = content_type.split(";")[0].strip().lower()
    return any(kind == t or (t.endswith("/*") and kind.startswith(t[:-1])) or t == "*/*" for t in binary_types)


def match(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    found = []
    for route in routes:
        if route.method not in (method, "ANY"):
            continue
        m = route.pattern().match(path)
        if m:
            found.append((route.specificity, route, m.groupdict()))
    if not found:
        return None
    found.sort(key=lambda f: f[0], reverse=True)
    return found[0][1], found[0][2]


def proxy_event(*, method: str, path: str, query: str, headers: list[tuple[str, str]], body: bytes,
                route: Route, params: dict[str, str], stage: str, source_ip: str, request_path: str,
                binary_types: list[str]) -> dict[str, Any]:
    """The REST API's Lambda proxy event for one request."""
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        multi_headers.setdefault(name, []).append(value)
    multi_query: dict[str, list[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        multi_query.setdefault(name, []).append(value)
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    binary = bool(body) and is_binary(content_type, binary_types)
    return {
        "resource": route.resource,
        "path": path,
        "httpMethod": method,
        "headers": {k: v[-1] for k, v in multi_headers.items()} or None,
        "multiValueHeaders": multi_headers or None,
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": params or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.resource, "httpMethod": method, "path": request_path, "stage": stage,
            "accountId": "123456789012", "apiId": "local", "resourceId": "local", "protocol": "HTTP/1.1",
            "requestId": str(uuid.uuid4()), "extendedRequestId": str(uuid.uuid4()),
            "requestTimeEpoch": int(time.time() * 1000),
            "domainName": next((v for k, v in headers if k.lower() == "host"), "127.0.0.1"),
            "identity": {"sourceIp": source_ip, "userAgent": next((v for k, v in headers if k.lower() == "user-agent"), None)},
        },
        "body": (base64.b64encode(body).decode() if binary else body.decode("utf-8", errors="replace")) if body else None,
        "isBase64Encoded": binary,
    }


class _Replay:
    """A body already read, handed out again in one piece."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read1(self, _size: int) -> bytes:
        data, self.data = self.data, b""
        return data


class RestApiStandIn:
    """Serves the template's routes on 127.0.0.1:`port` through the given local Lambdas."""

    def __init__(self, template: dict[str, Any], functions: dict[str, LocalLambda], port: int = 0,
                 parameters: dict[str, str] | None = None) -> None:
        self.routes = [r for r in routes_from_template(template) if r.function in functions]
        self.binary_types = binary_media_types(template)
        self.own_headers = gateway_response_headers(template)
        self.stage = stage_of(template, parameters or {})
        self.functions = functions
        # The emulator runs one invocation at a time, as one Lambda execution environment does.
        self.locks = {name: threading.Lock() for name in functions}
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.thread: threading.Thread | None = None
        self.prelude_on_buffered: set[tuple[str, str]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    @property
    def stage_url(self) -> str:
        return f"{self.url}/{self.stage}"

    def start(self) -> "RestApiStandIn":
        self.thread = threading.Thread(target=self.server.serve_forever, name="apigw-rest", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                standin.handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _any

        return Handler

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        split = urlsplit(request.path)
        request_path = split.path
        prefix = f"/{self.stage}"
        in_stage = request_path == prefix or request_path.startswith(prefix + "/")
        path = (request_path[len(prefix):] or "/") if in_stage else request_path
        length = int(request.headers.get("content-length") or 0)
        body = request.rfile.read(length) if length else b""
        found = match(self.routes, request.command, path)
        if found is None:
            # API Gateway's answer for a path or method it has no resource for.
            return self._send(request, 403, [("content-type", "application/json"), *self.own_headers.get("DEFAULT_4XX", [])],
                              b'{"message":"Missing Authentication Token"}')
        route, params = found
        event = proxy_event(method=request.command, path=path, query=split.query, headers=list(request.headers.items()),
                            body=body, route=route, params=params, stage=self.stage,
                            source_ip=request.client_address[0], request_path=request_path,
                            binary_types=self.binary_types)
        function = self.functions[route.function]
        with self.locks[route.function]:
            connection = http.client.HTTPConnection("127.0.0.1", function.port, timeout=function.config.timeout + 30)
            headers = {"content-type": "application/json"}
            if route.streaming:
                headers["Lambda-Runtime-Function-Response-Mode"] = "streaming"
            connection.request("POST", function.invoke_path, body=json.dumps(event).encode(), headers=headers)
            answer = connection.getresponse()
            try:
                if answer.getheader(APPLIED_PRELUDE) == "streaming":
                    # cargo-lambda's emulator has read the prelude already: the status, headers and
                    # cookies are its answer's own, and the body follows as the function writes it.
                    if not route.streaming:
                        self.prelude_on_buffered.add((route.method, route.resource))
                    return self._relay(request, answer)
                if answer.status != 200:
                    # API Gateway says no more than this; the emulator's status and the function's
                    # last lines say why, for whoever runs the stand-in.
                    log.warning("%s %s: the emulator of %s answered %s %r; its last lines:\n%s", request.command, path,
                                route.function, answer.status, answer.read()[:300],
                                "\n".join(function.output[-20:]))
                    return self._send(request, 502, [("content-type", "application/json"),
                                                     *self.own_headers.get("DEFAULT_5XX", [])],
                                      b'{"message": "Internal server error"}')
                if route.streaming:
                    return self._stream(request, answer)
                payload = answer.read()
                if PRELUDE_END in payload and payload.startswith(b"{"):
                    # A function under the adapter in response_stream mode answers every invocation
                    # in the streaming form, a buffered one too: the emulator hands it over as it
                    # came. Recorded, so a test can say which buffered routes met it.
                    self.prelude_on_buffered.add((route.method, route.resource))
                    return self._stream(request, _Replay(payload))
                return self._buffered(request, json.loads(payload))
            finally:
                connection.close()

    @staticmethod
    def _send(request, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        request.send_response(status)
        for name, value in headers:
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                request.send_header(name, value)
        request.send_header("content-length", str(len(body)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(body)

    def _buffered(self, request, result: dict[str, Any]) -> None:
        if not isinstance(result, dict) or "statusCode" not in result:
            return self._send(request, 502, [("content-type", "application/json"), *self.own_headers.get("DEFAULT_5XX", [])],
                              b'{"message": "Internal server error"}')
        headers: list[tuple[str, str]] = []
        multi = result.get("multiValueHeaders") or {}
        for name, values in multi.items():
            headers += [(name, str(v)) for v in values]
        for name, value in (result.get("headers") or {}).items():
            if name not in multi:
                headers.append((name, str(value)))
        body = result.get("body") or ""
        data = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode()
        self._send(request, int(result["statusCode"]), headers, data)

    def _relay(self, request, answer: http.client.HTTPResponse) -> None:
        request.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", APPLIED_PRELUDE):
                request.send_header(name, value)
        request.send_header("transfer-encoding", "chunked")
        request.end_headers()
        self._pass_on(request, answer, b"")

    def _stream(self, request, answer: http.client.HTTPResponse) -> None:
        buffer = b""
        while PRELUDE_END not in buffer:
            chunk = answer.read1(65536)
            if not chunk:
                # A function error (awslambdaric's errorType/errorMessage JSON) comes without the prelude.
                log.warning("%s %s: the answer ended before its prelude: %r", request.command, request.path, buffer[:300])
                return self._send(request, 502, [("content-type", "application/json")], b'{"message": "Internal server error"}')
            buffer += chunk
        prelude_bytes, rest = buffer.split(PRELUDE_END, 1)
        prelude = json.loads(prelude_bytes)
        request.send_response(int(prelude.get("statusCode", 200)))
        for name, value in (prelude.get("headers") or {}).items():
            for one in value if isinstance(value, list) else [value]:
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    request.send_header(name, str(one))
        for cookie in prelude.get("cookies") or []:
            request.send_header("set-cookie", cookie)
        request.send_header("transfer-encoding", "chunked")
        request.end_headers()
        self._pass_on(request, answer, rest)

    @staticmethod
    def _pass_on(request, answer: http.client.HTTPResponse, rest: bytes) -> None:
        """The body, chunk by chunk as the emulator hands it over (`rest`: what came with the prelude)."""
        def write(data: bytes) -> None:
            if data:
                request.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                request.wfile.flush()

        try:
            write(rest)
            while True:
                chunk = answer.read1(65536)
                if not chunk:
                    break
                write(chunk)
            request.wfile.write(b"0\r\n\r\n")
            request.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left; the function's invocation runs on regardless
