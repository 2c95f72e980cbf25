"""One question through every client groundchat speaks: our SSE frames, the JSON answer, the AI
SDK's UI message stream (read by the SDK's own chat) and MCP (where it is the tool call the answer
made). The same tools with the same arguments, the same verified refs and the same cost."""
from __future__ import annotations

import json
from decimal import Decimal

import httpx

from tests.chat_function.ai_sdk_support import new_chat_id, parts_of, read_with_sdk, require_ai_sdk
from tests.chat_function.conftest import parse_sse
from tests.mcp_server.conftest import started

QUESTION = "What does WCAG say about a visible keyboard focus?"
META = "groundchat/"


async def test_sse_json_ai_sdk_and_mcp_give_the_same_tools_refs_and_cost(serve):
    sdk = require_ai_sdk()
    served = await started(serve())
    headers = served.headers("ana")
    async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=60) as client:
        frames = parse_sse((await client.post("/api/chat", json={"message": QUESTION, "stream": True})).text)
        answer = (await client.post("/api/chat", json={"message": QUESTION, "stream": False})).json()

    sse_calls = [(d["name"], d["args"]) for kind, d in frames if kind == "tool-call"]
    sse_refs = sorted(s["ref"] for kind, d in frames if kind == "citations" for s in d["sources"])
    sse_cost = next(d["cost"] for kind, d in frames if kind == "done")
    # The question is answered from a search, with refs to cite, and the search costs something.
    assert sse_calls and any(name == "search_docs" for name, _ in sse_calls)
    assert sse_refs and Decimal(sse_cost) > 0

    assert [(c["name"], c["args"]) for c in answer["tool_calls"]] == sse_calls
    assert sorted(s["ref"] for s in answer["sources"]) == sse_refs
    assert answer["cost"] == sse_cost

    read = read_with_sdk(sdk, served.url, headers["Authorization"].removeprefix("Bearer "), new_chat_id(), [QUESTION])
    [turn] = read["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    message = turn["message"]
    sdk_calls = [(p["type"].removeprefix("tool-"), p["input"]) for p in message["parts"] if p["type"].startswith("tool-")]
    assert sdk_calls == sse_calls
    assert sorted(p["sourceId"] for p in message["parts"] if p["type"].startswith("source-")) == sse_refs
    assert parts_of(message, "data-cost")[0]["data"]["cost"] == sse_cost

    # MCP is the tool call itself: the same calls give the excerpts the refs were verified against,
    # and cost what the answer's searches cost (the offline answerer's steps cost nothing).
    async with served.session("ana") as session:
        results = [await session.call_tool(name, args) for name, args in sse_calls]
    returned = {e["ref"] for r in results for e in json.loads(r.content[0].text).get("excerpts", [])}
    assert set(sse_refs) <= returned
    assert sum(Decimal(r.meta[f"{META}cost"]) for r in results) == Decimal(sse_cost)
