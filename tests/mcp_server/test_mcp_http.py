"""`/mcp` served for real and read with the MCP SDK's own client: the tools each caller may use
(the registry's, through the same `can`), each call's result, a denied call, a cap reached, the
trace of a call, and the 401 that names the protected-resource metadata."""
from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from groundchat.tools.catalog import all_tools
from tests.mcp_server.conftest import started

DATA_TOOLS = ["compare_contexts", "list_runs", "get_run", "top_rules"]
DOCS_TOOLS = ["explain_rule", "search_docs"]
META = "groundchat/"


def _json(result) -> dict:
    [content] = result.content
    return json.loads(content.text)


async def test_a_user_without_runs_read_sees_no_data_tool_and_a_forced_call_is_refused(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        ana_tools = [t.name for t in (await ana.list_tools()).tools]
    async with served.session("dora") as dora:
        dora_tools = [t.name for t in (await dora.list_tools()).tools]
        forced = await dora.call_tool("list_runs", {"limit": 2})
    # The catalog's order; the view and recall tools belong to an answer of ours, never to a host.
    assert ana_tools == [*DATA_TOOLS, *DOCS_TOOLS]
    assert dora_tools == ["explain_rule", "search_docs"]
    assert forced.is_error is True
    assert forced.content[0].text == "error: tool 'list_runs' is not available to this caller"
    assert forced.structured_content is None
    trace = await served.services.traces.get(forced.meta[f"{META}run_id"], "dora")
    assert trace["outcome"] == "refused" and trace["steps"][0]["outcome"] == "refused"


async def test_answer_only_tools_are_refused_to_a_host_even_with_their_permission(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        view = await ana.call_tool("show_view", {"title": "x", "parts": []})
        recall = await ana.call_tool("search_my_conversations", {"query": "contrast"})
    assert view.is_error and view.content[0].text == "error: tool 'show_view' is not available to this caller"
    assert recall.is_error and "not available to this caller" in recall.content[0].text


async def test_each_input_schema_is_the_tools_own_input_model_schema(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        listed = {t.name: t for t in (await ana.list_tools()).tools}
    models = {t.name: t.input_model for t in all_tools()}
    assert {name: t.input_schema for name, t in listed.items()} == {name: models[name].model_json_schema() for name in listed}
    assert listed["list_runs"].input_schema["properties"]["limit"]["maximum"] >= 1
    assert all(t.annotations.read_only_hint for t in listed.values())


async def test_each_tool_answers_what_the_registry_answers_with_its_refs_and_cost_text(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        compared = await ana.call_tool("compare_contexts", {})
        listed = await ana.call_tool("list_runs", {"limit": 2})
        run_id = _json(listed)["runs"][0]["run_id"]
        run = await ana.call_tool("get_run", {"run_id": run_id})
        rules = await ana.call_tool("top_rules", {"limit": 3})
        rule = await ana.call_tool("explain_rule", {"rule_id": "color-contrast"})
        found = await ana.call_tool("search_docs", {"query": "contrast ratio of text", "source": "wcag22"})
    for result in (compared, listed, run, rules, rule, found):
        assert result.is_error is False
        assert _json(result) == result.structured_content  # the text is the JSON the structure holds
    rows = _json(compared)["rows"]
    assert rows and all(row["mean_cost_text"].startswith("$") for row in rows)
    assert len(_json(listed)["runs"]) == 2
    assert _json(run)["run_id"] == run_id
    counts = [r["count"] for r in _json(rules)["rules"]]
    assert len(counts) == 3 and counts == sorted(counts, reverse=True)
    [criterion] = _json(rule)["criteria"]
    assert criterion["number"] == "1.4.3" and len(criterion["ref"]) == 8
    hit = _json(found)
    assert hit["outcome"] == "hit" and hit["excerpts"][0]["section"] == "1.4.3"
    assert hit["excerpts"][0]["ref"] == criterion["ref"]  # one chunk, one ref, whichever tool finds it
    # Only the search cost anything: its rerank, as in a chat answer.
    assert found.meta[f"{META}cost"] == "0.001" and found.meta[f"{META}cost_text"] == "$0.001"
    assert rules.meta[f"{META}cost"] == "0" and rules.meta[f"{META}cost_text"] == "$0.00"
    # The data tool's result is the registry's own, for the same caller and arguments.
    from groundchat.auth.callers import Caller

    direct = await served.services.registry.execute("top_rules", {"limit": 3}, served.services.tool_context(Caller(id="ana")))
    assert _json(rules) == json.loads(json.dumps(direct))


async def test_invalid_arguments_are_an_error_result_naming_the_field(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        bad = await ana.call_tool("list_runs", {"limit": 0})
    assert bad.is_error and bad.content[0].text.startswith("error: invalid arguments: limit:")


async def test_a_host_narrows_a_calls_searches_in_its_meta_as_the_json_api_does(serve):
    served = await started(serve())
    query = {"query": "contrast ratio of text"}
    async with served.session("dora") as dora:
        whole = await dora.call_tool("search_docs", query)
        two = await dora.call_tool("search_docs", query, meta={f"{META}search": {"top_k": 2}})
        keyword_only = await dora.call_tool("search_docs", query, meta={f"{META}search": {"include_vector": False}})
        over = await dora.call_tool("search_docs", query, meta={f"{META}search": {"top_k": 9}})
        not_a_count = await dora.call_tool("search_docs", query, meta={f"{META}search": {"top_k": "2"}})
        unknown = await dora.call_tool("search_docs", query, meta={f"{META}search": {"k": 2}})
    excerpts = _json(whole)["excerpts"]
    assert len(excerpts) > 2
    # The first two of the same search: a narrowing, not another ranking.
    assert [e["ref"] for e in _json(two)["excerpts"]] == [e["ref"] for e in excerpts[:2]]
    trace = await served.services.traces.get(keyword_only.meta[f"{META}run_id"], "dora")
    assert "vector" not in trace["steps"][0]["debug"]["legs_ran"]
    assert trace["steps"][0]["debug"]["request"] == {"include_vector": False}
    assert over.is_error and over.content[0].text == "error: _meta groundchat/search: top_k is at most 8 excerpts per search here"
    assert not_a_count.is_error and not_a_count.content[0].text.startswith("error: _meta groundchat/search: top_k:")
    assert unknown.is_error and "k: Extra inputs are not permitted" in unknown.content[0].text
    assert over.meta[f"{META}cost"] == "0"  # refused before the search was charged


async def test_a_search_past_the_cap_is_an_error_result_saying_the_cap_was_reached(serve, dynamo):
    from groundchat.store import budget_counters as bc
    from tests.spending.helpers import counter, usage_rows

    served = await started(serve(budget_usd="0.0015"))
    async with served.session("dora") as dora:
        first = await dora.call_tool("search_docs", {"query": "contrast ratio"})
        second = await dora.call_tool("search_docs", {"query": "pointer target size"})
        still = await dora.list_tools()  # the session goes on: a cap is a result, not a failure
    assert first.is_error is False and first.meta[f"{META}cost"] == "0.001"
    assert second.is_error is True
    assert second.content[0].text.startswith("error: spend-cap: The chat's spending cap of $0.0015")
    assert "is reached" in second.content[0].text
    assert second.meta[f"{META}cost"] == "0"
    assert [t.name for t in still.tools] == DOCS_TOOLS
    # Charged once, refused once: the counter and the usage rows say exactly that.
    assert counter(dynamo, bc.CHAT_SCOPE).spent == Decimal("0.001")
    assert [r["caller"] for r in usage_rows(dynamo)] == ["dora"]
    trace = await served.services.traces.get(second.meta[f"{META}run_id"], "dora")
    assert trace["outcome"] == "spend-cap" and trace["steps"][0]["error_detail"] == "SpendCapReached: chat"


async def test_every_call_is_traced_with_its_caller_tool_args_summary_and_cost(serve):
    served = await started(serve())
    async with served.session("ana") as ana:
        found = await ana.call_tool("search_docs", {"query": "contrast ratio of text"})
    run_id = found.meta[f"{META}run_id"]
    async with httpx.AsyncClient(base_url=served.url) as client:
        trace = (await client.get(f"/api/traces/{run_id}", headers=served.headers("ana"))).json()
        someone_else = await client.get(f"/api/traces/{run_id}", headers=served.headers("dora"))
    assert someone_else.status_code == 404  # a trace is its caller's
    assert trace["caller"] == "ana" and trace["outcome"] == "complete" and trace["failure"] is None
    [step] = trace["steps"]
    refs = sorted({e["ref"] for e in _json(found)["excerpts"]})
    assert (step["kind"], step["name"], step["args"], step["outcome"]) == ("tool", "search_docs", {"query": "contrast ratio of text"}, "ok")
    assert (step["client"], step["cost"], step["cost_text"]) == ("mcp", "0.001", "$0.001")
    assert step["summary"] == {"refs": refs, "outcome": "hit", "keys": sorted(_json(found))}
    assert refs and {"excerpts", "freshness", "outcome"} <= set(step["summary"]["keys"])
    assert step["debug"]["backend"] == "embedded"  # the search's own debug record, as in an answer's trace
    assert trace["question"] == 'MCP search_docs {"query": "contrast ratio of text"}'


async def test_no_token_is_401_pointing_at_the_protected_resource_metadata(serve):
    served = await started(serve())
    metadata_url = f"{served.url}/.well-known/oauth-protected-resource/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx.AsyncClient(base_url=served.url) as client:
        missing = await client.post("/mcp", json=body)
        forged = await client.post("/mcp", json=body, headers={"Authorization": "Bearer not-a-token"})
        metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
        bare = await client.get("/.well-known/oauth-protected-resource")
    for refused in (missing, forged):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
        assert refused.json()["error"]["code"] == "unauthenticated"
    # Dev tokens come from `groundchat token`, not from an authorization server: none is named.
    assert metadata.json() == bare.json() == {"resource": f"{served.url}/mcp", "bearer_methods_supported": ["header"],
                                               "resource_name": served.services.settings.bot_name}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_a_stateless_server_has_no_session_to_open_or_end(serve, method):
    served = await started(serve())
    async with httpx.AsyncClient(base_url=served.url) as client:
        answer = await client.request(method, "/mcp", headers=served.headers("ana"))
    assert answer.status_code == 405


# ---- where a request comes from, and what a malformed one is told -------------------------------

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("origin", ["https://evil.example", "http://127.0.0.1:8000", "null", "https://host.example.evil",
                                    "https://HOST.example:8443"])
async def test_a_page_on_a_foreign_origin_is_403_before_anything_else(serve, monkeypatch, origin):
    monkeypatch.setenv("GROUNDCHAT_ALLOWED_ORIGINS", "https://host.example, https://other.example:8443")
    served = await started(serve())
    async with httpx.AsyncClient(base_url=served.url) as client:
        signed = await client.post("/mcp", json=LIST, headers={**served.headers("ana"), **MCP_HEADERS, "origin": origin})
        unsigned = await client.post("/mcp", json=LIST, headers={**MCP_HEADERS, "origin": origin})
    for refused in (signed, unsigned):
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "forbidden-origin"
        assert "GROUNDCHAT_ALLOWED_ORIGINS" in refused.json()["error"]["message"]
        assert "www-authenticate" not in refused.headers  # nothing about signing in goes to a foreign page


@pytest.mark.parametrize("origin", [None, "https://host.example", "https://HOST.example:443/", "https://other.example:8443"])
async def test_a_listed_origin_or_none_at_all_is_served(serve, monkeypatch, origin):
    monkeypatch.setenv("GROUNDCHAT_ALLOWED_ORIGINS", "https://host.example, https://other.example:8443")
    served = await started(serve())
    sent = {**served.headers("ana"), **MCP_HEADERS, **({"origin": origin} if origin else {})}
    async with httpx.AsyncClient(base_url=served.url) as client:
        listed = await client.post("/mcp", json=LIST, headers=sent)
    assert listed.status_code == 200, listed.text
    assert [t["name"] for t in listed.json()["result"]["tools"]] == [*DATA_TOOLS, *DOCS_TOOLS]


@pytest.mark.parametrize("body, code, message", [
    ("not json", -32700, "Parse error: the body is not JSON"),
    ('{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}', -32600, "Invalid request: jsonrpc: Input should be '2.0'"),
    ('{"jsonrpc": "2.0", "id": 7, "method": 5}', -32600, "Invalid request: method: Input should be a valid string"),
    ("[1, 2]", -32600, "Invalid request: send one JSON-RPC message per POST, not a batch"),
    ('"tools/list"', -32600, "Invalid request: a JSON-RPC message is a JSON object"),
], ids=["not-json", "old-version", "method-not-text", "batch", "not-an-object"])
async def test_a_malformed_message_is_told_in_one_short_line_without_the_sdks_internals(serve, body, code, message):
    served = await started(serve())
    async with httpx.AsyncClient(base_url=served.url) as client:
        refused = await client.post("/mcp", content=body, headers={**served.headers("ana"), **MCP_HEADERS})
    assert refused.status_code == 400
    assert refused.json() == {"jsonrpc": "2.0", "id": 7 if '"id": 7' in body else None,
                              "error": {"code": code, "message": message}}
    for internal in ("pydantic", "validation errors for", "union[", "input_value", "JSONRPCRequest"):
        assert internal not in refused.text
