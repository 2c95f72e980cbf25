"""`/mcp` read by the MCP SDK's own client at each protocol revision the installed SDK speaks: the
current one (2026-07-28: no initialize handshake, no session, `server/discover`, the `Mcp-Method` /
`Mcp-Name` headers), the handshake revisions before it, and `auto` (discover, falling back); and a
browser-based host's CORS preflight with the new headers."""
from __future__ import annotations

import json

import httpx
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from tests.mcp_server.conftest import GRANTS, started

MODES = ["legacy", "auto", *MODERN_PROTOCOL_VERSIONS]


async def _list_and_call(served, user: str, mode: str):
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers=served.headers(user), timeout=30) as http:
        async with Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode=mode) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            rule = await client.call_tool("explain_rule", {"rule_id": "color-contrast"})
            forced = await client.call_tool("list_runs", {"limit": 2})
            return client.protocol_version, tools, rule, forced


def test_the_installed_sdk_speaks_the_current_revision_and_the_handshake_ones():
    # What this file covers: if the SDK drops or adds a revision, this says so before the others run.
    assert "2026-07-28" in MODERN_PROTOCOL_VERSIONS
    assert {"2025-03-26", "2025-06-18", "2025-11-25"} <= set(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_of_each_revision_lists_and_calls_the_tools_with_the_same_permissions(serve, mode):
    served = await started(serve())
    version, dora_tools, rule, forced = await _list_and_call(served, "dora", mode)
    expected = "2025-11-25" if mode == "legacy" else "2026-07-28"  # auto: the server speaks the current one
    assert version == expected
    assert dora_tools == ["explain_rule", "search_docs"]  # no runs.read: no data tool, at every revision
    assert rule.is_error is not True and "color-contrast" in rule.content[0].text
    assert forced.is_error is True and "not available to this caller" in forced.content[0].text
    _, ana_tools, _, allowed = await _list_and_call(served, "ana", mode)
    assert "list_runs" in ana_tools and allowed.is_error is not True
    assert len(json.loads(allowed.content[0].text)["runs"]) <= 2


async def test_a_browser_hosts_preflight_with_the_current_revisions_headers_passes(serve, monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_ALLOWED_ORIGINS", "https://host.example")
    served = await started(serve())
    asked = "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name"
    async with httpx.AsyncClient(base_url=served.url) as client:
        ok = await client.options("/mcp", headers={"origin": "https://host.example", "access-control-request-method": "POST",
                                                   "access-control-request-headers": asked})
        other = await client.options("/mcp", headers={"origin": "https://evil.example", "access-control-request-method": "POST",
                                                      "access-control-request-headers": asked})
        unknown = await client.options("/mcp", headers={"origin": "https://host.example", "access-control-request-method": "POST",
                                                        "access-control-request-headers": "x-made-up"})
    assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == "https://host.example"
    allowed = {h.strip() for h in ok.headers["access-control-allow-headers"].lower().split(",")}
    assert {"mcp-method", "mcp-name", "mcp-protocol-version", "mcp-session-id", "authorization"} <= allowed
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
    assert unknown.status_code == 400  # the list is a list, not a mirror of what is asked


async def test_the_current_revisions_requests_carry_its_headers_and_are_answered_to_an_allowed_origin(serve, monkeypatch):
    """The SDK's own client, sending what a browser host sends (its Origin): every request of the
    current revision names its method in `Mcp-Method`, none opens a session, and every answer
    allows the origin, so the browser hands it to the host."""
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    monkeypatch.setenv("GROUNDCHAT_ALLOWED_ORIGINS", "https://host.example")
    served = await started(serve())
    seen: list[tuple[dict, dict]] = []

    async def keep(response) -> None:
        seen.append((dict(response.request.headers), dict(response.headers)))

    async with httpx2.AsyncClient(headers={**served.headers("dora"), "origin": "https://host.example"}, timeout=30,
                                  event_hooks={"response": [keep]}) as http:
        async with Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode="2026-07-28") as client:
            await client.list_tools()
            await client.call_tool("explain_rule", {"rule_id": "color-contrast"})
    methods = [sent.get("mcp-method") for sent, _ in seen]
    assert "tools/list" in methods and "tools/call" in methods, methods
    assert any(sent.get("mcp-name") == "explain_rule" for sent, _ in seen)
    assert all(got.get("access-control-allow-origin") == "https://host.example" for _, got in seen)
    assert not any("mcp-session-id" in got for _, got in seen)


assert set(GRANTS) == {"ana", "dora"}  # the two callers the tests above compare
