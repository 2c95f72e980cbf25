"""The whole path with a real adapter: the chat endpoint, configured for an OpenAI-compatible
gateway, talks HTTP to a gateway on 127.0.0.1 that answers with recorded-style SSE. What the
gateway received must satisfy the provider's rules, and what was charged must be the price table's
figure for the tokens the gateway reported."""
import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from groundchat_testkit.providers import assert_openai_messages
from tests.chat_function.conftest import parse_sse


def _chunks(*deltas, finish, usage):
    lines = []
    for delta in deltas:
        lines.append({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    lines.append({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines.append({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"


TOOL_ROUND = _chunks(
    {"role": "assistant", "content": None, "tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                                                           "function": {"name": "compare_contexts", "arguments": ""}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": "{\"context\": "}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": "\"full\"}"}}]},
    finish="tool_calls", usage={"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230},
)
ANSWER = _chunks(
    {"role": "assistant", "content": "Full context: "}, {"content": "3.5 violations per run."},
    finish="stop", usage={"prompt_tokens": 1500, "completion_tokens": 12, "total_tokens": 1512},
)


@pytest.fixture
def gateway():
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            received.append({"path": self.path, "auth": self.headers.get("authorization"), "body": body})
            reply = TOOL_ROUND if len(received) == 1 else ANSWER
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.write(reply.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", received
    server.shutdown()


async def test_a_question_through_an_openai_compatible_gateway(dynamo, settings, monkeypatch, gateway):
    from chat_function.app import create_app
    from groundchat.services import Services
    from groundchat.store import usage as usage_store
    from groundchat.store.tables import USAGE
    from tests.chat_function.conftest import TEST_TOOLS

    base_url, received = gateway
    monkeypatch.setattr(settings, "model", "openai:gpt-4.1-mini")
    monkeypatch.setattr(settings, "openai_base_url", base_url)
    monkeypatch.setattr(settings, "openai_api_key", "sk-test-key-0123456789")
    services = Services(settings=settings, dynamo=dynamo, tools_override=TEST_TOOLS)
    services.users.table.put_item(Item={"user_id": "alice", "grants": {"chat.use", "runs.read"}})
    from groundchat.auth.tokens import issue_dev_token

    headers = {"authorization": f"Bearer {issue_dev_token(settings, 'alice')}"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(services)), base_url="http://t") as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "Which context level is best?"}, headers=headers)
    frames = parse_sse(r.text)
    # Each model step is framed by its `step` frames (start, finish): two steps here.
    assert [f[1]["phase"] for f in frames if f[0] == "step"] == ["start", "finish", "start", "finish"]
    frames = [f for f in frames if f[0] != "step"]
    # The call's arguments as the gateway streamed them, piece by piece, then the call itself.
    assert [f[0] for f in frames] == ["start", "tool-input-delta", "tool-input-delta", "tool-call", "tool-result", "text", "text",
                                      "citations", "done"]
    assert [f[1]["delta"] for f in frames[1:3]] == ["{\"context\": ", "\"full\"}"]
    frames = [f for f in frames if f[0] != "tool-input-delta"]
    assert frames[1][1] == {"id": "call_abc", "name": "compare_contexts", "args": {"context": "full"}}
    assert frames[-1][1]["reason"] == "complete"

    # What the gateway saw: the key, the model, our tools, and a transcript it accepts.
    assert [x["path"] for x in received] == ["/v1/chat/completions", "/v1/chat/completions"]
    assert received[0]["auth"] == "Bearer sk-test-key-0123456789"
    first, second = received[0]["body"], received[1]["body"]
    assert first["model"] == "gpt-4.1-mini" and first["stream"] is True
    assert [t["function"]["name"] for t in first["tools"]] == ["compare_contexts"]
    assert_openai_messages(second["messages"])
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_abc"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_abc", "content": json.dumps(
        {"rows": [{"model": "m1", "context": "full", "mean_violations": 3.5, "cost_text": "$0.0126"}]})}

    # Charged exactly the table's price for the tokens the gateway reported ($0.40 / $1.60 per million).
    rows = usage_store.all_rows_sync(dynamo.client, dynamo.name(USAGE))
    model_rows = sorted((row for row in rows if row["kind"] == usage_store.KIND_MODEL_STEP), key=lambda row: row["input_tokens"])
    assert [(row["input_tokens"], row["output_tokens"]) for row in model_rows] == [(1200, 30), (1500, 12)]
    expected = [Decimal(1200) * Decimal("0.40") / 10**6 + Decimal(30) * Decimal("1.60") / 10**6,
                Decimal(1500) * Decimal("0.40") / 10**6 + Decimal(12) * Decimal("1.60") / 10**6]
    assert [Decimal(str(row["charged"])) for row in model_rows] == expected
